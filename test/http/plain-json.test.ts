import { expect } from 'chai';
import { plainObjectOf } from '../../src/http/plain-json.ts';
import { seededRandom } from '../support/random.ts';

const read = (text: string, pad = ''): unknown => {
  const buf = Buffer.from(`${pad}${text}${pad}`);
  return plainObjectOf(buf, pad.length, buf.length - pad.length);
};
/** What JSON.parse makes of it, or 'throws'. */
const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return 'throws';
  }
};

describe('plainObjectOf', () => {
  it('reads the usage values and usage events real APIs send', () => {
    const values = [
      '{"prompt_tokens":12,"completion_tokens":9,"total_tokens":21}',
      '{"input_tokens":12,"input_tokens_details":{"cached_tokens":0},"output_tokens":9,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":21}',
      '{"input_tokens":25,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1,"service_tier":"standard","cache_creation":null}',
      '{ "type": "duration", "seconds": 60 }',
      '{\n  "prompt_tokens": 12,\r\n\t"completion_tokens": -0, "ok": true, "no": false }',
      '{}',
      // The events a stream's usage comes in (the simulator's and the APIs' shapes).
      '{"type":"message_start","message":{"id":"msg_sim","type":"message","role":"assistant","content":[],"model":"sim","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}}',
      '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":64}}',
      '{"id":"chatcmpl-sim","object":"chat.completion.chunk","created":1,"model":"sim","choices":[],"usage":{"prompt_tokens":25,"completion_tokens":64,"total_tokens":89}}',
      '{"a":[1,[2,[]],{"b":[null,true,"x"]}], "c" : [ ] }',
    ];
    for (const text of values) {
      const value = read(text, ',"x":1}');
      expect(value, text).to.deep.equal(JSON.parse(text));
      expect(Object.keys(value as object), text).to.deep.equal(Object.keys(JSON.parse(text) as object));
    }
    expect(Object.is((read('{"a":-0}') as { a: number }).a, -0)).to.equal(true);
  });

  it('reads every key as written, past the keys it remembers for their length', () => {
    // Forty distinct keys of one length, twice over: the reader keeps strings for the first few only.
    const keys = Array.from({ length: 40 }, (_, i) => `k${String(i).padStart(3, '0')}`);
    for (let pass = 0; pass < 2; pass++) {
      const text = `{${keys.map((key, i) => `"${key}":${i + pass}`).join(',')}}`;
      expect(read(text)).to.deep.equal(JSON.parse(text));
    }
  });

  it('leaves to JSON.parse what is not plain, and refuses what JSON.parse refuses', () => {
    const notPlain = [
      '{"a":[1,]}', '{"a":[,1]}', '{"a":[1}', '{"a":[1 2]}', '{"a":1.5}', '{"a":1e3}', '{"a":1E3}', '{"a":"\\u0041"}', '{"a\\"b":1}', '{"é":1}', '{"a":"é"}',
      '{"__proto__":{"x":1}}', '{"a":1234567890123456}', '{"a":01}', '{"a":-}', '{"a":1,}', '{,"a":1}', '{"a" 1}',
      '{"a":1', '{"a":1}}', '{"a":1} x', '{"a":nul}', '{"a":nullx}', '{"a":12x}', '{"a":1\u000b}', 'null', '[1]', '"a"', '',
      '{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"i":{"j":1}}}}}}}}}}', '{"a":[[[[[[[[[1]]]]]]]]]}',
    ];
    for (const text of notPlain) expect(read(text), text).to.equal(undefined);
  });

  it('agrees with JSON.parse on random plain-looking text, or leaves it to JSON.parse', () => {
    const random = seededRandom(34);
    const bits = ['{', '}', '"a"', '"b_c"', '"__proto__"', ':', ',', ' ', '\n', '0', '7', '-', '12', '.5', 'e2', 'null', 'true', 'false', '"x y"', '"\\n"', '[', ']', '9007199254740993'];
    let read_ = 0;
    for (let i = 0; i < 20_000; i++) {
      let text = '{';
      const length = Math.floor(random() * 24);
      while (text.length < length) text += bits[Math.floor(random() * bits.length)] ?? '';
      text += random() < 0.7 ? '}' : '';
      const value = read(text, random() < 0.5 ? ' ' : '');
      if (value === undefined) continue;
      read_++;
      const expected = parsed(text);
      expect(value, text).to.deep.equal(expected);
      expect(JSON.stringify(value), text).to.equal(JSON.stringify(expected));
    }
    // The generator must reach the plain path often enough for the check to mean something.
    expect(read_).to.be.greaterThan(500);
  });

  it('agrees with JSON.parse on random usage objects', () => {
    const random = seededRandom(35);
    const key = () => ['input_tokens', 'output_tokens', 'cached_tokens', 'x', 'service_tier'][Math.floor(random() * 5)] as string;
    const value = (depth: number): unknown => {
      const r = random();
      if (r < 0.5) return Math.floor(random() * 10 ** Math.floor(random() * 16)) * (random() < 0.1 ? -1 : 1);
      if (r < 0.6) return null;
      if (r < 0.7) return random() < 0.5;
      if (r < 0.8) return 'standard';
      return depth < 3 ? object(depth + 1) : 0;
    };
    const object = (depth: number): Record<string, unknown> => {
      const out: Record<string, unknown> = {};
      const n = Math.floor(random() * 6);
      for (let i = 0; i < n; i++) out[key()] = value(depth);
      return out;
    };
    for (let i = 0; i < 5_000; i++) {
      const text = JSON.stringify(object(0), null, random() < 0.3 ? 1 : undefined);
      expect(read(text), text).to.deep.equal(JSON.parse(text));
    }
  });
});
