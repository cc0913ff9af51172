import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { chatRequestSchema, countTokensRequestSchema, messagesRequestSchema } from '../../src/formats/request-schemas.ts';
import { checkRequest, type CheckedEndpoint } from '../../src/http/request-check.ts';
import { checkedRequestText } from '../../src/usage/checked-text.ts';
import { jsonText } from '../../src/http/json-text.ts';
import { chatRequestText, messagesRequestText } from '../../src/usage/request-text.ts';

/**
 * The byte-level request checks stand in for JSON.parse and zod on native routes (issue #17), so
 * they must never accept what either refuses, and must read `model`, `stream`, the hold's numbers
 * and the splice ranges exactly as JSON.parse does. Property-tested on seeded random mutations of
 * real request shapes (the Claude Code fixture, SDK-shaped Chat and Messages requests).
 */
const SCHEMAS: Record<CheckedEndpoint, z.ZodType> = { messages: messagesRequestSchema, count_tokens: countTokensRequestSchema, chat_completions: chatRequestSchema };
const fixture = JSON.parse(readFileSync(new URL('../fixtures/claude-code/claude-code-request.json', import.meta.url), 'utf8')) as Record<string, unknown>;

const BASES: [CheckedEndpoint, Record<string, unknown>][] = [
  ['messages', { model: 'claude-sonnet-4-6', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] }],
  ['messages', { ...fixture, stream: true }],
  [
    'messages',
    {
      model: 'claude-opus-4-1', max_tokens: 1024, stream: false, temperature: 0.5, top_p: 1, top_k: 5, stop_sequences: ['END'], metadata: { user_id: 'u' },
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      tools: [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
      tool_choice: { type: 'auto' }, thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris → now?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '12 °C' }] },
        { role: 'system', content: 'mid-conversation' },
      ],
      n: 2, max_output_tokens: 9,
    },
  ],
  ['count_tokens', { model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 'x', stream: true }],
  ['chat_completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] }],
  [
    'chat_completions',
    {
      model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true, extra: 1 }, temperature: 1.5, top_p: 0.9, frequency_penalty: -1, presence_penalty: 2,
      stop: ['a', 'b'], n: 3, max_tokens: 100, max_completion_tokens: 200, max_output_tokens: 7,
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'developer', content: [{ type: 'text', text: 'dev' }] },
        { role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', content: '42', tool_call_id: 'c1' },
        { role: 'function', content: null, name: 'f' },
        { role: 'assistant' },
      ],
    },
  ],
];

/** A small seeded PRNG (mulberry32): the same cases on every run. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const VALUES: unknown[] = [
  '', 'x', 'user', 'assistant', 'system', 'tool', 'function', 'developer', 'bot', 'text', 0, 1, -1, 1.5, 2, 3, 128, 129, 0.5, -2.5, 1e21, true, false, null,
  [], [{}], [{ type: 'text' }], [{ type: '' }], [{ name: 'n' }], ['a'], ['a', 'b', 'c', 'd', 'e'], {}, { type: 'x' }, { include_usage: true }, { include_usage: 'yes' },
  { user_id: null }, { user_id: 5 }, 'line\nbreak', 'quote"and\\slash', 'é → 中文', '\u0000',
];
const KEYS = ['model', 'messages', 'role', 'content', 'type', 'name', 'tools', 'system', 'stream', 'stream_options', 'include_usage', 'max_tokens', 'n', 'stop', 'temperature', 'top_p', 'top_k', 'tool_call_id', 'metadata', 'user_id', 'max_completion_tokens', 'max_output_tokens', 'other'];

type Node = Record<string, unknown> | unknown[];

/** Every object and array in a value, with the value itself. */
function containers(value: unknown, out: Node[] = []): Node[] {
  if (Array.isArray(value)) {
    out.push(value);
    for (const item of value) containers(item, out);
  } else if (typeof value === 'object' && value !== null) {
    out.push(value as Record<string, unknown>);
    for (const item of Object.values(value)) containers(item, out);
  }
  return out;
}

