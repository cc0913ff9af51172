import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import type { SseEvent } from '../../../src/plugin-host/api.ts';
import { EventStreamDecoder, MessageSplitter, payloadText } from '../../../plugins/bedrock/event-stream.ts';
import { chunk, frame } from '../../support/aws-fake.ts';

/**
 * The event-stream decoder (providers.md §1.2): messages encoded by the AWS SDK's codec, arriving
 * cut at every byte offset or several to a network chunk, decode the same; a bad CRC, a length
 * no message has, and a stream ending inside a message are errors, never a wait or a clean end.
 */
const decode = (pieces: readonly Buffer[]): SseEvent[] => {
  const out: SseEvent[] = [];
  const decoder = new EventStreamDecoder((type, payload, events) => events.push({ event: type, data: payloadText(payload) }));
  for (const piece of pieces) decoder.push(piece, out);
  decoder.end(out);
  return out;
};
const events = [{ type: 'message_start', n: 1 }, { type: 'content_block_delta', text: 'é ü 漢字 '.repeat(20) }, { type: 'message_stop' }];
const bytes = Buffer.concat(events.map(chunk));
const expected = events.map((e) => ({ event: 'chunk', data: JSON.stringify({ bytes: Buffer.from(JSON.stringify(e)).toString('base64') }) }));

describe('bedrock event-stream decoder', () => {
  it('decodes the same whatever the cut: every single split point, and all at once', () => {
    expect(decode([bytes])).to.deep.equal(expected);
    for (let at = 1; at < bytes.length; at++) expect(decode([bytes.subarray(0, at), bytes.subarray(at)]), `cut at ${at}`).to.deep.equal(expected);
    expect(decode([...bytes].map((b) => Buffer.from([b])))).to.deep.equal(expected);
  });

  it('an exception message becomes an Anthropic error event, typed by the exception', () => {
    const out = decode([frame('throttlingException', { message: 'Too many requests' }, 'exception')]);
    expect(out).to.have.length(1);
    expect(out[0]!.event).to.equal('error');
    expect(JSON.parse(out[0]!.data)).to.deep.equal({ type: 'error', error: { type: 'rate_limit_error', message: 'throttlingException: Too many requests' } });
  });

  it('a corrupt payload fails its checksum', () => {
    const bad = Buffer.from(bytes);
    // The first message's payload starts after its 12-byte prelude and its headers.
    const at = 12 + bad.readUInt32BE(4) + 5;
    bad.writeUInt8(bad.readUInt8(at) ^ 1, at);
    expect(() => decode([bad])).to.throw(/message checksum/i);
  });

  it('a length no message has is refused at once, not waited for', () => {
    const huge = Buffer.alloc(16);
    huge.writeUInt32BE(0x7fffffff, 0);
    // A prelude whose own checksum is right: only its length is wrong.
    huge.writeUInt32BE(crc32(huge.subarray(0, 8)), 8);
    expect(() => decode([huge])).to.throw(/claims/);
    // And a corrupt prelude is refused from its first 12 bytes, whatever length it claims.
    expect(() => decode([Buffer.from('0000ffff0000000000000000', 'hex')])).to.throw(/prelude checksum/i);
  });

  it('a stream that ends inside a message is an error', () => {
    expect(() => decode([bytes.subarray(0, bytes.length - 3)])).to.throw(/ended inside a message/);
  });

  describe('the AWS event-stream test vectors', () => {
    interface Vectors {
      positive: Record<string, { encoded: string; decoded: { headers: { name: string; type: number; value: unknown }[]; payload: string } }>;
      negative: Record<string, { encoded: string; decoded: string }>;
    }
    const vectors = JSON.parse(readFileSync(new URL('../../fixtures/aws/eventstream-vectors.json', import.meta.url), 'utf8')) as Vectors;
    const split = (pieces: readonly Buffer[]) => {
      const out: import('@smithy/types').Message[] = [];
      const splitter = new MessageSplitter();
      for (const piece of pieces) splitter.push(piece, out);
      splitter.end();
      return out;
    };
    for (const [name, { encoded, decoded }] of Object.entries(vectors.positive)) {
      it(`${name}: decoded whole and cut at every offset`, () => {
        const bytes = Buffer.from(encoded, 'hex');
        for (let at = 0; at <= bytes.length; at++) {
          const [message, ...rest] = split(at === 0 || at === bytes.length ? [bytes] : [bytes.subarray(0, at), bytes.subarray(at)]);
          expect(rest, `cut at ${at}`).to.have.length(0);
          expect(Buffer.from(message!.body).toString('base64')).to.equal(decoded.payload);
          expect(Object.keys(message!.headers)).to.deep.equal(decoded.headers.map((h) => h.name));
          for (const header of decoded.headers.filter((h) => h.type === 7)) {
            expect(message!.headers[header.name]).to.deep.equal({ type: 'string', value: Buffer.from(String(header.value), 'base64').toString('utf8') });
          }
        }
      });
    }
    for (const [name, { encoded, decoded }] of Object.entries(vectors.negative)) {
      it(`${name}: refused (${decoded})`, () => {
        const kind = decoded.startsWith('Prelude') ? /prelude/i : /message checksum|checksum/i;
        expect(() => split([Buffer.from(encoded, 'hex')])).to.throw(kind);
      });
    }
  });
});
