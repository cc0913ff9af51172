import { expect } from 'chai';
import { Utf8Chunks } from '../../src/sse/utf8-chunks.ts';
import { seededRandom } from '../support/random.ts';

/** The text of `bytes` written in pieces cut at `cuts`, then ended. */
function decode(bytes: Uint8Array, cuts: readonly number[], plain = false): string {
  const decoder = new Utf8Chunks();
  let text = '';
  let start = 0;
  for (const cut of [...cuts, bytes.length]) {
    // Plain Uint8Arrays as well as Buffers: a plugin's byte source may give either.
    const piece = bytes.subarray(start, cut);
    text += decoder.write(plain ? new Uint8Array(piece) : piece);
    start = cut;
  }
  return text + decoder.end();
}

const whatwg = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

/** Bytes that are mostly UTF-8 text (ASCII, 2-, 3- and 4-byte characters, BOMs), with some noise. */
function bytesOf(random: () => number, noise: boolean): Buffer {
  const parts: Buffer[] = [];
  const count = 1 + Math.floor(random() * 20);
  for (let i = 0; i < count; i++) {
    const roll = random();
    if (noise && roll < 0.15) parts.push(Buffer.from([Math.floor(random() * 256)]));
    else if (roll < 0.25) parts.push(Buffer.from('\ufeff'));
    else parts.push(Buffer.from(['data: ', 'é', '✓', '日本', '😀', '\n', 'x'][Math.floor(random() * 7)] as string));
  }
  return Buffer.concat(parts);
}

function cutsOf(length: number, random: () => number): number[] {
  const cuts = new Set<number>();
  for (let i = Math.floor(random() * 10); i > 0 && length > 1; i--) cuts.add(1 + Math.floor(random() * (length - 1)));
  return [...cuts].sort((a, b) => a - b);
}

describe('an event stream decoded a chunk at a time (sse/utf8-chunks.ts)', () => {
  for (const noise of [false, true]) {
    it(`gives what TextDecoder gives for the whole body, however it is cut (${noise ? 'with bytes that are not UTF-8' : 'valid UTF-8'}; 3,000 seeded cases)`, () => {
      const random = seededRandom(noise ? 23 : 29);
      for (let i = 0; i < 3000; i++) {
        const bytes = bytesOf(random, noise);
        const cuts = cutsOf(bytes.length, random);
        const expected = whatwg(bytes);
        expect(decode(bytes, cuts), `case ${i}: ${bytes.toString('hex')} cut at ${cuts.join(',')}`).to.equal(expected);
        expect(decode(bytes, cuts, true), `case ${i}, Uint8Array`).to.equal(expected);
      }
    });
  }

  it('drops a byte-order mark that opens the stream, even one cut between chunks, and keeps a later one', () => {
    const bytes = Buffer.from('\ufeffdata: a\n\ndata: \ufeffb\n\n');
    for (const cuts of [[], [1], [2], [3], [1, 2]]) expect(decode(bytes, cuts), `cuts ${cuts.join(',')}`).to.equal('data: a\n\ndata: \ufeffb\n\n');
  });

  it('carries a character cut between chunks, and replaces one cut off by the end with U+FFFD', () => {
    const decoder = new Utf8Chunks();
    const smile = Buffer.from('😀');
    expect(decoder.write(Buffer.concat([Buffer.from('a'), smile.subarray(0, 2)]))).to.equal('a');
    expect(decoder.write(smile.subarray(2))).to.equal('😀');
    expect(decoder.write(Buffer.from('b'))).to.equal('b');
    expect(decoder.write(smile.subarray(0, 3))).to.equal('');
    expect(decoder.end()).to.equal('\ufffd');
  });
});