/** One to three value-level edits: replace, delete or add a member or an item. */
function mutate(base: Record<string, unknown>, random: () => number): Record<string, unknown> {
  const copy = structuredClone(base);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const edits = 1 + Math.floor(random() * 3);
  for (let e = 0; e < edits; e++) {
    // Near the top more often: that is where the rules are.
    const nodes = containers(copy);
    const node = random() < 0.4 ? copy : pick(nodes.slice(0, Math.max(1, Math.min(nodes.length, 40))));
    const value = structuredClone(pick(VALUES));
    if (Array.isArray(node)) {
      const at = Math.floor(random() * (node.length + 1));
      const action = random();
      if (action < 0.4 && node.length > 0) node.splice(Math.min(at, node.length - 1), 1);
      else if (action < 0.7) node.splice(at, 0, value);
      else node[Math.min(at, Math.max(0, node.length - 1))] = value;
    } else {
      const keys = Object.keys(node);
      const action = random();
      if (action < 0.3 && keys.length > 0) delete node[pick(keys)];
      else if (action < 0.7 && keys.length > 0) node[pick(keys)] = value;
      else node[pick(KEYS)] = value;
    }
  }
  return copy;
}

/** Byte-level damage JSON.stringify never makes: truncation, stray bytes, raw control bytes, duplicate or escaped keys. */
function damage(text: string, random: () => number): string {
  const at = Math.floor(random() * text.length);
  const edits = [
    () => text.slice(0, at),
    () => `${text.slice(0, at)}\n${text.slice(at)}`,
    () => `${text.slice(0, at)}\\${text.slice(at)}`,
    () => `${text.slice(0, at)}\\u12${text.slice(at)}`,
    () => `${text.slice(0, at)}"${text.slice(at)}`,
    () => `${text.slice(0, at)},${text.slice(at)}`,
    () => `${text.slice(0, at)}\u0001${text.slice(at)}`,
    () => text.replace('"model"', '"mod\\u0065l"'),
    () => text.replace('"role"', '"r\\u006fle"'),
    () => text.replace('"user"', '"us\\u0065r"'),
    () => text.replace(/\}\s*$/, ',"model":"other"}'),
    () => text.replace(/\}\s*$/, ',"stream":true}'),
    () => text.replace(/\}\s*$/, ',"n":5}'),
    () => text.replace('"role":', '"role":"user","role":'),
    () => `\ufeff${text}`,
    () => `${text} x`,
    () => text.replace(/(\d)(\D)/, '$1e400$2'),
    () => text.replace('true', 'tru'),
  ];
  return (edits[Math.floor(random() * edits.length)] as () => string)();
}

interface Verdict {
  accepted: boolean;
}

