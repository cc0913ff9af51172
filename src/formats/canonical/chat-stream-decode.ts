import { ERR } from '../../errors.ts';
import { asArray, asObject, asString, type Json } from '../convert/json.ts';
import { reasoningPieces } from '../convert/reasoning.ts';
import { stopReasonFromFinish } from '../convert/stop-reason.ts';
import { argumentsText, newToolUseId, safeToolUseId, type ToolNames } from '../convert/tool-names.ts';
import { canonicalUsageFromChat } from '../convert/usage.ts';
import { imagesAsMarkdown, textOf } from './chat-answer.ts';
import type { CanonicalUsage } from './answer.ts';
import type { CanonicalEvent, CanonicalStreamBlock, StreamDecoder } from './stream.ts';

/**
 * Chat Completions chunks → canonical events: the state machine of protocol.md §D.8.
 * - Blocks open lazily, one at a time; a role-only or empty delta opens nothing. Reasoning items
 *   with different indices are different reasoning blocks, each with its signature.
 * - The first tool call streams live. Later ones are held and sent whole at the finish: a Chat
 *   upstream may interleave the arguments of parallel calls, and canonical blocks never
 *   interleave (stream.ts rule 11; §D.8 step 7). A new id at a known index is a new call.
 * - A non-empty finish_reason closes the open block; `stop` waits for the usage chunk
 *   (OpenRouter repeats finish_reason there, so finishing is idempotent) or the end; chunks
 *   after it are dropped (§D.8 step 9).
 */
interface OpenBlock {
  readonly kind: CanonicalStreamBlock['type'];
  readonly index: number;
  /** For reasoning blocks: the upstream's reasoning item index, when it gave one. */
  readonly item?: number | undefined;
}
interface ToolCall {
  readonly upstreamId: string | undefined;
  readonly id: string;
  name: string;
  /** Arguments not sent yet (everything, for a held call). */
  pending: string;
  /** Only the first call streams live; the rest are held until the finish. */
  readonly live: boolean;
  /** Its block, once started. */
  block: number | null;
}

export class ChatStreamDecoder implements StreamDecoder {
  readonly #toolNames: ToolNames;
  readonly #provider: string;
  #next = 0;
  #open: OpenBlock | null = null;
  readonly #calls: ToolCall[] = [];
  readonly #callByIndex = new Map<number, ToolCall>();
  #started = false;
  #finishReason: string | null = null;
  #stopSequence: string | undefined;
  #refused = false;
  #usage: CanonicalUsage | undefined;
  #done = false;

  constructor(toolNames: ToolNames, provider: string) {
    this.#toolNames = toolNames;
    this.#provider = provider;
  }

