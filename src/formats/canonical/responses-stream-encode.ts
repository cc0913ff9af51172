import type { Json } from '../convert/json.ts';
import type { ResponsesPosition } from '../../sse/encode.ts';
import { callItem, outputText, reasoningItem, responseOf, type ResponsesAnswerOptions } from './responses-answer.ts';
import type { CanonicalEvent, StreamEncoder } from './stream.ts';

/**
 * Canonical events → Responses stream events (responses-api.md §4, §7.5), in the order the
 * openai SDK's strict accumulator and Codex CLI check: `response.created` and
 * `response.in_progress` first; each item added, its parts added, delta'd and done, the item done
 * with its full content (Codex keeps only what `output_item.done` carries); one terminal event.
 * `sequence_number` runs 0, 1, 2…, `output_index` is the item's final position, every `item_id`
 * its item's id. Consecutive text blocks are parts of one message item; reasoning and each tool
 * call are items of their own. Item ids are the ones the whole answer would have
 * (responses-answer.ts), so a stored response reads the same either way.
 */
/** Only ever serialized, never changed: shared by every delta. */
const NO_LOGPROBS: readonly never[] = Object.freeze([]);

interface MessageState {
  readonly item: Json;
  /** Its parts, in order; a part still streaming holds its place. */
  readonly content: Json[];
  readonly outputIndex: number;
}

interface OpenItem {
  readonly kind: 'text' | 'refusal' | 'reasoning' | 'call';
  readonly id: string;
  readonly outputIndex: number;
  /** Text and refusal parts: their message and place in it. */
  readonly message?: MessageState;
  readonly contentIndex?: number;
  text: string;
  signature?: string;
  summaryOpen?: boolean;
  call?: { id: string; name: string; custom: boolean };
}

export class ResponsesStreamEncoder implements StreamEncoder {
  readonly #options: ResponsesAnswerOptions;
  readonly #base: string;
  #model: string;
  #sequence = 0;
  readonly #output: Json[] = [];
  /** The message item text blocks go into, while nothing else has followed. */
  #message: MessageState | null = null;
  /** The model refused: a refusal it said, not one a filter made (responses-answer.ts responseOf). */
  #refused = false;
  readonly #open = new Map<number, OpenItem>();
  #opening: Json | null = null;
  #final: Json | undefined;

  constructor(options: ResponsesAnswerOptions & { readonly model: string }) {
    this.#options = options;
    this.#model = options.model;
    this.#base = options.id.replace(/^resp_/, '');
  }

