import { expect } from 'chai';
import fc from 'fast-check';
import { crc32 } from 'node:zlib';
import { HeaderMarshaller } from '@smithy/eventstream-codec';
import type { Message } from '@smithy/types';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import type { SseEvent } from '../../../src/plugin-host/api.ts';
import { errorEventOf } from '../../../plugins/bedrock/errors.ts';
import { EventStreamDecoder, MessageSplitter, payloadText } from '../../../plugins/bedrock/event-stream.ts';
import { readStreamHeaders, type StreamHeaders } from '../../../plugins/bedrock/event-stream-headers.ts';

/**
 * The Bedrock event-stream decoder reads the five headers it acts on from the bytes and checks the
 * prelude's checksum in JS (issue #15: decoding cost per event; the CRC in crc32.test.ts). It must
 * read what the AWS SDK's codec reads, message for message: here it is compared with the decoder it
 * replaced (the codec's whole messages, then their headers) on random messages, header blocks of
 * every type, repeated and unreadable ones, exceptions, corrupt bytes and random cuts.
 */
const marshaller = new HeaderMarshaller(toUtf8, fromUtf8);
const WANTED = [':message-type', ':event-type', ':exception-type', ':error-code', ':error-message'] as const;
const FIELD: Record<(typeof WANTED)[number], keyof StreamHeaders> = {
  ':message-type': 'messageType',
  ':event-type': 'eventType',
  ':exception-type': 'exceptionType',
  ':error-code': 'errorCode',
  ':error-message': 'errorMessage',
};

/** One header in the wire's form: name length, name, type tag, value (providers.md §1.2). */
const headerBytes = (name: Buffer, type: number, value: Buffer): Buffer => {
  const sized = type === 6 || type === 7 ? Buffer.concat([Buffer.from([value.length >> 8, value.length & 0xff]), value]) : value;
  return Buffer.concat([Buffer.from([name.length]), name, Buffer.from([type]), sized]);
};
const FIXED = [0, 0, 1, 2, 4, 8, -1, -1, 8, 16];
const arbHeader = fc
  .tuple(
    fc.oneof(fc.constantFrom(...WANTED, ':content-type', ':message-typ', ':event-typee', ':date'), fc.string({ maxLength: 20 })),
    fc.integer({ min: 0, max: 9 }),
    fc.oneof(fc.constantFrom('event', 'exception', 'error', 'chunk', 'contentBlockDelta', 'metadata', 'even', 'chunks'), fc.string({ unit: 'grapheme', maxLength: 30 })),
    fc.uint8Array({ minLength: 16, maxLength: 16 }),
  )
  .map(([name, type, text, bytes]) => {
    const nameBytes = Buffer.from(name).subarray(0, 255);
    const value = type === 7 ? Buffer.from(text) : type === 6 ? Buffer.from(bytes).subarray(0, bytes[0]! % 17) : Buffer.from(bytes).subarray(0, FIXED[type]);
    return headerBytes(nameBytes, type, value);
  });
const arbBlock = fc.array(arbHeader, { maxLength: 8 }).map((headers) => Buffer.concat(headers));

/** A whole message around a header block and a payload, with both checksums right. */
function message(headers: Buffer, payload: Buffer, headersLength = headers.length): Buffer {
  const total = 16 + headers.length + payload.length;
  const out = Buffer.alloc(total);
  out.writeUInt32BE(total, 0);
  out.writeUInt32BE(headersLength, 4);
  out.writeUInt32BE(crc32(out.subarray(0, 8)), 8);
  headers.copy(out, 12);
  payload.copy(out, 12 + headers.length);
  out.writeUInt32BE(crc32(out.subarray(0, total - 4)), total - 4);
  return out;
}

