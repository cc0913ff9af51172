import { expect } from 'chai';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { chatRequestSchema, countTokensRequestSchema, messagesRequestSchema, responsesRequestSchema } from '../../src/formats/request-schemas.ts';
import { checkRequest, type CheckedEndpoint, type CheckedRequest } from '../../src/http/request-check.ts';
import type { ElementRange } from '../../src/http/request-check-parts.ts';
import { checkedRequestText, recentElements } from '../../src/usage/checked-text.ts';
import { jsonText } from '../../src/http/json-text.ts';
import { chunked, splitAt } from '../support/body-bytes.ts';
import { chatRequestText, messagesRequestText, responsesRequestText } from '../../src/usage/request-text.ts';

/**
 * The byte-level request checks stand in for JSON.parse and zod on native routes (issue #17), so
 * they must never accept what either refuses, and must read `model`, `stream`, the hold's numbers
 * and the splice ranges exactly as JSON.parse does. Property-tested on seeded random mutations of
 * real request shapes (the Claude Code fixture, SDK-shaped Chat, Messages and Responses requests:
 * Codex CLI's, and the Vercel AI SDK's continuations by `item_reference`).
 */
const SCHEMAS: Record<CheckedEndpoint, z.ZodType> = {
  messages: messagesRequestSchema,
  count_tokens: countTokensRequestSchema,
  chat_completions: chatRequestSchema,
  responses: responsesRequestSchema,
  responses_input_tokens: responsesRequestSchema,
};
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
  ['responses', { model: 'gpt-5', max_output_tokens: 64, stream: false, input: 'Hi' }],
  [
    // Codex CLI's shape: instructions, function tools, a history of typed items, store off.
    'responses',
    {
      model: 'gpt-5-codex', instructions: 'You are Codex, a coding agent. Be terse → always.', stream: true, store: false, parallel_tool_calls: false,
      reasoning: { effort: 'medium', summary: 'auto' }, include: ['reasoning.encrypted_content'], prompt_cache_key: 'sess-1', tool_choice: 'auto',
      tools: [
        { type: 'function', name: 'shell', description: 'Runs a command', strict: false, parameters: { type: 'object', properties: { command: { type: 'array', items: { type: 'string' } } } } },
        { type: 'custom', name: 'apply_patch', description: 'Applies a patch', format: { type: 'grammar', syntax: 'lark', definition: 'start: x' } },
      ],
      input: [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: '<permissions>sandboxed</permissions>' }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Fix the failing test' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAA' }] },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Looking at the test' }], encrypted_content: 'gAAAAABo' },
        { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'shell', arguments: '{"command":["npm","test"]}' },
        { type: 'function_call_output', call_id: 'call_1', output: '1 failing' },
        { type: 'custom_tool_call', call_id: 'call_2', name: 'apply_patch', input: '*** Begin Patch' },
        { type: 'custom_tool_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: 'Done' }] },
        { type: 'message', role: 'assistant', id: 'msg_1', content: [{ type: 'output_text', text: 'Fixed.', annotations: [] }, { type: 'refusal', refusal: 'no' }] },
        { type: 'message', role: 'user', content: [{ type: 'input_file', filename: 'a.pdf', file_data: 'JVBERi0x' }] },
      ],
    },
  ],
  [
    // The Vercel AI SDK's continuation by reference, and the fields response-state reads.
    'responses',
    {
      model: 'gpt-5', previous_response_id: 'resp_1', store: true, background: false, conversation: null, instructions: null, stream: null, max_output_tokens: null, n: 2, max_tokens: 5,
      input: [
        { type: 'item_reference', id: 'msg_1' },
        { id: 'rs_1' },
        { id: 'msg_1' },
        { role: 'user', content: 'and then?' },
        { role: 'user', id: 'msg_2', content: [{ type: 'input_text', text: 'é → 中文' }] },
        { type: 'item_reference', id: 5 },
        {},
      ],
    },
  ],
  ['responses_input_tokens', { model: 'gpt-5', instructions: 'Count me', input: [{ role: 'user', content: 'x' }], tools: [{ type: 'web_search' }], previous_response_id: 'resp_2' }],
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
  'item_reference', 'message', 'input_text', 'msg_1', { type: 'item_reference', id: 'msg_9' }, { id: 'rs_9' }, { id: 7 }, [{ type: 'item_reference', id: 'x' }], { role: 'user', content: 'x' },
];
const KEYS = [
  'model', 'messages', 'role', 'content', 'type', 'name', 'tools', 'system', 'stream', 'stream_options', 'include_usage', 'max_tokens', 'n', 'stop', 'temperature', 'top_p', 'top_k', 'tool_call_id', 'metadata', 'user_id', 'max_completion_tokens', 'max_output_tokens', 'other',
  'input', 'instructions', 'previous_response_id', 'background', 'conversation', 'store', 'id', 'text', 'output',
];

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
    () => text.replace('"item_reference"', '"item\\u005freference"'),
    () => text.replace('"id":', '"id":"x","id":'),
    () => text.replace('"type":', '"type":"message","type":'),
    () => text.replace(/\}\s*$/, ',"store":false}'),
    () => text.replace(/\}\s*$/, ',"previous_response_id":"resp_x"}'),
  ];
  return (edits[Math.floor(random() * edits.length)] as () => string)();
}

