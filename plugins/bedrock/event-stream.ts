import { crc32 } from 'node:zlib';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import type { Message } from '@smithy/types';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import type { SseEvent } from '../../src/plugin-host/api.ts';
import { errorEventOf } from './errors.ts';

/**
 * AWS's binary event stream (`application/vnd.amazon.eventstream`; providers.md §1.2) → events.
 * Each message is `[total u32][headers u32][prelude crc][headers][payload][message crc]`; the
 * codec (`@smithy/eventstream-codec`, the AWS SDK's own) checks both CRCs and reads the headers.
 * This only cuts the bytes into whole messages first, as a network chunk may hold several or a
 * part of one, and refuses a length no Bedrock message has (a corrupt prelude must not make it
 * wait for gigabytes).
 */
const codec = new EventStreamCodec(toUtf8, fromUtf8);
/** A payload part is ≤ 1,000,000 bytes (BRM `PartBody`), base64 in JSON: 2 MB is generous. */
const MAX_MESSAGE = 2 * 1024 * 1024;
const PRELUDE = 12;
const MIN_MESSAGE = 16;

export class MessageSplitter {
  #buffer: Buffer = Buffer.alloc(0);

  /** Whole messages in `bytes` and what was left before, decoded; a partial one waits for more. */
  push(bytes: Uint8Array, out: Message[]): void {
    let buffer = this.#buffer.length === 0 ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) : Buffer.concat([this.#buffer, bytes]);
    while (buffer.length >= PRELUDE) {
      // The prelude's own checksum, checked as soon as it is here (the codec checks it again with
      // the rest): a corrupt length must fail now, not wait for bytes that never come.
      if (crc32(buffer.subarray(0, 8)) !== buffer.readUInt32BE(8)) throw new Error('Prelude checksum mismatch in the event stream');
      const total = buffer.readUInt32BE(0);
      if (total < MIN_MESSAGE || total > MAX_MESSAGE) throw new Error(`an event-stream message claims ${total} bytes`);
      if (buffer.length < total) break;
      out.push(codec.decode(buffer.subarray(0, total)));
      buffer = buffer.subarray(total);
    }
    // Kept as a copy: the chunk's memory belongs to the socket's reader.
    this.#buffer = buffer.length === 0 ? Buffer.alloc(0) : Buffer.from(buffer);
  }

  end(): void {
    if (this.#buffer.length > 0) throw new Error('the event stream ended inside a message');
  }
}

const header = (message: Message, name: string): string | undefined => {
  const value = message.headers[name];
  return value?.type === 'string' ? value.value : undefined;
};
/** An event's payload as text (JSON, for the formats Bedrock streams). */
export const payloadText = (body: Uint8Array): string => Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');

/**
 * Event-stream messages → events named by `:event-type`, their payload the data. An `exception`
 * (after HTTP 200: throttling, a model error mid-stream) or an unmodelled `error` message becomes
 * an `error` event in the format's error shape, so the client gets it in-band with its type.
 */
export class EventStreamDecoder {
  readonly #splitter = new MessageSplitter();
  readonly #messages: Message[] = [];
  readonly #event: (type: string, payload: Uint8Array, out: SseEvent[]) => void;

  /** `event` turns one event message (its payload's bytes) into the upstream format's events. */
  constructor(event: (type: string, payload: Uint8Array, out: SseEvent[]) => void) {
    this.#event = event;
  }

  push(bytes: Uint8Array, out: SseEvent[]): void {
    const messages = this.#messages;
    messages.length = 0;
    try {
      this.#splitter.push(bytes, messages);
    } catch (err) {
      // The messages before a corrupt one are good: they go out first, then the error.
      this.#events(messages, out);
      throw err;
    }
    this.#events(messages, out);
  }

  #events(messages: readonly Message[], out: SseEvent[]): void {
    for (const message of messages) {
      const kind = header(message, ':message-type');
      if (kind === 'event') {
        this.#event(header(message, ':event-type') ?? '', message.body, out);
      } else if (kind === 'exception') {
        out.push(errorEventOf(header(message, ':exception-type') ?? 'exception', payloadText(message.body)));
      } else {
        out.push(errorEventOf(header(message, ':error-code') ?? 'error', JSON.stringify({ message: header(message, ':error-message') ?? 'unknown error' })));
      }
    }
  }

  end(_out: SseEvent[]): void {
    this.#splitter.end();
  }
}
