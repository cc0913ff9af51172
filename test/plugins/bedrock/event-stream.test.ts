import { expect } from 'chai';
import type { SseEvent } from '../../../src/plugin-host/api.ts';
import { EventStreamDecoder, payloadText } from '../../../plugins/bedrock/event-stream.ts';
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
    expect(() => decode([huge])).to.throw(/claims/);
  });

  it('a stream that ends inside a message is an error', () => {
    expect(() => decode([bytes.subarray(0, bytes.length - 3)])).to.throw(/ended inside a message/);
  });
});
