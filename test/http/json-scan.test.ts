import { expect } from 'chai';
import { replaceModel, scanJson } from '../../src/http/json-scan.ts';
import { seededRandom } from '../support/random.ts';

const scan = (text: string, depth = 64) => scanJson(Buffer.from(text), depth);
const modelText = (text: string) => {
  const s = scan(text);
  return s.modelStart < 0 ? null : Buffer.from(text).toString('utf8', s.modelStart, s.modelEnd);
};

describe('scanJson', () => {
  it('finds the top-level model string and ignores nested and in-string look-alikes', () => {
    expect(modelText('{"model":"a"}')).to.equal('"a"');
    expect(modelText('{ "x": {"model":"nested"}, "y": "\\"model\\": \\"fake\\"", "model" : "real" }')).to.equal('"real"');
    expect(modelText('[{"model":"in-array"}]')).to.equal(null);
    expect(modelText('{"models":"plural","modelx":"x"}')).to.equal(null);
    expect(modelText('{"a":"\\\\","model":"after-escaped-backslash"}')).to.equal('"after-escaped-backslash"');
    expect(modelText('{"model":"é✓ \\u00e9"}')).to.equal('"é✓ \\u00e9"');
  });

  it('keeps the last of duplicate model keys, like JSON.parse, and drops a non-string one', () => {
    expect(modelText('{"model":"first","model":"second"}')).to.equal('"second"');
    expect(modelText('{"model":"first","model":{"x":1}}')).to.equal(null);
    expect(modelText('{"model":"first","model":7}')).to.equal(null);
  });

  it('measures nesting depth across objects and arrays, ignoring brackets inside strings', () => {
    expect(scan(`{"a":${'['.repeat(63)}${']'.repeat(63)}}`).tooDeep).to.equal(false);
    expect(scan(`{"a":${'['.repeat(64)}${']'.repeat(64)}}`).tooDeep).to.equal(true);
    expect(scan(`{"a":"${'['.repeat(500)}"}`).tooDeep).to.equal(false);
  });

  it('replaces only the model bytes', () => {
    const raw = Buffer.from('{ "model" :  "a" ,"messages":[],"z":"model"}');
    const out = replaceModel(raw, scanJson(raw, 64), JSON.parse(raw.toString()) as Record<string, unknown>, 'b/c "q"');
    expect(out.toString()).to.equal('{ "model" :  "b/c \\"q\\"" ,"messages":[],"z":"model"}');
  });

  it('agrees with JSON.parse on random bodies', () => {
    const random = seededRandom(2);
    const words = ['model', 'm', '"', '\\', '{', '[', 'x'];
    for (let i = 0; i < 500; i++) {
      const pick = () => words[Math.floor(random() * words.length)] ?? '';
      const value: Record<string, unknown> = { [pick()]: { model: pick() + pick() }, model: pick() + pick(), [pick()]: [pick(), { model: pick() }] };
      const text = JSON.stringify(value, null, i % 3);
      const s = scan(text);
      const parsed = JSON.parse(text) as Record<string, unknown>;
      if (typeof parsed['model'] === 'string') expect(JSON.parse(text.slice(s.modelStart, s.modelEnd))).to.equal(parsed['model']);
      else expect(s.modelStart, text).to.equal(-1);
    }
  });
});
