import { expect } from 'chai';
import { scanJson, spliceFields } from '../../src/http/json-scan.ts';
import { seededRandom } from '../support/random.ts';

const scan = (text: string, depth = 64) => scanJson(Buffer.from(text), depth);
const fieldText = (text: string, name = 'model') => {
  const range = scan(text).fields.get(name);
  return range === undefined ? null : Buffer.from(text).toString('utf8', range.start, range.end);
};
const modelText = (text: string) => {
  const value = fieldText(text);
  return value?.startsWith('"') ? value : null;
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

  it('finds the top-level tools array as sent, for the token estimate', () => {
    const tools = '[ {"name":"look", "input_schema":{"type":"object","properties":{"tools":[1]}}} ]';
    expect(fieldText(`{"model":"m","tools": ${tools},"max_tokens":5}`, 'tools')).to.equal(tools);
    expect(fieldText('{"model":"m","x":{"tools":[]}}', 'tools')).to.equal(null);
  });

  it('measures nesting depth across objects and arrays, ignoring brackets inside strings', () => {
    expect(scan(`{"a":${'['.repeat(63)}${']'.repeat(63)}}`).tooDeep).to.equal(false);
    expect(scan(`{"a":${'['.repeat(64)}${']'.repeat(64)}}`).tooDeep).to.equal(true);
    expect(scan(`{"a":"${'['.repeat(500)}"}`).tooDeep).to.equal(false);
  });

  it('replaces only the model bytes', () => {
    const raw = Buffer.from('{ "model" :  "a" ,"messages":[],"z":"model"}');
    const out = spliceFields(raw, scanJson(raw, 64), JSON.parse(raw.toString()) as Record<string, unknown>, { model: 'b/c "q"' });
    expect(out.toString()).to.equal('{ "model" :  "b/c \\"q\\"" ,"messages":[],"z":"model"}');
  });

  it('finds object and scalar values, and the closing brace', () => {
    const text = '{"stream_options": {"include_usage": false, "x": [1]} , "model": "m", "n": 2}';
    expect(fieldText(text, 'stream_options')).to.equal('{"include_usage": false, "x": [1]}');
    expect(scan(text).end).to.equal(text.length - 1);
    expect(fieldText('{"model": null, "a": 1}')).to.equal('null');
  });

  it('replaces and adds several values at once, from the end backwards', () => {
    const raw = Buffer.from('{"model":"a","stream":true,"messages":[{"content":"x"}]}');
    const body = JSON.parse(raw.toString()) as Record<string, unknown>;
    const out = spliceFields(raw, scanJson(raw, 64), body, { model: 'long-upstream-name', stream_options: { include_usage: true } });
    expect(out.toString()).to.equal('{"model":"long-upstream-name","stream":true,"messages":[{"content":"x"}],"stream_options":{"include_usage":true}}');
    const withOptions = Buffer.from('{"stream_options":{"include_usage":false},"model":"a"}');
    const edited = spliceFields(withOptions, scanJson(withOptions, 64), JSON.parse(withOptions.toString()) as Record<string, unknown>, { stream_options: { include_usage: true } });
    expect(edited.toString()).to.equal('{"stream_options":{"include_usage":true},"model":"a"}');
  });

  it('agrees with JSON.parse on random bodies', () => {
    const random = seededRandom(2);
    const words = ['model', 'm', '"', '\\', '{', '[', 'x'];
    for (let i = 0; i < 500; i++) {
      const pick = () => words[Math.floor(random() * words.length)] ?? '';
      const value: Record<string, unknown> = { [pick()]: { model: pick() + pick() }, model: pick() + pick(), [pick()]: [pick(), { model: pick() }] };
      const text = JSON.stringify(value, null, i % 3);
      const range = scan(text).fields.get('model');
      const parsed = JSON.parse(text) as Record<string, unknown>;
      expect(range, text).not.to.equal(undefined);
      expect(JSON.parse(text.slice(range!.start, range!.end)), text).to.deep.equal(parsed['model']);
    }
  });
});
