import type { Json } from '../convert/json.ts';
import { messagesUsageOf } from '../convert/usage.ts';
import type { CanonicalEvent, StreamEncoder } from './stream.ts';
import { jsonString } from '../json-string.ts';
import { TemplatedEvent } from '../templated-event.ts';

/**
 * Canonical events → Messages stream events (protocol.md §A.8). message_start and ping go first,
 * before the upstream has said anything: Claude Code reads the input estimate in message_start
 * for its context meter (peers.md §2 #24); the exact counts follow in message_delta.
 */
export interface MessagesStreamOptions {
  readonly messageId: string;
  readonly model: string;
  readonly inputTokensEstimate: number;
}

export class MessagesStreamEncoder implements StreamEncoder {
  readonly #options: MessagesStreamOptions;

  constructor(options: MessagesStreamOptions) {
    this.#options = options;
  }

  open(out: Json[]): void {
    const { messageId, model, inputTokensEstimate } = this.#options;
    out.push(
      {
        type: 'message_start',
        message: {
          id: messageId,
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: inputTokensEstimate, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        },
      },
      { type: 'ping' },
    );
  }

  push(event: CanonicalEvent, out: Json[]): void {
    switch (event.type) {
      case 'block': {
        const { block } = event;
        // Messages has no refusal block: a refusal is said as text.
        const content =
          block.type === 'text' || block.type === 'refusal'
            ? { type: 'text', text: '' }
            : block.type === 'reasoning'
              ? { type: 'thinking', thinking: '', signature: '' }
              : block.type === 'opaque_reasoning'
                ? { type: 'redacted_thinking', data: block.data }
                : { type: 'tool_use', id: block.id, name: block.name, input: {} };
        out.push({ type: 'content_block_start', index: event.index, content_block: content });
        if (block.type === 'tool_call' && block.arguments) out.push({ type: 'content_block_delta', index: event.index, delta: { type: 'input_json_delta', partial_json: block.arguments } });
        break;
      }
      case 'text':
        // A plugin's decoder feeds this too, unchecked: only a well-formed delta takes the template.
        out.push(typeof event.text === 'string' && Number.isInteger(event.index)
          ? new TextDelta(event.index, event.text)
          : { type: 'content_block_delta', index: event.index, delta: { type: 'text_delta', text: event.text } });
        break;
      case 'reasoning':
        out.push({ type: 'content_block_delta', index: event.index, delta: { type: 'thinking_delta', thinking: event.text } });
        break;
      case 'signature':
        out.push({ type: 'content_block_delta', index: event.index, delta: { type: 'signature_delta', signature: event.signature } });
        break;
      case 'arguments':
        out.push({ type: 'content_block_delta', index: event.index, delta: { type: 'input_json_delta', partial_json: event.json } });
        break;
      case 'block_stop':
        out.push({ type: 'content_block_stop', index: event.index });
        break;
      case 'stop': {
        const usage = event.usage
          ? messagesUsageOf(event.usage)
          : { input_tokens: this.#options.inputTokensEstimate, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
        out.push({ type: 'message_delta', delta: { stop_reason: event.stop, stop_sequence: event.stopSequence ?? null }, usage }, { type: 'message_stop' });
        break;
      }
      default:
        break; // start: message_start went out at open
    }
  }
}

/** `{ type: 'content_block_delta', index, delta: { type: 'text_delta', text } }`, written from its template. */
export class TextDelta extends TemplatedEvent {
  readonly type = 'content_block_delta';
  readonly index: number;
  readonly delta: { readonly type: 'text_delta'; readonly text: string };

  constructor(index: number, text: string) {
    super();
    this.index = index;
    this.delta = { type: 'text_delta', text };
  }

  json(): string {
    return `{"type":"content_block_delta","index":${this.index},"delta":{"type":"text_delta","text":${jsonString(this.delta.text)}}}`;
  }

  frame(): string {
    return `event: content_block_delta\ndata: ${this.json()}\n\n`;
  }

  outputChars(): number {
    return this.delta.text.length;
  }
}