/** Checks one body against JSON.parse and zod; returns whether the byte check accepted it. */
function verify(endpoint: CheckedEndpoint, text: string, mustAccept: boolean): Verdict {
  const raw = Buffer.from(text);
  const checked = checkRequest(raw, endpoint, 128);
  let body: unknown;
  let parsed = true;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    parsed = false;
  }
  const valid = parsed && typeof body === 'object' && body !== null && !Array.isArray(body) && SCHEMAS[endpoint].safeParse(body).success;
  if (checked === null) {
    if (mustAccept) expect(valid, `refused but valid: ${text.slice(0, 300)}`).to.equal(false);
    return { accepted: false };
  }
  if (!valid && process.env.DEBUG_CHECK) console.log(parsed, JSON.stringify(SCHEMAS[endpoint].safeParse(body).error?.issues), text.length < 3000 ? text : text.slice(0, 200));
  expect(valid, `accepted but invalid: ${text.slice(0, 300)}`).to.equal(true);
  const b = body as Record<string, unknown>;
  expect(checked.head['model']).to.equal(b['model']);
  expect(checked.head['stream'], 'stream').to.equal(b['stream'] === true ? true : undefined);
  for (const name of ['n', 'max_tokens', 'max_completion_tokens', 'max_output_tokens']) {
    expect(checked.head[name], name).to.equal(typeof b[name] === 'number' ? b[name] : undefined);
  }
  if ('stream_options' in b && endpoint === 'chat_completions') expect(checked.head['stream_options']).to.deep.equal(b['stream_options']);
  for (const [name, range] of checked.scan.fields) {
    expect(JSON.parse(raw.toString('utf8', range.start, range.end)), name).to.deep.equal(b[name]);
  }
  expect(raw[checked.scan.end]).to.equal(0x7d);
  expect(raw.toString('utf8', checked.scan.end + 1).trim()).to.equal('');
  // The estimate's text, read element by element from the bytes, is the whole body's, also when remembered.
  const format = endpoint === 'chat_completions' ? 'chat' : 'messages';
  const tools = checked.scan.fields.get('tools');
  // The tools as the unchecked path reads them (input-tokens.ts).
  const toolsText = tools ? jsonText(raw.subarray(tools.start, tools.end)) : undefined;
  const expected = format === 'messages' ? messagesRequestText(b, toolsText) : chatRequestText(b, toolsText);
  expect(checkedRequestText(format, raw, checked.elements, 'check', tools), 'input text').to.deep.equal(expected);
  expect(checkedRequestText(format, raw, checked.elements, 'check', tools), 'input text, remembered').to.deep.equal(expected);
  return { accepted: true };
}

describe('byte-level request checks', () => {
  it('accept the real request shapes, and read them as JSON.parse does', () => {
    for (const [endpoint, body] of BASES) {
      expect(verify(endpoint, JSON.stringify(body), true).accepted, `${endpoint}: ${JSON.stringify(body).slice(0, 80)}`).to.equal(true);
      expect(verify(endpoint, JSON.stringify(body, null, 2), true).accepted).to.equal(true);
    }
  });

  it('never accept what JSON.parse or zod refuse, and refuse nothing valid a serialiser writes (6,000 seeded mutations)', () => {
    const random = prng(Number(process.env.CHECK_SEED ?? 17));
    let accepted = 0;
    let refused = 0;
    for (let i = 0; i < 6000; i++) {
      const [endpoint, base] = BASES[i % BASES.length] as [CheckedEndpoint, Record<string, unknown>];
      const mutant = mutate(base, random);
      const pretty = random() < 0.2;
      const text = JSON.stringify(mutant, null, pretty ? 1 : undefined);
      if (verify(endpoint, text, true).accepted) accepted++;
      else refused++;
    }
    // Both sides are exercised: many mutants stay valid, many do not.
    expect(accepted).to.be.greaterThan(1000);
    expect(refused).to.be.greaterThan(1000);
  });

  it('never accept damaged bytes that JSON.parse or zod refuse (3,000 seeded cases)', () => {
    const random = prng(Number(process.env.CHECK_SEED ?? 2026) + 1);
    for (let i = 0; i < 3000; i++) {
      const [endpoint, base] = BASES[i % BASES.length] as [CheckedEndpoint, Record<string, unknown>];
      verify(endpoint, damage(JSON.stringify(random() < 0.5 ? base : mutate(base, random)), random), false);
    }
  });

  it('leave to the full parse what they cannot vouch for: escaped keys, repeated keys, deep nesting', () => {
    const small = '{"model":"gpt-4o","messages":[{"role":"user","content":"x"}]';
    expect(checkRequest(Buffer.from(`${small},"\\u006e":2}`), 'chat_completions', 128)).to.equal(null);
    expect(checkRequest(Buffer.from(`${small},"model":"gpt-4o"}`), 'chat_completions', 128)).to.equal(null);
    expect(checkRequest(Buffer.from(`${small},"x":${'['.repeat(130)}${']'.repeat(130)}}`), 'chat_completions', 128)).to.equal(null);
    expect(checkRequest(Buffer.from(`${small},"x":${'['.repeat(100)}${']'.repeat(100)}}`), 'chat_completions', 128)).to.not.equal(null);
  });
});
