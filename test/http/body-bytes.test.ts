import { expect } from 'chai';
import { Writable } from 'node:stream';
import { BodyBytes } from '../../src/http/body-bytes.ts';
import { BodySource } from '../../src/proxy/upstream-body.ts';
import { chunked, splitAt } from '../support/body-bytes.ts';
import { seededRandom } from '../support/random.ts';

/** Random bytes, every value 0–255 (a body is bytes, not text). */
function bytesOf(length: number, random: () => number): Buffer {
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i++) out[i] = Math.floor(random() * 256);
  return out;
}

describe('a body kept as the chunks it came in (issue #17)', () => {
  it('reads, copies, compares and slices any range as the joined bytes would (3,000 seeded cases)', () => {
    const random = seededRandom(9);
    for (let i = 0; i < 3000; i++) {
      const bytes = bytesOf(1 + Math.floor(random() * 300), random);
      const body = chunked(bytes, random, 8);
      expect(body.length).to.equal(bytes.length);
      const start = Math.floor(random() * (bytes.length + 1));
      const end = start + Math.floor(random() * (bytes.length - start + 1));
      const expected = bytes.subarray(start, end);
      expect(body.view(start, end).equals(expected), 'view').to.equal(true);
      expect(body.copy(start, end).equals(expected), 'copy').to.equal(true);
      expect(Buffer.concat(body.slice(start, end)).equals(expected), 'slice').to.equal(true);
      expect(body.equals(start, end, expected), 'equals itself').to.equal(true);
      if (expected.length > 0) {
        const other = Buffer.from(expected);
        const at = Math.floor(random() * other.length);
        other[at] = ((other[at] as number) + 1) % 256; // one byte different, anywhere
        expect(body.equals(start, end, other), 'one byte changed').to.equal(false);
      }
      expect(body.equals(start, end, Buffer.concat([expected, Buffer.from('x')])), 'longer').to.equal(false);
    }
  });

  it('reads a range inside one chunk in place, and joins a range across chunks in a scratch the next view reuses', () => {
    const body = splitAt(Buffer.from('abcdefghij'), [4]);
    const inside = body.view(5, 9);
    expect(inside.buffer).to.equal((body.chunks[1] as Buffer).buffer); // no copy
    const across = body.view(2, 8);
    expect(across.toString()).to.equal('cdefgh');
    const kept = body.copy(2, 8);
    splitAt(Buffer.from('0123456789'), [3]).view(0, 10);
    // The view was the scratch, written over by the next one; a copy is its own.
    expect(across.toString()).to.equal('012345');
    expect(kept.toString()).to.equal('cdefgh');
  });

  it('joins a body larger than the scratch into a Buffer of its own', () => {
    const big = Buffer.alloc(5 * 1024 * 1024, 0x61);
    const view = splitAt(big, [1000]).view();
    splitAt(Buffer.from('0123456789'), [3]).view(0, 10);
    expect(view.length).to.equal(big.length);
    expect(view.equals(big)).to.equal(true);
  });

  it('is sent upstream as its chunks, in order, then ended once', async () => {
    const body = splitAt(Buffer.from('{"model":"m","messages":[]}'), [3, 10, 20]);
    const writes: string[] = [];
    let ends = 0;
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        writes.push(chunk.toString());
        done();
      },
    });
    sink.on('finish', () => ends++);
    new BodySource(body).pipe(sink);
    await new Promise((resolve) => sink.on('finish', resolve));
    expect(writes).to.deep.equal(['{"m', 'odel":"', 'm","messag', 'es":[]}']);
    expect(ends).to.equal(1);
    const empty: string[] = [];
    const sink2 = new Writable({ write: (chunk: Buffer, _e, done) => void (empty.push(chunk.toString()), done()) });
    new BodySource(new BodyBytes([])).pipe(sink2);
    await new Promise((resolve) => sink2.on('finish', resolve));
    expect(empty.join('')).to.equal('');
  });
});
