import { asObject, asString, type Json } from '../convert/json.ts';
import { canonicalUsageFromMessages } from '../convert/usage.ts';
import type { CanonicalStop } from './answer.ts';
import type { CanonicalEvent, CanonicalStreamBlock, StreamDecoder } from './stream.ts';

const STOPS: ReadonlySet<string> = new Set<CanonicalStop>(['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal', 'model_context_window_exceeded']);

/**
 * Messages stream events → canonical (protocol.md §A.8). Server-tool blocks are Anthropic's
 * bookkeeping and are left out (canonical/answer.ts rule 1), so blocks are renumbered. The forced
 * tool that emulates structured output (`jsonTool`) is the answer's text, and its tool_use stop
 * a natural end. Usage in message_delta is cumulative; null fields keep earlier values (§A.8).
 */
type Role = 'text' | 'json' | 'tool' | 'reasoning' | 'opaque';

export class MessagesStreamDecoder implements StreamDecoder {
  readonly #jsonTool: string | null;
  /** Upstream index → [canonical index, role]; absent for blocks left out. */
  readonly #blocks = new Map<number, { index: number; role: Role }>();
  #next = 0;
  #usage: Json = {};
  #answeredByJsonTool = false;

  constructor(jsonTool: string | null) {
    this.#jsonTool = jsonTool;
  }

  push(event: Json, out: CanonicalEvent[]): void {
    switch (event['type']) {
      case 'message_start': {
        const message = asObject(event['message']);
        this.#usage = { ...asObject(message['usage']) };
        out.push({ type: 'start', id: asString(message['id']), model: asString(message['model']) });
        break;
      }
      case 'content_block_start':
        this.#start(Number(event['index']), asObject(event['content_block']), out);
        break;
      case 'content_block_delta': {
        const known = this.#blocks.get(Number(event['index']));
        if (known) this.#delta(known.index, known.role, asObject(event['delta']), out);
        break;
      }
      case 'content_block_stop': {
        const known = this.#blocks.get(Number(event['index']));
        if (known) out.push({ type: 'block_stop', index: known.index });
        break;
      }
      case 'message_delta': {
        for (const [key, value] of Object.entries(asObject(event['usage']))) if (value !== null && value !== undefined) this.#usage[key] = value;
        const delta = asObject(event['delta']);
        const reason = asString(delta['stop_reason']) ?? 'end_turn';
        let stop: CanonicalStop = STOPS.has(reason) ? (reason as CanonicalStop) : 'end_turn';
        if (this.#answeredByJsonTool && stop === 'tool_use') stop = 'end_turn';
        out.push({ type: 'stop', stop, stopSequence: asString(delta['stop_sequence']), usage: canonicalUsageFromMessages(this.#usage) });
        break;
      }
      default:
        break; // ping, message_stop
    }
  }

  end(): void {
    // The parser ends only after message_stop: everything has been said.
  }

  #start(upstreamIndex: number, block: Json, out: CanonicalEvent[]): void {
    let role: Role;
    let start: CanonicalStreamBlock;
    // A start event may already carry content (the SDK keeps it); it is passed on as a delta.
    let prefilled = '';
    switch (block['type']) {
      case 'text':
        role = 'text';
        start = { type: 'text' };
        prefilled = asString(block['text']) ?? '';
        break;
      case 'thinking':
        role = 'reasoning';
        start = { type: 'reasoning' };
        prefilled = asString(block['thinking']) ?? '';
        break;
      case 'redacted_thinking':
        role = 'opaque';
        start = { type: 'opaque_reasoning', data: asString(block['data']) ?? '' };
        break;
      case 'tool_use': {
        const input = asObject(block['input']);
        prefilled = Object.keys(input).length > 0 ? JSON.stringify(input) : '';
        if (this.#jsonTool !== null && block['name'] === this.#jsonTool) {
          role = 'json';
          start = { type: 'text' };
          this.#answeredByJsonTool = true;
        } else {
          role = 'tool';
          start = { type: 'tool_call', id: asString(block['id']) ?? '', name: asString(block['name']) ?? '', ...(prefilled !== '' && { arguments: prefilled }) };
          prefilled = '';
        }
        break;
      }
      default:
        return; // server-tool blocks: left out
    }
    const index = this.#next++;
    this.#blocks.set(upstreamIndex, { index, role });
    out.push({ type: 'block', index, block: start });
    if (prefilled === '') return;
    if (role === 'reasoning') out.push({ type: 'reasoning', index, text: prefilled });
    else out.push({ type: 'text', index, text: prefilled });
  }

  #delta(index: number, role: Role, delta: Json, out: CanonicalEvent[]): void {
    switch (delta['type']) {
      case 'text_delta': {
        const text = asString(delta['text']);
        if (text && (role === 'text' || role === 'json')) out.push({ type: 'text', index, text });
        return;
      }
      case 'input_json_delta': {
        const json = asString(delta['partial_json']);
        if (!json) return;
        if (role === 'json') out.push({ type: 'text', index, text: json });
        else if (role === 'tool') out.push({ type: 'arguments', index, json });
        return;
      }
      case 'thinking_delta': {
        const text = asString(delta['thinking']);
        if (text && role === 'reasoning') out.push({ type: 'reasoning', index, text });
        return;
      }
      case 'signature_delta': {
        const signature = asString(delta['signature']);
        if (signature && role === 'reasoning') out.push({ type: 'signature', index, signature });
        return;
      }
      default:
        return; // citations_delta and anything newer have no canonical kind
    }
  }
}
