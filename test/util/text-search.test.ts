import { expect } from 'chai';
import fc from 'fast-check';
import { Needle } from '../../src/util/text-search.ts';

/** Issue #17: a marker with a leading quote is searched without it; it must find what indexOf finds. */
describe('Needle', () => {
  const hay = fc.string({ unit: fc.constantFrom('"', 'u', 's', 'a', 'g', 'e', ':', '{', 'x'), maxLength: 80 });
  for (const marker of ['"usage"', '"delta"', '_delta"', '"', 'usage']) {
    it(`finds ${marker} where String#indexOf does, from any offset, and counts it`, () => {
      const needle = new Needle(marker);
      fc.assert(
        fc.property(hay, fc.nat(90), (text, from) => {
          expect(needle.in(text, from)).to.equal(text.indexOf(marker, from));
          expect(needle.count(text)).to.equal(text.split(marker).length - 1);
        }),
        { numRuns: 3000 },
      );
    });
  }
});