/** The decoder this one replaced, word for word: the codec's whole messages, then their headers. */
function previousDecode(pieces: readonly Buffer[], event: (type: string, payload: Uint8Array, out: SseEvent[]) => void): { events: SseEvent[]; error?: string } {
  const header = (message: Message, name: string): string | undefined => {
    const value = message.headers[name];
    return value?.type === 'string' ? value.value : undefined;
  };
  const out: SseEvent[] = [];
  const splitter = new MessageSplitter();
  const convert = (messages: readonly Message[]): void => {
    for (const message of messages) {
      const kind = header(message, ':message-type');
      if (kind === 'event') event(header(message, ':event-type') ?? '', message.body, out);
      else if (kind === 'exception') out.push(errorEventOf(header(message, ':exception-type') ?? 'exception', payloadText(message.body)));
      else out.push(errorEventOf(header(message, ':error-code') ?? 'error', JSON.stringify({ message: header(message, ':error-message') ?? 'unknown error' })));
    }
  };
  try {
    for (const piece of pieces) {
      const messages: Message[] = [];
      try {
        splitter.push(piece, messages);
      } catch (err) {
        convert(messages);
        throw err;
      }
      convert(messages);
    }
    splitter.end();
  } catch (err) {
    return { events: out, error: (err as Error).message };
  }
  return { events: out };
}

function decode(pieces: readonly Buffer[], event: (type: string, payload: Uint8Array, out: SseEvent[]) => void): { events: SseEvent[]; error?: string } {
  const out: SseEvent[] = [];
  const decoder = new EventStreamDecoder(event);
  try {
    for (const piece of pieces) decoder.push(piece, out);
    decoder.end(out);
  } catch (err) {
    return { events: out, error: (err as Error).message };
  }
  return { events: out };
}

const asText = (type: string, payload: Uint8Array, out: SseEvent[]): void => void out.push({ event: type, data: payloadText(payload) });
const cutAt = (bytes: Buffer, cuts: readonly number[]): Buffer[] => {
  const pieces: Buffer[] = [];
  let start = 0;
  for (const cut of [...[...cuts].sort((a, b) => a - b), bytes.length]) {
    if (cut > start) pieces.push(Buffer.from(bytes.subarray(start, cut)));
    start = Math.max(start, cut);
  }
  return pieces;
};

