import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { CODECS } from '../../src/formats/canonical/codecs.ts';
import type { Json } from '../../src/formats/convert/json.ts';
import { EventTemplate, EventTemplates, holesAt, type Holes } from '../../src/formats/event-template.ts';
import { parsedBatches } from '../../src/formats/upstream-events.ts';
import type { SseEvent } from '../../src/plugin-host/api.ts';

// A translated stream's events built from a template instead of parsed must be exactly what
// JSON.parse gives, and anything a template cannot vouch for must be parsed (issue #17).
const chunk = (content: string, extra: Json = {}): string =>
  JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }], ...extra });
const CONTENT = holesAt([['choices', 0, 'delta', 'content'], ['obfuscation']]);

function learnt(text: string, holes: Holes = CONTENT, reuse = false, value = JSON.parse(text) as Json): EventTemplate {
  const template = EventTemplate.learn(text, value, holes, reuse);
  if (!template) throw new Error(`not learnt: ${text}`);
  return template;
}

/** A small deterministic generator, so a failure names its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const ALPHABET = ['a', ' ', 'é', '中', '😀', '"', '\\', '/', '\n', '\t', '\u0000', '\u001f', '\u2028', '{', '}', ':', ',', 'u', '0'];

describe('event templates: events built without JSON.parse', () => {
  it('builds what JSON.parse gives for the same shape with other text, each event its own objects', () => {
    const template = learnt(chunk('Hello'));
    const first = template.match(chunk(' world'));
    const second = template.match(chunk('!'));
    expect(first).to.deep.equal(JSON.parse(chunk(' world')));
    expect(second).to.deep.equal(JSON.parse(chunk('!')));
    const choices = (value: Json | undefined): Json[] => (value?.['choices'] ?? []) as Json[];
    expect(choices(first)).to.not.equal(choices(second));
    expect(choices(first)[0]).to.not.equal(choices(second)[0]);
    expect(choices(first)[0]?.['delta']).to.not.equal(choices(second)[0]?.['delta']);
  });

  it('refills one event with reuse, each match what JSON.parse gives, for a consumer done with each before the next', () => {
    const parsed = JSON.parse(chunk('Hi', { obfuscation: 'x1' })) as Json;
    const template = learnt(chunk('Hi', { obfuscation: 'x1' }), CONTENT, true, parsed);
    const next = random(5);
    const text = (length: number): string => Array.from({ length }, () => ALPHABET[Math.floor(next() * ALPHABET.length)]).join('');
    let last = chunk('a', { obfuscation: 'b' });
    const first = template.match(last);
    expect(first, 'the event it was learnt from').to.equal(parsed);
    expect(first).to.deep.equal(JSON.parse(last));
    for (let i = 0; i < 500; i++) {
      last = chunk(text(Math.floor(next() * 12)), { obfuscation: text(Math.floor(next() * 4)) });
      const built = template.match(last);
      expect(built, last).to.equal(first);
      expect(built, last).to.deep.equal(JSON.parse(last));
    }
    // A template learnt without reuse builds a new event each time, and leaves the refilled one alone.
    const own = learnt(chunk('Hi', { obfuscation: 'x1' })).match(chunk('own', { obfuscation: '' }));
    expect(own).to.not.equal(first);
    expect(own).to.deep.equal(JSON.parse(chunk('own', { obfuscation: '' })));
    expect(first).to.deep.equal(JSON.parse(last));
  });

  it('decodes a hole with escapes, as a tool call\'s arguments have', () => {
    const holes = holesAt([['choices', 0, 'delta', 'tool_calls', 0, 'function', 'arguments']]);
    const tool = (args: string): string => JSON.stringify({ id: 'c', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: args } }] } }] });
    const template = learnt(tool('location'), holes);
    for (const args of ['{"', '":"Florence, Italy"}', '\\', 'a\u0001b', '\ud83d\ude00 \u2028']) expect(template.match(tool(args)), args).to.deep.equal(JSON.parse(tool(args)));
  });

  it('fills several holes, and a hole may be empty', () => {
    const template = learnt(chunk('Hi', { obfuscation: 'x1' }));
    for (const [content, pad] of [['', ''], ['a"b', 'Zq9'], ['long text', '']]) {
      const text = chunk(content ?? '', { obfuscation: pad });
      expect(template.match(text)).to.deep.equal(JSON.parse(text));
    }
  });

  it('agrees with JSON.parse on every text JSON.stringify writes for the shape, and refuses the rest', () => {
    const next = random(17);
    const text = (length: number): string => Array.from({ length }, () => ALPHABET[Math.floor(next() * ALPHABET.length)]).join('');
    const template = learnt(chunk('seed', { obfuscation: 'pad' }));
    let matched = 0;
    let refused = 0;
    for (let i = 0; i < 3000; i++) {
      const good = chunk(text(Math.floor(next() * 12)), { obfuscation: text(Math.floor(next() * 4)) });
      expect(template.match(good), good).to.deep.equal(JSON.parse(good));
      // One character changed, added or removed anywhere: a template may build the event only
      // when JSON.parse gives the same; where JSON.parse fails, it must refuse.
      const at = Math.floor(next() * good.length);
      const cut = next() < 0.5 ? 0 : 1;
      const mutated = good.slice(0, at) + (next() < 0.3 ? '' : text(1)) + good.slice(at + cut);
      let parsed: unknown;
      try {
        parsed = JSON.parse(mutated);
      } catch {
        parsed = undefined;
      }
      const built = template.match(mutated);
      if (built === undefined) refused++;
      else {
        matched++;
        expect(built, mutated).to.deep.equal(parsed);
      }
    }
    expect(matched, 'mutations built').to.be.greaterThan(100);
    expect(refused, 'mutations refused').to.be.greaterThan(100);
  });

  it('is not learnt from text that is not its value\'s own serialization', () => {
    const cases = [
      '{"id":"c", "choices":[{"index":0,"delta":{"content":"Hi"}}]}', // whitespace
      '{"id":"c","choices":[{"index":0,"delta":{"content":"caf\\u00e9"}}]}', // a needless escape
      '{"id":"c","id":"d","choices":[{"index":0,"delta":{"content":"Hi"}}]}', // a duplicate key
      '{"b":1,"1":2,"choices":[{"index":0,"delta":{"content":"Hi"}}]}', // an integer key JSON.parse reorders
      '{"id":"\\u00000","choices":[{"index":0,"delta":{"content":"Hi"}}]}', // the sentinel's own text
      '{"id":"c","choices":[{"index":0,"delta":{"role":"assistant"}}]}', // no hole
    ];
    for (const text of cases) expect(EventTemplate.learn(text, JSON.parse(text) as Json, CONTENT), text).to.equal(undefined);
  });

  it('refuses another shape, a raw control character, a bad escape and trailing text', () => {
    const template = learnt(chunk('Hi'));
    const refused = [
      chunk('Hi', { usage: null }),
      chunk('Hi').replace('"Hi"', '"H\ni"'),
      chunk('Hi').replace('"Hi"', '"H\\xi"'),
      chunk('Hi').replace('"Hi"', '"H\\"'),
      `${chunk('Hi')} `,
      chunk('Hi').slice(0, -1),
    ];
    for (const text of refused) expect(template.match(text), text).to.equal(undefined);
  });

  it('learns from an event only after another parsed one with a hole, keeps four, and tries eight', () => {
    const shaped = (n: number, content: string): string => chunk(content, { [`k${n}`]: n });
    const templates = new EventTemplates(CONTENT);
    const see = (n: number): void => templates.learn(shaped(n, 'a'), JSON.parse(shaped(n, 'a')) as Json);
    const none = '{"id":"c","choices":[]}';
    see(0);
    expect(templates.match(shaped(0, 'b')), 'after one event').to.equal(undefined);
    templates.learn(none, JSON.parse(none) as Json);
    see(0);
    expect(templates.match(shaped(0, 'b')), 'after one without a hole between').to.equal(undefined);
    see(0);
    expect(templates.match(shaped(0, 'b')), 'after two in a row').to.deep.equal(JSON.parse(shaped(0, 'b')));
    // A built event ends a run: the next parsed one starts another.
    see(1);
    expect(templates.match(shaped(0, 'c'))).to.not.equal(undefined);
    see(1);
    expect(templates.match(shaped(1, 'b')), 'a run ended by a built event').to.equal(undefined);
    // Four more shapes (two events each): the first shape is dropped, the other four are kept.
    for (let n = 1; n < 5; n++) {
      see(n);
      see(n);
    }
    expect(templates.match(shaped(0, 'b')), 'the first, dropped').to.equal(undefined);
    for (let n = 1; n < 5; n++) expect(templates.match(shaped(n, 'b'))).to.deep.equal(JSON.parse(shaped(n, 'b')));
    // Events without a hole do not use up the tries: five learnt so far, three more.
    for (let n = 0; n < 20; n++) templates.learn(none, JSON.parse(none) as Json);
    for (let n = 5; n < 8; n++) {
      see(n);
      see(n);
    }
    expect(templates.match(shaped(7, 'b'))).to.deep.equal(JSON.parse(shaped(7, 'b')));
    see(8);
    see(8);
    expect(templates.match(shaped(8, 'b')), 'the ninth is not learnt').to.equal(undefined);
  });
});

describe('event templates in a translated stream\'s parsers', () => {
  const events = (path: string): SseEvent[] =>
    readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8')
      .split('\n\n')
      .filter((block) => block.includes('data: '))
      .map((block) => {
        const event = /^event: (.*)$/m.exec(block)?.[1];
        return { event, data: block.slice(block.indexOf('data: ') + 6) };
      });
  const parsed = (format: 'chat' | 'messages', list: readonly SseEvent[], keepText: boolean): Json[] => {
    const parser = CODECS[format].eventParser?.('up', keepText);
    if (!parser) throw new Error(`${format} has no event parser`);
    const out: Json[] = [];
    for (const event of list) if (parser.push(event, out)) break;
    return out;
  };

  // A delta's strings, by their keys: the holes, and OpenRouter's copy of its reasoning text.
  const DELTA_STRING = /"(content|text|reasoning|arguments|partial_json|thinking)":"((?:[^"\\]|\\.)*)"/g;

  for (const [format, path, repeat] of [
    ['chat', 'openai/text.sse', 'content'],
    ['chat', 'openai/tool-call.sse', 'arguments'],
    ['chat', 'openai/openrouter-reasoning.sse', 'reasoning'],
    ['messages', 'anthropic/text.sse', 'text_delta'],
    ['messages', 'anthropic/thinking-tool.sse', 'partial_json'],
  ] as const) {
    it(`gives the recorded ${path} exactly as parsed, with its deltas repeated and changed`, () => {
      const list = events(path);
      // Each delta once more with other text, so that the templates learnt from the first are used.
      const more = list.flatMap((event) =>
        event.data.includes(repeat) ? [event, { ...event, data: event.data.replace(DELTA_STRING, '"$1":"$2 x\\"\\\\y"') }] : [event],
      );
      const changed = more.filter((event) => !list.includes(event)).length;
      expect(changed, 'deltas repeated').to.be.greaterThan(0);
      expect(parsed(format, more, false)).to.deep.equal(parsed(format, more, true));
    });
  }

  it('a translated route\'s parser refills its events, which parsedBatches, holding several at once, refuses', async () => {
    const parser = CODECS.chat.eventParser?.('up', false, true);
    if (!parser) throw new Error('chat has no event parser');
    expect(parser.reusesEvents).to.equal(true);
    expect(CODECS.chat.eventParser?.('up', false)?.reusesEvents).to.equal(false);
    expect(CODECS.chat.eventParser?.('up', true, true)?.reusesEvents, 'text kept: no templates').to.equal(false);
    const seen: Json[] = [];
    for (const text of ['a', 'b', 'c', 'd']) {
      const out: Json[] = [];
      parser.push({ event: undefined, data: chunk(text) }, out);
      expect(out[0]).to.deep.equal(JSON.parse(chunk(text)));
      seen.push(...out);
    }
    expect(seen[3], 'the fourth built from the third\'s template').to.equal(seen[2]);
    async function* one(): AsyncGenerator<readonly SseEvent[]> {
      yield [{ event: undefined, data: chunk('e') }];
    }
    let refused: unknown;
    try {
      for await (const batch of parsedBatches(one(), parser)) expect(batch).to.equal(undefined);
    } catch (err) {
      refused = err;
    }
    expect(String(refused)).to.match(/each their own/);
  });

  it('still fails on an in-band error and on malformed JSON after templates are learnt', () => {
    const parser = CODECS.chat.eventParser?.('up', false);
    if (!parser) throw new Error('chat has no event parser');
    const out: Json[] = [];
    for (const text of ['a', 'b', 'c']) parser.push({ event: undefined, data: chunk(text) }, out);
    expect(out).to.have.length(3);
    expect(() => parser.push({ event: undefined, data: chunk('d').replace('"d"', '"\\q"') }, out)).to.throw(/not JSON/);
    expect(() => parser.push({ event: undefined, data: '{"error":{"message":"boom","type":"server_error"}}' }, out)).to.throw(/boom/);
  });
});
