/**
 * CRC-32 (IEEE, as zlib's and the event stream's) in JS over a short range of bytes. node:zlib's
 * crc32 is the faster one past a few dozen bytes, but each call costs about 150 ns on Node 20
 * (a view of the range, argument checks, the binding); for a message's 8-byte prelude this table
 * walk takes about 30 ns (measured on the CI machine kind).
 */
const TABLE = new Int32Array(256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  TABLE[n] = c;
}

/** The CRC-32 of `bytes[start, end)`, running on from `seed` (a previous result) as zlib's does. */
export function crc32Of(bytes: Uint8Array, start: number, end: number, seed = 0): number {
  let crc = ~seed;
  for (let i = start; i < end; i++) crc = (crc >>> 8) ^ TABLE[(crc ^ bytes[i]!) & 0xff]!;
  return ~crc >>> 0;
}
