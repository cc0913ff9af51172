import { expect } from 'chai';
import { BodyBytes } from '../../src/http/body-bytes.ts';
import { scanJson, spliceFields, usageValueOf } from '../../src/http/json-scan.ts';
import { chunked } from '../support/body-bytes.ts';
import { seededRandom } from '../support/random.ts';

const whole = (body: BodyBytes): string => Buffer.concat(body.chunks).toString();

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
    const out = spliceFields(BodyBytes.of(raw), scanJson(raw, 64), JSON.parse(raw.toString()) as Record<string, unknown>, { model: 'b/c "q"' });
    expect(whole(out)).to.equal('{ "model" :  "b/c \\"q\\"" ,"messages":[],"z":"model"}');
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
    const out = spliceFields(BodyBytes.of(raw), scanJson(raw, 64), body, { model: 'long-upstream-name', stream_options: { include_usage: true } });
    expect(whole(out)).to.equal('{"model":"long-upstream-name","stream":true,"messages":[{"content":"x"}],"stream_options":{"include_usage":true}}');
    const withOptions = Buffer.from('{"stream_options":{"include_usage":false},"model":"a"}');
    const edited = spliceFields(BodyBytes.of(withOptions), scanJson(withOptions, 64), JSON.parse(withOptions.toString()) as Record<string, unknown>, { stream_options: { include_usage: true } });
    expect(whole(edited)).to.equal('{"stream_options":{"include_usage":true},"model":"a"}');
  });

  it('splices a body that came in chunks as it would the same bytes in one, copying none of them (issue #17)', () => {
    const random = seededRandom(17);
    const text = JSON.stringify({ model: 'a', stream: true, messages: [{ role: 'user', content: 'x'.repeat(300) }], tools: [{ name: 'édit' }] });
    const raw = Buffer.from(text);
    const body = JSON.parse(text) as Record<string, unknown>;
    const edits = { model: 'claude-sonnet-4-5-20250929', stream_options: { include_usage: true } };
    const expected = whole(spliceFields(BodyBytes.of(raw), scanJson(raw, 64), body, edits));
    expect(JSON.parse(expected)).to.deep.equal({ ...body, ...edits });
    for (let i = 0; i < 300; i++) {
      const pieces = chunked(raw, random, 6);
      const out = spliceFields(pieces, scanJson(raw, 64), body, edits);
      expect(whole(out)).to.equal(expected);
      expect(out.length).to.equal(Buffer.byteLength(expected));
      // Every byte the client sent is sent from its own chunk, not from a copy.
      const sent = out.chunks.filter((chunk) => pieces.chunks.some((piece) => piece.buffer === chunk.buffer));
      expect(sent.reduce((n, chunk) => n + chunk.length, 0)).to.equal(raw.length - '"a"'.length);
    }
  });

  it('agrees with JSON.parse on strings of every length around where it stops looking itself (issue #17)', () => {
    // closingQuote looks through a string's first 32 bytes itself, then calls Buffer#indexOf: quotes
    // and backslashes land on both sides of that line, and on it.
    const random = seededRandom(17);
    const bits = ['a', 'model', '"', '\\', '\\"', 'usage', 'é', ' ', '}', ']'];
    const text = (): string => {
      let out = '';
      const length = Math.floor(random() * 90);
      while (out.length < length) out += bits[Math.floor(random() * bits.length)] ?? '';
      return out;
    };
    for (let i = 0; i < 1_500; i++) {
      const value = { [text()]: text(), model: text(), usage: { input_tokens: i, note: text(), nested: { usage: text() } }, [text()]: [text(), { model: text() }], tail: text() };
      const body = JSON.stringify(value, null, i % 3);
      const parsed = JSON.parse(body) as Record<string, unknown>;
      const range = scan(body).fields.get('model');
      expect(range, body).not.to.equal(undefined);
      expect(JSON.parse(Buffer.from(body).toString('utf8', range!.start, range!.end)), body).to.deep.equal(parsed['model']);
      const usage = usageValueOf(Buffer.from(body), 64);
      expect(usage?.closed, body).to.equal(true);
      expect(usage?.value, body).to.deep.equal(parsed['usage']);
    }
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

describe('usageValueOf read from the end of a whole answer (issue #17, eighteenth session)', () => {
  const both = (text: string, depth = 64) => {
    const buf = Buffer.from(text);
    return { fromEnd: usageValueOf(buf, depth, true), forward: usageValueOf(buf, depth, false) };
  };

  it('finds what the forward scan finds on random answers: usage anywhere, nested and in-string look-alikes, escapes, any spacing', () => {
    const random = seededRandom(18);
    const bits = ['a', 'usage', '"usage"', '"', '\\', '\\"', '\\\\', 'é', ' ', '{', '}', '[', ']', ':', ','];
    const text = (): string => {
      let out = '';
      const length = Math.floor(random() * 70);
      while (out.length < length) out += bits[Math.floor(random() * bits.length)] ?? '';
      return out;
    };
    const usage = (i: number) => ({ prompt_tokens: i, nested: { usage: { usage: text() } }, [text()]: [text(), { usage: 1 }] });
    let found = 0;
    for (let i = 0; i < 3_000; i++) {
      const entries: [string, unknown][] = [[text(), text()], ['choices', [{ message: { content: text(), usage: text() } }]], [text(), { usage: usage(-i) }]];
      // Usage last (as OpenAI sends it), first, in the middle, twice, or not at all.
      const where = i % 5;
      if (where === 0) entries.push(['usage', usage(i)]);
      else if (where === 1) entries.unshift(['usage', usage(i)]);
      else if (where === 2) entries.splice(1, 0, ['usage', usage(i)]);
      else if (where === 3) entries.push(['usage', usage(i)], [text(), null], ['usage', random() < 0.5 ? null : usage(i + 1)]);
      // Written pair by pair, so a key can come twice (JSON.parse keeps the last, as both scans do).
      const space = i % 3 === 0 ? '' : ' \n\t'.slice(0, i % 3);
      const body = `{${space}${entries.map(([k, v]) => `${JSON.stringify(k)}${space}:${space}${JSON.stringify(v, null, i % 3)}`).join(`,${space}`)}${space}}${i % 7 === 0 ? ' \r\n' : ''}`;
      const { fromEnd, forward } = both(body);
      expect(fromEnd, body).to.deep.equal(forward);
      if (fromEnd !== undefined) found++;
      expect(fromEnd?.value, body).to.deep.equal((JSON.parse(body) as Record<string, unknown>)['usage']);
    }
    expect(found).to.be.above(2_000);
  });

  it('agrees on a usage that is not an object, and on spacing around its colon', () => {
    for (const body of ['{"usage":null}', '{"a":1,"usage" :\t12 }', '{"usage":"x\\"y"}', '{ "usage" : [1,{"usage":2}] }\r\n', '{"a":"usage","b":1}', '{"usage":{}}']) {
      const { fromEnd, forward } = both(body);
      expect(fromEnd, body).to.deep.equal(forward);
    }
  });

  it('falls back to the forward scan where the end is not a top-level object, and refuses what nests too deep', () => {
    for (const body of ['[{"usage":1}]', '{"usage":{"a":1}', 'x{"usage":{}}', '{"usage":{"a":"}', '', '  ']) {
      const { fromEnd, forward } = both(body);
      expect(fromEnd, body).to.deep.equal(forward);
    }
    // Too deep where walked: refused both ways, and at the limit, found both ways.
    const deep = `{"usage":${'['.repeat(70)}${']'.repeat(70)}}`;
    expect(both(deep).fromEnd).to.equal(undefined);
    expect(both(deep).forward).to.equal(undefined);
    expect(both(deep, 71).fromEnd?.range).to.deep.equal(both(deep, 71).forward?.range);
    expect(both(deep, 71).fromEnd).not.to.equal(undefined);
    expect(both(deep, 70).fromEnd).to.equal(undefined);
    // Too deep before `usage`, where the walk from the end does not go: the value JSON.parse gives.
    const deepFirst = `{"a":${'['.repeat(70)}${']'.repeat(70)},"usage":{"prompt_tokens":3}}`;
    expect(both(deepFirst).forward).to.equal(undefined);
    expect(both(deepFirst).fromEnd?.value).to.deep.equal({ prompt_tokens: 3 });
  });

  it('is asked only of whole answers: a cut one can end with an inner object whose own usage it would take', () => {
    const cut = '{"id":"x","usage":{"usage":{"prompt_tokens":0}}';
    expect(usageValueOf(Buffer.from(cut), 64, false)?.closed).to.equal(false);
    // Read from the end, the cut answer's inner object looks like the whole answer.
    expect(usageValueOf(Buffer.from(cut), 64, true)?.value).to.deep.equal({ prompt_tokens: 0 });
  });
});