  push(chunk: Json, out: CanonicalEvent[]): void {
    if (this.#done) return;
    if (!this.#started) {
      this.#started = true;
      out.push({ type: 'start', id: asString(chunk['id']), model: asString(chunk['model']) });
    }
    if (chunk['usage'] !== undefined && chunk['usage'] !== null) this.#usage = canonicalUsageFromChat(asObject(chunk['usage']));
    const choice = asObject(asArray(chunk['choices'])[0]);
    const delta = asObject(choice['delta']);

    for (const piece of reasoningPieces(delta)) {
      if (piece.kind === 'encrypted') {
        this.#start({ type: 'opaque_reasoning', data: piece.value }, out);
        this.#close(out);
        continue;
      }
      // A signature with no reasoning before it still needs a block to travel in.
      const index = this.#reasoningBlock(piece.index, out);
      out.push(piece.kind === 'text' ? { type: 'reasoning', index, text: piece.value } : { type: 'signature', index, signature: piece.value });
    }

    const refusal = asString(delta['refusal']);
    if (refusal) this.#refused = true;
    this.#text('text', textOf(delta['content']), out);
    this.#text('refusal', refusal, out);
    this.#text('text', imagesAsMarkdown(delta['images']), out);

    for (const raw of asArray(delta['tool_calls'])) this.#toolCall(asObject(raw), out);

    const reason = asString(choice['finish_reason']);
    if (reason) {
      this.#finishReason = reason;
      // vLLM names the stop string that matched (peers.md §2 #20).
      if (reason === 'stop' && asString(choice['stop_reason'])) this.#stopSequence = asString(choice['stop_reason']);
      this.#close(out);
      this.#flushHeld(out);
    }
    if (this.#finishReason !== null && this.#usage !== undefined) this.#finish(out);
  }

  end(out: CanonicalEvent[]): void {
    if (!this.#started) out.push({ type: 'start' });
    if (!this.#done) this.#finish(out);
  }

  /** Text into the open block of its kind, or a new one; never an empty block or delta. */
  #text(kind: 'text' | 'refusal', text: string | undefined, out: CanonicalEvent[]): void {
    if (!text) return;
    const index = this.#open?.kind === kind ? this.#open.index : this.#start({ type: kind }, out);
    out.push({ type: 'text', index, text });
  }

  #toolCall(part: Json, out: CanonicalEvent[]): void {
    const fn = asObject(part['function']);
    const upstreamId = asString(part['id']) || undefined;
    const position = typeof part['index'] === 'number' ? part['index'] : undefined;
    let call = position === undefined ? this.#calls.at(-1) : this.#callByIndex.get(position);
    if (!call || (upstreamId !== undefined && call.upstreamId !== undefined && upstreamId !== call.upstreamId)) {
      const id = upstreamId === undefined ? newToolUseId() : safeToolUseId(upstreamId);
      call = { upstreamId, id, name: '', pending: '', live: this.#calls.length === 0, block: null };
      this.#calls.push(call);
      if (position !== undefined) this.#callByIndex.set(position, call);
    }
    if (!call.name) call.name = asString(fn['name']) ?? '';
    call.pending += argumentsText(fn['arguments']);
    if (!call.live) return; // held until the finish
    if (call.block === null) {
      call.block = this.#start(this.#callBlock(call), out);
    } else if (this.#open?.index !== call.block) {
      if (call.pending === '') return;
      // Its block closed when other content arrived; emitting now would break the block order
      // and dropping would corrupt the input. Fail loudly (§D.8 step 7).
      throw ERR.upstreamInvalid(this.#provider, 'it sent tool arguments after other content had followed them');
    }
    if (call.pending !== '') {
      out.push({ type: 'arguments', index: call.block, json: call.pending });
      call.pending = '';
    }
  }

  #callBlock(call: ToolCall): CanonicalStreamBlock {
    return { type: 'tool_call', id: call.id, name: this.#toolNames.client(call.name) };
  }

  #close(out: CanonicalEvent[]): void {
    if (this.#open) out.push({ type: 'block_stop', index: this.#open.index });
    this.#open = null;
  }

  /** Opens a block (closing the open one) and returns its index. */
  #start(block: CanonicalStreamBlock, out: CanonicalEvent[], item?: number): number {
    this.#close(out);
    const index = this.#next++;
    this.#open = { kind: block.type, index, item };
    out.push({ type: 'block', index, block });
    return index;
  }

  #reasoningBlock(item: number | undefined, out: CanonicalEvent[]): number {
    const open = this.#open;
    const same = open?.kind === 'reasoning' && (item === undefined || open.item === undefined || open.item === item);
    return same && open ? open.index : this.#start({ type: 'reasoning' }, out, item);
  }

  /** Held calls, each sent whole: start, all its arguments, stop. */
  #flushHeld(out: CanonicalEvent[]): void {
    for (const call of this.#calls) {
      if (call.live || call.block !== null) continue;
      const index = this.#start(this.#callBlock(call), out);
      call.block = index;
      if (call.pending !== '') out.push({ type: 'arguments', index, json: call.pending });
      call.pending = '';
      this.#close(out);
    }
  }

  #finish(out: CanonicalEvent[]): void {
    this.#close(out);
    this.#flushHeld(out);
    this.#done = true;
    const stop = this.#refused ? 'refusal' : this.#stopSequence !== undefined ? 'stop_sequence' : stopReasonFromFinish(this.#finishReason);
    out.push({ type: 'stop', stop, stopSequence: this.#stopSequence, usage: this.#usage });
  }
}