describe('bedrock event stream: what the decoder reads from the bytes', () => {
  it('reads the five headers as the AWS SDK\'s codec does: every type, repeated names (the last counts), values that are not strings', () => {
    fc.assert(
      fc.property(arbBlock, (block) => {
        const into: StreamHeaders = { messageType: 'x', eventType: 'x', exceptionType: 'x', errorCode: 'x', errorMessage: 'x' };
        expect(readStreamHeaders(block, 0, block.length, into)).to.equal(true);
        const parsed = marshaller.parse(new DataView(block.buffer, block.byteOffset, block.length));
        for (const name of WANTED) {
          const value = parsed[name];
          expect(into[FIELD[name]], name).to.equal(value?.type === 'string' ? value.value : undefined);
        }
      }),
      { seed: 15, numRuns: 3000 },
    );
  });

  it('says so when a block cannot be walked exactly, and reads what the codec reads whenever it can', () => {
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 60 }).map((b) => Buffer.from(b)), arbBlock.map((b) => b.subarray(0, Math.max(0, b.length - 1)))), (block) => {
        const into: StreamHeaders = { messageType: undefined, eventType: undefined, exceptionType: undefined, errorCode: undefined, errorMessage: undefined };
        if (!readStreamHeaders(block, 0, block.length, into)) return;
        const parsed = marshaller.parse(new DataView(block.buffer, block.byteOffset, block.length));
        for (const name of WANTED) {
          const value = parsed[name];
          expect(into[FIELD[name]], name).to.equal(value?.type === 'string' ? value.value : undefined);
        }
      }),
      { seed: 15, numRuns: 3000 },
    );
  });

  describe('the decoder against the one it replaced', () => {
    // The codec reads a header that runs past its block from whatever follows in the same
    // ArrayBuffer, and refuses it only past that buffer's end: with Node's shared 8 KB pool, what
    // it finds there changes from run to run (a garbage value, or one RangeError or another). So
    // that both decoders see the same bytes, every buffer here is its own ArrayBuffer.
    let poolSize = Buffer.poolSize;
    before(() => {
      poolSize = Buffer.poolSize;
      Buffer.poolSize = 0;
    });
    after(() => {
      Buffer.poolSize = poolSize;
    });
    const str = (name: string, value: string): Buffer => headerBytes(Buffer.from(name), 7, Buffer.from(value));
    const eventMessage = (type: string, data: string, extra: Buffer = Buffer.alloc(0)): Buffer =>
      message(Buffer.concat([str(':event-type', type), str(':content-type', 'application/json'), extra, str(':message-type', 'event')]), Buffer.from(data));
    const arbMessage = fc.oneof(
      { weight: 5, arbitrary: fc.tuple(fc.constantFrom('chunk', 'contentBlockDelta', 'metadata', 'ünknown'), fc.json(), arbBlock).map(([type, data, extra]) => eventMessage(type, data, extra)) },
      { weight: 1, arbitrary: fc.tuple(fc.constantFrom('throttlingException', 'modelStreamErrorException'), fc.oneof(fc.json(), fc.string())).map(([type, body]) => message(Buffer.concat([str(':exception-type', type), str(':message-type', 'exception')]), Buffer.from(body))) },
      { weight: 1, arbitrary: fc.tuple(fc.string(), fc.string()).map(([code, text]) => message(Buffer.concat([str(':error-code', code), str(':error-message', text), str(':message-type', 'error')]), Buffer.alloc(0))) },
      // Any header block at all, readable or not: the codec reads, tolerates or refuses it.
      { weight: 1, arbitrary: fc.tuple(fc.oneof(arbBlock, fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b))), fc.uint8Array({ maxLength: 30 })).map(([block, payload]) => message(block, Buffer.from(payload))) },
      // A headers length past the message's end, checksums right.
      { weight: 1, arbitrary: fc.tuple(arbBlock, fc.integer({ min: 1, max: 64 })).map(([block, over]) => message(block, Buffer.from('{}'), block.length + 2 + over)) },
    );

    it('gives the same events and the same error for any messages, cut anywhere, corrupt or not', () => {
      fc.assert(
        fc.property(fc.array(arbMessage, { minLength: 1, maxLength: 6 }), fc.array(fc.nat(), { maxLength: 6 }), fc.option(fc.nat()), (messages, cutsRaw, flip) => {
          const bytes = Buffer.concat(messages);
          if (flip !== null) bytes[flip % bytes.length] = bytes[flip % bytes.length]! ^ (1 << (flip % 8));
          const pieces = cutAt(bytes, cutsRaw.map((c) => c % (bytes.length + 1)));
          expect(decode(pieces, asText)).to.deep.equal(previousDecode(pieces, asText));
        }),
        { seed: 15, numRuns: 1500 },
      );
    });

    it('hands the event callback the payload\'s bytes, and stops where a throwing callback stops', () => {
      const bytes = Buffer.concat([eventMessage('chunk', '{"a":1}'), eventMessage('chunk', 'not json'), eventMessage('chunk', '{"b":2}')]);
      const strict = (type: string, payload: Uint8Array, out: SseEvent[]): void => void out.push({ event: type, data: JSON.stringify(JSON.parse(payloadText(payload))) });
      for (const pieces of [[bytes], cutAt(bytes, [30, 31, 90])]) {
        const now = decode(pieces, strict);
        expect(now).to.deep.equal(previousDecode(pieces, strict));
        expect(now.events).to.deep.equal([{ event: 'chunk', data: '{"a":1}' }]);
        expect(now.error).to.match(/JSON/);
      }
    });
  });
});
