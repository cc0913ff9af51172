import { crc32 } from 'node:zlib';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import type { Message } from '@smithy/types';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import type { SseEvent } from '../../src/plugin-host/api.ts';
import { crc32Of } from './crc32.ts';
import { errorEventOf } from './errors.ts';
import { readStreamHeaders, type StreamHeaders } from './event-stream-headers.ts';

/**
 * AWS's binary event stream (`application/vnd.amazon.eventstream`; providers.md §1.2) → events.
 * Each message is `[total u32][headers u32][prelude crc][headers][payload][message crc]`. The
 * bytes are cut into whole messages first, as a network chunk may hold several or a part of one,
 * and a length no Bedrock message has is refused (a corrupt prelude must not make it wait for
 * gigabytes). The checksums are checked over the bytes where they lie: the 8-byte prelude's in JS
 * (crc32.ts), the rest with node:zlib's crc32, the one the AWS SDK's codec
 * (`@smithy/eventstream-codec`) uses on these Nodes.
 */
const codec = new EventStreamCodec(toUtf8, fromUtf8);
/** A payload part is ≤ 1,000,000 bytes (BRM `PartBody`), base64 in JSON: 2 MB is generous. */
const MAX_MESSAGE = 2 * 1024 * 1024;
const PRELUDE = 12;
const MIN_MESSAGE = 16;
const EMPTY = Buffer.alloc(0);

/**
 * Whole messages out of the bytes as they come, both checksums checked, each handed on as where it
 * lies in the bytes it came in (`bytes[start, end)`): valid during the call only. A partial
 * message waits for more.
 */
export class MessageFrames {
  #rest: Buffer = EMPTY;

  push(bytes: Uint8Array, each: (bytes: Buffer, start: number, end: number) => void): void {
    const buffer = this.#rest.length === 0 ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) : Buffer.concat([this.#rest, bytes]);
    let at = 0;
    while (buffer.length - at >= PRELUDE) {
      // The prelude's own checksum, checked as soon as it is here: a corrupt length must fail
      // now, not wait for bytes that never come.
      const prelude = crc32Of(buffer, at, at + 8);
      if (prelude !== buffer.readUInt32BE(at + 8)) throw new Error('Prelude checksum mismatch in the event stream');
      const total = buffer.readUInt32BE(at);
      if (total < MIN_MESSAGE || total > MAX_MESSAGE) throw new Error(`an event-stream message claims ${total} bytes`);
      if (buffer.length - at < total) break;
      // The message's checksum runs on from the prelude's, over all but its own four bytes; the
      // refusal is worded as the AWS SDK's codec words it (the client sees it).
      const expected = buffer.readUInt32BE(at + total - 4);
      const computed = crc32(buffer.subarray(at + 8, at + total - 4), prelude);
      if (computed !== expected) throw new Error(`The message checksum (${computed}) did not match the expected value of ${expected}`);
      each(buffer, at, at + total);
      at += total;
    }
    // Kept as a copy: the chunk's memory belongs to the socket's reader.
    this.#rest = at === buffer.length ? EMPTY : Buffer.from(buffer.subarray(at));
  }

  end(): void {
    if (this.#rest.length > 0) throw new Error('the event stream ended inside a message');
  }
}

/** Whole messages with every header decoded by the AWS SDK's codec: for a caller that wants them all. */
export class MessageSplitter {
  readonly #frames = new MessageFrames();

  /** Whole messages in `bytes` and what was left before, decoded; a partial one waits for more. */
  push(bytes: Uint8Array, out: Message[]): void {
    this.#frames.push(bytes, (buffer, start, end) => out.push(codec.decode(buffer.subarray(start, end))));
  }

  end(): void {
    this.#frames.end();
  }
}

/** An event's payload as text (JSON, for the formats Bedrock streams). */
export const payloadText = (body: Uint8Array): string => Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');

const stringHeader = (message: Message, name: string): string | undefined => {
  const value = message.headers[name];
  return value?.type === 'string' ? value.value : undefined;
};

/**
 * Event-stream messages → events named by `:event-type`, their payload the data. An `exception`
 * (after HTTP 200: throttling, a model error mid-stream) or an unmodelled `error` message becomes
 * an `error` event in the format's error shape, so the client gets it in-band with its type.
 * Only the five headers that say this are read, from the bytes (event-stream-headers.ts); a
 * header block that reader does not take goes to the AWS SDK's codec whole, which reads or
 * refuses it as it always did.
 */
export class EventStreamDecoder {
  readonly #frames = new MessageFrames();
  readonly #headers: StreamHeaders = { messageType: undefined, eventType: undefined, exceptionType: undefined, errorCode: undefined, errorMessage: undefined };
  readonly #event: (type: string, payload: Uint8Array, out: SseEvent[]) => void;

  /** `event` turns one event message (its payload's bytes) into the upstream format's events. */
  constructor(event: (type: string, payload: Uint8Array, out: SseEvent[]) => void) {
    this.#event = event;
  }

  /** The events of the whole messages in `bytes`; those before a corrupt one are in `out` when it throws. */
  push(bytes: Uint8Array, out: SseEvent[]): void {
    this.#frames.push(bytes, (buffer, start, end) => this.#message(buffer, start, end, out));
  }

  #message(buffer: Buffer, start: number, end: number, out: SseEvent[]): void {
    const headers = this.#headers;
    const payloadStart = start + PRELUDE + buffer.readUInt32BE(start + 4);
    let payload: Uint8Array;
    if (payloadStart <= end - 4 && readStreamHeaders(buffer, start + PRELUDE, payloadStart, headers)) {
      payload = buffer.subarray(payloadStart, end - 4);
    } else {
      const message = codec.decode(buffer.subarray(start, end));
      headers.messageType = stringHeader(message, ':message-type');
      headers.eventType = stringHeader(message, ':event-type');
      headers.exceptionType = stringHeader(message, ':exception-type');
      headers.errorCode = stringHeader(message, ':error-code');
      headers.errorMessage = stringHeader(message, ':error-message');
      payload = message.body;
    }
    const kind = headers.messageType;
    if (kind === 'event') {
      this.#event(headers.eventType ?? '', payload, out);
    } else if (kind === 'exception') {
      out.push(errorEventOf(headers.exceptionType ?? 'exception', payloadText(payload)));
    } else {
      out.push(errorEventOf(headers.errorCode ?? 'error', JSON.stringify({ message: headers.errorMessage ?? 'unknown error' })));
    }
  }

  end(_out: SseEvent[]): void {
    this.#frames.end();
  }
}