  #emit(out: Json[], type: string, fields: Json): void {
    out.push({ type, sequence_number: this.#sequence++, ...fields });
  }

  /** The whole response, once the stream has ended. */
  response(): Json | undefined {
    return this.#final;
  }

  /** Where the stream stands, for an in-band error (sse/encode.ts). */
  position(): ResponsesPosition {
    return { sequence: this.#sequence, responseId: this.#options.id };
  }

  /**
   * A keepalive the clients accept (responses-api.md §4.3): the lifecycle event
   * `response.in_progress` again. Comments do not reset Codex's idle timer, and unknown event
   * types throw in the strict openai SDK.
   */
  keepalive(): Json {
    const out: Json[] = [];
    this.#emit(out, 'response.in_progress', { response: this.#opening ?? {} });
    return out[0]!;
  }

  open(out: Json[]): void {
    const final = responseOf([], { model: this.#model, stop: 'end_turn', usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 }, blocks: [] }, this.#options);
    this.#opening = { ...final, status: 'in_progress', completed_at: null, usage: null };
    this.#emit(out, 'response.created', { response: this.#opening });
    this.#emit(out, 'response.in_progress', { response: this.#opening });
  }

  push(event: CanonicalEvent, out: Json[]): void {
    switch (event.type) {
      case 'block':
        this.#start(event.index, event.block, out);
        break;
      case 'text': {
        const open = this.#open.get(event.index);
        if (open?.kind === 'text') {
          open.text += event.text;
          // The per-token events are written out in full: no spread, one object each (hot path).
          out.push({ type: 'response.output_text.delta', sequence_number: this.#sequence++, item_id: open.id, output_index: open.outputIndex, content_index: open.contentIndex, delta: event.text, logprobs: NO_LOGPROBS });
        } else if (open?.kind === 'refusal') {
          open.text += event.text;
          out.push({ type: 'response.refusal.delta', sequence_number: this.#sequence++, item_id: open.id, output_index: open.outputIndex, content_index: open.contentIndex, delta: event.text });
        }
        break;
      }
      case 'reasoning': {
        const open = this.#open.get(event.index);
        if (open?.kind !== 'reasoning') break;
        const at = { item_id: open.id, output_index: open.outputIndex, summary_index: 0 };
        if (!open.summaryOpen) {
          open.summaryOpen = true;
          this.#emit(out, 'response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } });
        }
        open.text += event.text;
        out.push({ type: 'response.reasoning_summary_text.delta', sequence_number: this.#sequence++, ...at, delta: event.text });
        break;
      }
      case 'signature': {
        const open = this.#open.get(event.index);
        if (open?.kind === 'reasoning') open.signature = event.signature;
        break;
      }
      case 'arguments': {
        const open = this.#open.get(event.index);
        if (open?.kind !== 'call') break;
        open.text += event.json;
        // A freeform tool's input is free text inside the JSON: it goes out whole at the end.
        if (!open.call!.custom) out.push({ type: 'response.function_call_arguments.delta', sequence_number: this.#sequence++, item_id: open.id, output_index: open.outputIndex, delta: event.json });
        break;
      }
      case 'block_stop':
        this.#stop(event.index, out);
        break;
      case 'stop': {
        // Whatever a decoder left open is finished first: the final output never loses a part.
        for (const index of [...this.#open.keys()]) this.#stop(index, out);
        this.#closeMessage(out);
        const usage = event.usage ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 };
        const blocks = this.#refused ? [{ type: 'refusal' as const, text: '' }] : [];
        const response = responseOf(this.#output, { model: this.#model, stop: event.stop, usage, blocks }, this.#options);
        this.#final = response;
        this.#emit(out, response['status'] === 'incomplete' ? 'response.incomplete' : 'response.completed', { response });
        break;
      }
      case 'start':
        if (event.model) this.#model = event.model;
        break;
    }
  }

  #itemId(prefix: string): string {
    return `${prefix}_${this.#base}_${this.#output.length}`;
  }

  #start(index: number, block: Extract<CanonicalEvent, { type: 'block' }>['block'], out: Json[]): void {
    if (block.type === 'text' || block.type === 'refusal') {
      if (this.#message === null) {
        const item: Json = { id: this.#itemId('msg'), type: 'message', status: 'in_progress', role: 'assistant', content: [] };
        const outputIndex = this.#output.length;
        this.#output.push(item);
        this.#message = { item, content: [], outputIndex };
        this.#emit(out, 'response.output_item.added', { output_index: outputIndex, item: { ...item, content: [] } });
      }
      const message = this.#message;
      const id = String(message.item['id']);
      const part = block.type === 'refusal' ? { type: 'refusal', refusal: '' } : outputText('');
      const contentIndex = message.content.length;
      message.content.push(part);
      if (block.type === 'refusal') this.#refused = true;
      this.#open.set(index, { kind: block.type, id, outputIndex: message.outputIndex, message, contentIndex, text: '' });
      this.#emit(out, 'response.content_part.added', { item_id: id, output_index: message.outputIndex, content_index: contentIndex, part });
      return;
    }
    this.#closeMessage(out);
    const outputIndex = this.#output.length;
    if (block.type === 'tool_call') {
      const custom = this.#options.customTools?.has(block.name) === true;
      const id = this.#itemId(custom ? 'ctc' : 'fc');
      const shape = callItem(id, { id: block.id, name: block.name, arguments: '' }, this.#options);
      this.#output.push(shape);
      this.#open.set(index, { kind: 'call', id, outputIndex, text: '', call: { id: String(shape['call_id']), name: block.name, custom } });
      this.#emit(out, 'response.output_item.added', { output_index: outputIndex, item: { ...shape, status: 'in_progress' } });
      if (block.arguments) this.push({ type: 'arguments', index, json: block.arguments }, out);
      return;
    }
    const id = this.#itemId('rs');
    if (block.type === 'opaque_reasoning') {
      const item = reasoningItem(id, '', { data: block.data });
      this.#output.push(item);
      this.#emit(out, 'response.output_item.added', { output_index: outputIndex, item });
      this.#emit(out, 'response.output_item.done', { output_index: outputIndex, item });
      return;
    }
    this.#output.push({ id, type: 'reasoning', summary: [] });
    this.#open.set(index, { kind: 'reasoning', id, outputIndex, text: '' });
    this.#emit(out, 'response.output_item.added', { output_index: outputIndex, item: { id, type: 'reasoning', summary: [] } });
  }

  #stop(index: number, out: Json[]): void {
    const open = this.#open.get(index);
    if (!open) return;
    this.#open.delete(index);
    const { id, outputIndex, text } = open;
    if (open.kind === 'text' || open.kind === 'refusal') {
      const where = { item_id: id, output_index: outputIndex, content_index: open.contentIndex };
      const part = open.kind === 'refusal' ? { type: 'refusal', refusal: text } : outputText(text);
      if (open.kind === 'refusal') this.#emit(out, 'response.refusal.done', { ...where, refusal: text });
      else this.#emit(out, 'response.output_text.done', { ...where, text, logprobs: [] });
      this.#emit(out, 'response.content_part.done', { ...where, part });
      open.message!.content[open.contentIndex!] = part;
      return;
    }
    if (open.kind === 'reasoning') {
      if (open.summaryOpen) {
        const at = { item_id: id, output_index: outputIndex, summary_index: 0 };
        this.#emit(out, 'response.reasoning_summary_text.done', { ...at, text });
        this.#emit(out, 'response.reasoning_summary_part.done', { ...at, part: { type: 'summary_text', text } });
      }
      const item = reasoningItem(id, text, { signature: open.signature });
      this.#output[outputIndex] = item;
      this.#emit(out, 'response.output_item.done', { output_index: outputIndex, item });
      return;
    }
    const call = open.call!;
    const item = callItem(id, { id: call.id, name: call.name, arguments: text }, this.#options);
    const args = String(item['arguments'] ?? '');
    this.#output[outputIndex] = item;
    const at = { item_id: id, output_index: outputIndex };
    if (call.custom) {
      this.#emit(out, 'response.custom_tool_call_input.delta', { ...at, delta: item['input'] });
      this.#emit(out, 'response.custom_tool_call_input.done', { ...at, input: item['input'] });
    } else {
      this.#emit(out, 'response.function_call_arguments.done', { ...at, name: item['name'], arguments: args });
    }
    this.#emit(out, 'response.output_item.done', { output_index: outputIndex, item });
  }

  #closeMessage(out: Json[]): void {
    const message = this.#message;
    if (message === null) return;
    this.#message = null;
    message.item['status'] = 'completed';
    message.item['content'] = message.content;
    this.#emit(out, 'response.output_item.done', { output_index: message.outputIndex, item: message.item });
  }
}
