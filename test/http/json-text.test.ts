import { expect } from 'chai';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { jsonText } from '../../src/http/json-text.ts';

// jsonText must parse to exactly what JSON.parse(raw.toString('utf8')) gives, errors included (issue #17).
const outcome = (text: () => string): unknown => {
  try {
    return { value: JSON.parse(text()) as unknown };
  } catch {
    return 'syntax error';
  }
};
const same = (raw: Buffer): void => void expect(outcome(() => jsonText(raw))).to.deep.equal(outcome(() => raw.toString('utf8')));
/** Past the small-body cutoff, so the escaping path runs. */
const PAD = 'x'.repeat(40_000);

describe('jsonText', () => {
  it('parses Claude Code\'s 76 KB request (one non-ASCII character) as the UTF-8 decode does, as a one-byte string', () => {
    // As a client sends it (the fixture file escapes the `→`; JSON.stringify writes it as UTF-8).
    const raw = Buffer.from(JSON.stringify(JSON.parse(readFileSync(new URL('../fixtures/claude-code/claude-code-request.json', import.meta.url), 'utf8'))));
    expect(raw.includes('→')).to.equal(true);
    same(raw);
    expect(jsonText(raw).length).to.be.greaterThan(raw.length); // the escape is longer than the bytes
  });

  it('keeps every character: BMP, astral (a surrogate pair), at string edges and next to escapes', () => {
    for (const text of ['→', '😀', 'é', '中文', '"→"', '\\n→\\t', '\u2028', '→→→😀é']) {
      same(Buffer.from(JSON.stringify({ pad: PAD, text, [text]: text })));
    }
  });

  it('refuses what the decode refuses: non-ASCII outside strings, after a backslash, and bodies still invalid', () => {
    for (const bad of [`{"pad":"${PAD}"}→`, `{"pad":"${PAD}","a":"\\→"}`, `{"pad":"${PAD}","a":→}`, `{"pad":"${PAD}","a":"→`]) same(Buffer.from(bad));
  });

  it('turns invalid UTF-8 into U+FFFD as the decoder does (by decoding)', () => {
    for (const bytes of [[0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x86], [0xf4, 0x90, 0x80, 0x80], [0x80]]) {
      same(Buffer.concat([Buffer.from(`{"pad":"${PAD}","a":"`), Buffer.from(bytes), Buffer.from('"}')]));
    }
  });

  it('agrees with the UTF-8 decode on random bodies, valid or not', () => {
    const piece = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 8 }),
      fc.constantFrom('\\', '"', '\\"', '\\u00e9', '{', '}', ':', ',', '[', ']', '→', '😀'),
      fc.uint8Array({ minLength: 1, maxLength: 4 }).map((b) => Buffer.from(b).toString('latin1')),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), fc.boolean(), (pieces, asJson) => {
        const inner = pieces.join('');
        const raw = asJson ? Buffer.from(JSON.stringify({ pad: PAD, inner })) : Buffer.concat([Buffer.from(`{"pad":"${PAD}","a":"`), Buffer.from(inner, 'latin1'), Buffer.from('"}')]);
        same(raw);
      }),
      { numRuns: 400 },
    );
  });
});
