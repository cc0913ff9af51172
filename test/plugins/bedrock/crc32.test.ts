import { expect } from 'chai';
import fc from 'fast-check';
import { crc32 } from 'node:zlib';
import { crc32Of } from '../../../plugins/bedrock/crc32.ts';

/** The event-stream prelude's checksum, walked in JS (issue #15), is node:zlib's CRC-32. */
describe('bedrock event stream: CRC-32 in JS', () => {
  it('crc32Of is zlib\'s CRC-32 on any range of bytes, from any seed', () => {
    // Not empty ones: node:zlib answers 0, whatever the seed, for an empty view with no memory
    // behind it (`new Uint8Array([]).subarray(0, 0)`). The decoder checks 8 bytes.
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 300 }), fc.nat(), fc.nat(), fc.integer({ min: 0, max: 0xffffffff }), (bytes, a, b, seed) => {
        const start = a % bytes.length;
        const end = start + 1 + (b % (bytes.length - start));
        expect(crc32Of(bytes, start, end, seed)).to.equal(crc32(bytes.subarray(start, end), seed));
        expect(crc32Of(bytes, start, end)).to.equal(crc32(bytes.subarray(start, end)));
      }),
      { seed: 15, numRuns: 2000 },
    );
  });
});
