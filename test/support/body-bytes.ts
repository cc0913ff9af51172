import { BodyBytes } from '../../src/http/body-bytes.ts';

/** `bytes` cut into up to `pieces` chunks at random places, as a socket may deliver a body. */
export function chunked(bytes: Buffer, random: () => number, pieces = 4): BodyBytes {
  const cuts = new Set<number>();
  const wanted = Math.floor(random() * pieces);
  for (let i = 0; i < wanted && bytes.length > 1; i++) cuts.add(1 + Math.floor(random() * (bytes.length - 1)));
  return splitAt(bytes, [...cuts]);
}

/**
 * `bytes` cut at the given offsets, each chunk a copy in memory of its own, as the HTTP parser's
 * are (Buffer.alloc never takes from Node's shared pool, so a chunk's `buffer` is its alone).
 */
export function splitAt(bytes: Buffer, offsets: readonly number[]): BodyBytes {
  const points = [...new Set(offsets.filter((o) => o > 0 && o < bytes.length))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let at = 0;
  for (const point of [...points, bytes.length]) {
    const chunk = Buffer.alloc(point - at);
    bytes.copy(chunk, 0, at, point);
    chunks.push(chunk);
    at = point;
  }
  return new BodyBytes(chunks, bytes.length);
}