/** The ids an input names by `item_reference`, by response-state.ts's rule, on the parsed input (the first 1,000). */
function referencesIn(input: unknown): string[] {
  const ids: string[] = [];
  for (const item of Array.isArray(input) ? (input as Record<string, unknown>[]) : []) {
    const reference = item['type'] === 'item_reference' || (item['type'] == null && item['role'] === undefined && typeof item['id'] === 'string');
    if (reference && typeof item['id'] === 'string') ids.push(item['id']);
    if (ids.length >= 1000) break;
  }
  return ids;
}

interface Verdict {
  accepted: boolean;
  /** An accepted Responses body whose input names items by reference. */
  references?: boolean;
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
  const responses = endpoint === 'responses' || endpoint === 'responses_input_tokens';
  if (responses) {
    // What response-state.ts reads, before and after the answer.
    for (const name of ['previous_response_id', 'background', 'conversation', 'store']) expect(checked.head[name], name).to.deep.equal(b[name]);
    expect(checked.references, 'references').to.deep.equal(referencesIn(b['input']));
  }
  for (const [name, range] of checked.scan.fields) {
    expect(JSON.parse(raw.toString('utf8', range.start, range.end)), name).to.deep.equal(b[name]);
  }
  expect(raw[checked.scan.end]).to.equal(0x7d);
  expect(raw.toString('utf8', checked.scan.end + 1).trim()).to.equal('');
  // The estimate's text, read element by element from the bytes, is the whole body's, also when remembered.
  const format = responses ? 'responses' : endpoint === 'chat_completions' ? 'chat' : 'messages';
  const tools = checked.scan.fields.get('tools');
  // The tools as the unchecked path reads them (input-tokens.ts).
  const toolsText = tools ? jsonText(raw.subarray(tools.start, tools.end)) : undefined;
  const expected = format === 'messages' ? messagesRequestText(b, toolsText) : format === 'chat' ? chatRequestText(b, toolsText) : responsesRequestText(b, toolsText);
  // Read from the body as chunks cut across its elements, as a socket may deliver it (body-bytes.ts).
  const pieces = splitAt(raw, [raw.length >> 2, raw.length >> 1, raw.length - 7]);
  expect(checkedRequestText(format, pieces, checked.elements, 'check', tools), 'input text').to.deep.equal(expected);
  expect(checkedRequestText(format, pieces, checked.elements, 'check', tools), 'input text, remembered').to.deep.equal(expected);
  return { accepted: true, references: (checked.references?.length ?? 0) > 0 };
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
    const responses = { accepted: 0, refused: 0, references: 0 };
    for (let i = 0; i < 6000; i++) {
      const [endpoint, base] = BASES[i % BASES.length] as [CheckedEndpoint, Record<string, unknown>];
      const mutant = mutate(base, random);
      const pretty = random() < 0.2;
      const text = JSON.stringify(mutant, null, pretty ? 1 : undefined);
      const verdict = verify(endpoint, text, true);
      if (verdict.accepted) accepted++;
      else refused++;
      if (endpoint === 'responses' || endpoint === 'responses_input_tokens') {
        responses[verdict.accepted ? 'accepted' : 'refused']++;
        if (verdict.references) responses.references++;
      }
    }
    // Both sides are exercised: many mutants stay valid, many do not; Responses ones too, with references.
    expect(accepted).to.be.greaterThan(1000);
    expect(refused).to.be.greaterThan(1000);
    if (process.env.DEBUG_CHECK) console.log(responses);
    expect(responses.accepted).to.be.greaterThan(500);
    expect(responses.refused).to.be.greaterThan(500);
    expect(responses.references).to.be.greaterThan(200);
  });

  it('never accept damaged bytes that JSON.parse or zod refuse (3,000 seeded cases)', () => {
    const random = prng(Number(process.env.CHECK_SEED ?? 2026) + 1);
    for (let i = 0; i < 3000; i++) {
      const [endpoint, base] = BASES[i % BASES.length] as [CheckedEndpoint, Record<string, unknown>];
      verify(endpoint, damage(JSON.stringify(random() < 0.5 ? base : mutate(base, random)), random), false);
    }
  });

  it('on random Responses bodies (fast-check), accept only what zod accepts, and read head, references and input text as the parsed body gives them', () => {
    // Each field mostly as the schema wants it, sometimes not: both sides are exercised.
    const mostly = <T, U>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<U>) => fc.oneof({ arbitrary: valid, weight: 12 }, { arbitrary: invalid, weight: 1 });
    const text = fc.oneof(fc.constantFrom('', 'x', 'item_reference', 'message', 'msg_1', 'é → 中文', 'quote"and\\slash', 'line\nbreak'), fc.string({ maxLength: 12 }));
    const filled = text.filter((t) => t !== '');
    const anything = fc.oneof(text, fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant([]), fc.constant({}), fc.constant({ id: 'conv_1' }));
    const part = fc.oneof(
      fc.record({ type: fc.constantFrom('input_text', 'output_text', 'summary_text'), text }, { requiredKeys: ['type'] }),
      fc.record({ type: fc.constantFrom('input_image', 'input_file', 'refusal', ''), file_data: text, refusal: text, image_url: text }, { requiredKeys: ['type'] }),
      anything,
    );
    const item = mostly(
      fc.record(
        {
          type: mostly(fc.oneof(fc.constantFrom('message', 'item_reference', 'function_call', 'function_call_output', 'custom_tool_call', 'custom_tool_call_output', 'reasoning', 'web_search_call'), filled), fc.constantFrom('', null, 3)),
          role: fc.oneof(fc.constantFrom('user', 'assistant', 'developer'), fc.constant(null), fc.integer()),
          id: fc.oneof(text, fc.integer(), fc.constant(null)),
          content: fc.oneof(text, fc.array(part, { maxLength: 3 }), anything),
          name: text,
          arguments: text,
          input: text,
          output: fc.oneof(text, fc.array(part, { maxLength: 2 })),
          summary: fc.array(fc.record({ type: fc.constant('summary_text'), text }), { maxLength: 2 }),
          encrypted_content: fc.oneof(text, fc.integer()),
        },
        { requiredKeys: [] },
      ),
      anything,
    );
    const body = fc.record(
      {
        model: mostly(fc.constantFrom('gpt-5', 'gpt-5-codex'), fc.constantFrom('', 3, null)),
        input: mostly(fc.oneof(text, fc.array(item, { maxLength: 6 })), anything),
        instructions: mostly(fc.oneof(text, fc.constant(null)), fc.integer()),
        stream: mostly(fc.oneof(fc.boolean(), fc.constant(null)), text),
        max_output_tokens: mostly(fc.oneof(fc.integer({ min: 1, max: 100_000 }), fc.constant(null)), fc.constantFrom(0, -1, 1.5, 1e21, 2 ** 53, '5')),
        previous_response_id: mostly(fc.oneof(filled, fc.constant(null)), fc.constantFrom('', 3)),
        background: anything,
        conversation: anything,
        store: anything,
        tools: fc.oneof(fc.array(fc.record({ type: fc.constantFrom('function', 'web_search'), name: text }), { maxLength: 2 }), anything),
        n: anything,
        max_tokens: anything,
        max_completion_tokens: anything,
        temperature: anything,
      },
      { requiredKeys: [] },
    ).map((b) => (b.model === undefined ? { ...b, model: 'gpt-5' } : b));
    let accepted = 0;
    fc.assert(
      fc.property(body, fc.boolean(), fc.constantFrom<CheckedEndpoint>('responses', 'responses_input_tokens'), (b, pretty, endpoint) => {
        if (verify(endpoint, JSON.stringify(b, null, pretty ? 1 : undefined), true).accepted) accepted++;
      }),
      { numRuns: 3000, seed: Number(process.env.CHECK_SEED ?? 14) },
    );
    if (process.env.DEBUG_CHECK) console.log({ accepted });
    expect(accepted, 'bodies accepted').to.be.within(600, 2400);
  });

  it('read a Responses input\'s references exactly, escapes included, and leave repeated fields to the full parse', () => {
    const ids = (text: string) => checkRequest(Buffer.from(text), 'responses', 128)?.references;
    expect(ids('{"model":"m","input":[{"type":"item_reference","id":"a"},{"id":"b"},{"id":"c","role":"user"},{"id":"d","type":"message"},{"id":5},{"type":"item_reference"}]}')).to.deep.equal(['a', 'b']);
    expect(ids('{"model":"m","input":[{"type":"item\\u005freference","id":"\\u00e9"},{"id":"b","type":"item_referencex"}]}')).to.deep.equal(['é']);
    expect(ids('{"model":"m","input":"just text"}')).to.deep.equal([]);
    // The first 1,000, as response-state looks up.
    const many = Array.from({ length: 1005 }, (_, i) => ({ type: 'item_reference', id: `i${i}` }));
    expect(ids(JSON.stringify({ model: 'm', input: many }))).to.deep.equal(many.slice(0, 1000).map((r) => r.id));
    // JSON.parse keeps the last of a repeated member; the check does not guess which: the full parse answers.
    expect(ids('{"model":"m","input":[{"id":"a","id":"b"}]}')).to.equal(undefined);
    expect(ids('{"model":"m","input":[{"type":"message","type":"item_reference","id":"a"}]}')).to.equal(undefined);
    expect(ids('{"model":"m","input":"x","store":false,"store":true}')).to.equal(undefined);
    expect(ids('{"model":"m","input":"x","previous_response_id":"a","previous_response_id":"b"}')).to.equal(undefined);
  });

  it('cross string bytes of any kind as JSON.parse does: escapes, escaped quotes and raw control bytes anywhere (4,000 seeded strings)', () => {
    // A string's closing quote is searched for once, and again only after an escape that takes it
    // (`\\"`); control bytes are found by one sticky pass over the body. Both are exercised here
    // with the bytes they are about, dense, in and around the one string whose bytes are random.
    const random = prng(Number(process.env.CHECK_SEED ?? 2026) + 2);
    const ALPHABET = ['"', '\\', '\\', 'n', 'u', '0', 'a', 'F', 'é', ' ', '\u0001', '\n', '\t', '\u001f', '/', '\\"'];
    let accepted = 0;
    for (let i = 0; i < 4000; i++) {
      const length = Math.floor(random() * 40);
      let inner = '';
      for (let j = 0; j < length; j++) inner += ALPHABET[Math.floor(random() * ALPHABET.length)];
      const text = `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"${inner}"}],"metadata":{"user_id":"u\\n"}}`;
      let parses = true;
      try {
        JSON.parse(text);
      } catch {
        parses = false;
      }
      const checked = checkRequest(Buffer.from(text), 'messages', 128);
      expect(checked !== null, text).to.equal(parses);
      if (checked) accepted++;
    }
    expect(accepted, 'strings accepted').to.be.within(200, 3800);
  });

  /**
   * A check's result with what it stepped over taken out: each element found in the memory names
   * it (`same`, for the estimate to find it by identity), and its bytes must be the range's.
   */
  const stepOvers = (raw: Buffer, checked: CheckedRequest | null): CheckedRequest | null => {
    if (checked === null) return null;
    const plain = (range: ElementRange): ElementRange => {
      if (range.same === undefined) return range;
      expect(raw.subarray(range.start, range.end).equals(range.same.bytes), 'a stepped-over element is the one it names').to.equal(true);
      return { start: range.start, end: range.end };
    };
    const { system, messages } = checked.elements;
    const fields = new Map([...checked.scan.fields].map(([name, range]) => [name, plain(range)]));
    return { ...checked, scan: { ...checked.scan, fields }, elements: { ...(system && { system: plain(system) }), messages: messages.map(plain) } };
  };

  it('step over the elements a key sent before exactly as if they were checked again (3,000 seeded turns)', () => {
    // Each case: a request accepted and remembered as the estimate remembers it, then a next one
    // (the same with a message more, an edit, or damaged bytes), checked with and without the
    // memory: the same verdict, head, ranges and elements.
    const random = prng(Number(process.env.CHECK_SEED ?? 2026) + 3);
    const bases = BASES.filter(([endpoint]) => endpoint === 'messages' || endpoint === 'count_tokens' || endpoint === 'chat_completions');
    let stepped = 0;
    let crossed = 0;
    for (let i = 0; i < 3000; i++) {
      const [endpoint, base] = bases[i % bases.length] as [CheckedEndpoint, Record<string, unknown>];
      const first = random() < 0.5 ? base : mutate(base, random);
      const firstRaw = Buffer.from(JSON.stringify(first));
      const accepted = checkRequest(firstRaw, endpoint, 128);
      if (accepted === null) continue;
      const format = endpoint === 'chat_completions' ? 'chat' : 'messages';
      const scope = `turns-${i}`;
      checkedRequestText(format, chunked(firstRaw, random), accepted.elements, scope, accepted.scan.fields.get('tools'));
      const known = recentElements(format, scope);
      expect(known, 'remembered').to.have.length(1);
      const turn = random();
      const nextTurn = { ...first, messages: [...((first['messages'] as unknown[] | undefined) ?? []), { role: 'user', content: 'and then?' }] };
      const next = turn < 0.4 ? JSON.stringify(nextTurn) : turn < 0.7 ? JSON.stringify(mutate(first, random)) : damage(JSON.stringify(first), random);
      const raw = Buffer.from(next);
      // Messages and count_tokens share the memory (the same element rules): cross it sometimes.
      const nextEndpoint: CheckedEndpoint = format === 'messages' && random() < 0.3 ? (endpoint === 'messages' ? 'count_tokens' : 'messages') : endpoint;
      const withMemory = checkRequest(raw, nextEndpoint, 128, known);
      expect(stepOvers(raw, withMemory), next.slice(0, 300)).to.deep.equal(checkRequest(raw, nextEndpoint, 128));
      if (withMemory !== null && turn < 0.4) stepped++;
      if (withMemory !== null && nextEndpoint !== endpoint) crossed++;
    }
    expect(stepped, 'next turns accepted with their history stepped over').to.be.greaterThan(500);
    expect(crossed, 'accepted on the other of Messages and count_tokens').to.be.greaterThan(50);
  });

  it('step over only what the memory holds: an element it names is taken as checked (so it holds only accepted ones)', () => {
    // A role the rules refuse, passed off as remembered: accepted, which shows the step happens,
    // and why only the estimate's memory of accepted requests may feed it.
    const message = Buffer.from('{"role":"bot","content":"x"}');
    const body = Buffer.from(`{"model":"m","max_tokens":1,"messages":[${message.toString()}]}`);
    expect(checkRequest(body, 'messages', 128)).to.equal(null);
    const checked = checkRequest(body, 'messages', 128, [{ system: undefined, messages: [{ bytes: message }], tools: undefined }]);
    expect(checked?.elements.messages).to.deep.equal([{ start: body.indexOf(message), end: body.indexOf(message) + message.length, same: { bytes: message } }]);
    // In another place, or with a byte changed, it is checked again.
    expect(checkRequest(body, 'messages', 128, [{ system: undefined, messages: [{ bytes: Buffer.from('{}') }, { bytes: message }], tools: undefined }])).to.equal(null);
    expect(checkRequest(body, 'messages', 128, [{ system: undefined, messages: [{ bytes: Buffer.from('{"role":"bot","content":"y"}') }], tools: undefined }])).to.equal(null);
  });

  it('leave to the full parse what they cannot vouch for: escaped keys, repeated keys, deep nesting', () => {
    const small = '{"model":"gpt-4o","messages":[{"role":"user","content":"x"}]';
    expect(checkRequest(Buffer.from(`${small},"\\u006e":2}`), 'chat_completions', 128)).to.equal(null);
    expect(checkRequest(Buffer.from(`${small},"model":"gpt-4o"}`), 'chat_completions', 128)).to.equal(null);
    expect(checkRequest(Buffer.from(`${small},"x":${'['.repeat(130)}${']'.repeat(130)}}`), 'chat_completions', 128)).to.equal(null);
    expect(checkRequest(Buffer.from(`${small},"x":${'['.repeat(100)}${']'.repeat(100)}}`), 'chat_completions', 128)).to.not.equal(null);
  });
});
