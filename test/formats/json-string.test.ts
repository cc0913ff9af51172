import { expect } from 'chai';
import fc from 'fast-check';
import { jsonString } from '../../src/formats/json-string.ts';

// A delta's text written without JSON.stringify must be exactly JSON.stringify's (issue #17).
describe('jsonString', () => {
  it('writes every character that needs an escape as JSON.stringify does', () => {
    const special = ['"', '\\', '\u0000', '\n', '\u001f', '\ud800', '\udfff', '\ud83d\ude00', '\ud83d', 'a\ude00b', '\u2028', '\u007f', 'é', '中'];
    for (const char of special) {
      for (const text of [char, `say ${char} then`, `${char}${char}`]) expect(jsonString(text), JSON.stringify(text)).to.equal(JSON.stringify(text));
    }
    expect(jsonString('')).to.equal('""');
    expect(jsonString('Hello, world')).to.equal('"Hello, world"');
  });

  it('agrees with JSON.stringify on any string, short or long, lone surrogates included', () => {
    const units = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 300 }).map((codes) => String.fromCharCode(...codes));
    const mostlyPlain = fc.array(fc.constantFrom('a', ' ', 'é', '"', '\\', '\n', '\ud83d', '\ude00', '中'), { maxLength: 300 }).map((chars) => chars.join(''));
    fc.assert(fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), units, mostlyPlain), (text) => jsonString(text) === JSON.stringify(text)), { seed: 17, numRuns: 3000 });
  });

  it('hands text past its scan length to JSON.stringify, with the same result', () => {
    for (const length of [255, 256, 257, 1000]) {
      const plain = 'x'.repeat(length);
      expect(jsonString(plain)).to.equal(JSON.stringify(plain));
      const quoted = `${'x'.repeat(length - 1)}"`;
      expect(jsonString(quoted)).to.equal(JSON.stringify(quoted));
    }
  });
});
