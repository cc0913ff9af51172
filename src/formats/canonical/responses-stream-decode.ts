import { asObject, asString, type Json } from '../convert/json.ts';
import type { ToolNames } from '../convert/tool-names.ts';
import { responsesStop, responsesUsage } from './responses-answer.ts';
import { reasoningFromUpstream } from './responses-reasoning.ts';
import type { CanonicalEvent, StreamDecoder } from './stream.ts';

/**
 * Responses stream events → canonical (responses-api.md §4, §7.5). A message item's text and
 * refusal parts are text blocks; a reasoning item is a reasoning block whose summary parts are
 * its text (a blank line between them) and whose finished item is the signature carried back
 * (responses-reasoning.ts); a function call is a tool call with its `call_id`. Items of tools
 * OpenAI ran itself have no canonical kind and are left out. The upstream never interleaves
 * items, so neither do the blocks.
 */
interface Open {
  readonly index: number;
  readonly kind: 'text' | 'reasoning' | 'call';
  /** Whether deltas carried its content (else `output_item.done` does). */
  streamed: boolean;
}

export class ResponsesStreamDecoder implements StreamDecoder {
  readonly #toolNames: ToolNames;
  #next = 0;
  /** Open blocks by output_index (text: by output_index and content_index). */
  readonly #open = new Map<string, Open>();
  #called = false;

  constructor(toolNames: ToolNames) {
    this.#toolNames = toolNames;
  }

  #begin(key: string, kind: Open['kind'], block: Extract<CanonicalEvent, { type: 'block' }>['block'], out: CanonicalEvent[]): Open {
    const open = { index: this.#next++, kind, streamed: false };
    this.#open.set(key, open);
    out.push({ type: 'block', index: open.index, block });
    return open;
  }

  push(event: Json, out: CanonicalEvent[]): void {
    const type = event['type'];
    const item = String(event['output_index']);
    switch (type) {
      case 'response.created': {
        const response = asObject(event['response']);
        out.push({ type: 'start', id: asString(response['id']), model: asString(response['model']) });
        return;
      }
      case 'response.output_item.added': {
        const added = asObject(event['item']);
        if (added['type'] === 'reasoning') this.#begin(item, 'reasoning', { type: 'reasoning' }, out);
        else if (added['type'] === 'function_call') {
          this.#called = true;
          const name = this.#toolNames.client(asString(added['name']) ?? '');
          this.#begin(item, 'call', { type: 'tool_call', id: asString(added['call_id']) ?? '', name }, out);
        }
        return;
      }
      case 'response.content_part.added': {
        const refusal = asObject(event['part'])['type'] === 'refusal';
        this.#begin(`${item}:${String(event['content_index'])}`, 'text', { type: refusal ? 'refusal' : 'text' }, out);
        return;
      }
      case 'response.output_text.delta':
      case 'response.refusal.delta': {
        const open = this.#open.get(`${item}:${String(event['content_index'])}`);
        const text = asString(event['delta']);
        if (open && text) out.push({ type: 'text', index: open.index, text });
        return;
      }
      case 'response.content_part.done': {
        const key = `${item}:${String(event['content_index'])}`;
        const open = this.#open.get(key);
        if (open) out.push({ type: 'block_stop', index: open.index });
        this.#open.delete(key);
        return;
      }
      case 'response.reasoning_summary_part.added': {
        const open = this.#open.get(item);
        if (open && open.streamed) out.push({ type: 'reasoning', index: open.index, text: '\n\n' });
        return;
      }
      case 'response.reasoning_summary_text.delta':
      case 'response.function_call_arguments.delta': {
        const open = this.#open.get(item);
        const delta = asString(event['delta']);
        if (!open || !delta) return;
        open.streamed = true;
        out.push(open.kind === 'call' ? { type: 'arguments', index: open.index, json: delta } : { type: 'reasoning', index: open.index, text: delta });
        return;
      }
      case 'response.output_item.done':
        this.#done(item, asObject(event['item']), out);
        return;
      case 'response.completed':
      case 'response.incomplete': {
        const response = asObject(event['response']);
        out.push({ type: 'stop', stop: responsesStop(response, this.#called), stopSequence: undefined, usage: responsesUsage(asObject(response['usage'])) });
        return;
      }
      default:
        return; // in_progress, annotations, hosted tools' progress
    }
  }

  end(): void {
    // The parser ends only after a terminal event: everything has been said.
  }

  #done(key: string, item: Json, out: CanonicalEvent[]): void {
    const open = this.#open.get(key);
    if (!open) return;
    this.#open.delete(key);
    if (open.kind === 'reasoning') {
      const { text, signature } = reasoningFromUpstream(item);
      if (!open.streamed && text !== '') out.push({ type: 'reasoning', index: open.index, text });
      if (signature !== undefined) out.push({ type: 'signature', index: open.index, signature });
    } else if (open.kind === 'call' && !open.streamed) {
      const args = asString(item['arguments']);
      if (args) out.push({ type: 'arguments', index: open.index, json: args });
    }
    out.push({ type: 'block_stop', index: open.index });
  }
}
