import { expect } from 'chai';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { CODECS } from '../../../src/formats/canonical/codecs.ts';
import { translateBatches, translateStream } from '../../../src/formats/canonical/stream.ts';
import type { Json } from '../../../src/formats/convert/json.ts';
import { ToolNames } from '../../../src/formats/convert/tool-names.ts';
import type { WireFormat } from '../../../src/formats/wire.ts';
import { decodeSse, decodeSseBatches } from '../../../src/sse/decode.ts';

/**
 * Issue #17: a translated stream's upstream events are parsed and converted a chunk at a time
 * (decodeSseBatches → translateBatches). The client must get exactly what the
 * event-at-a-time path gives, however the bytes arrive, and the same error where it fails.
 */
const fixture = (path: string) => readFileSync(new URL(`../../fixtures/${path}`, import.meta.url));

async function* pieces(body: Buffer, cuts: number[]): AsyncGenerator<Uint8Array> {
  let start = 0;
  for (const cut of [...cuts, body.length]) {
    if (cut > start) yield body.subarray(start, cut);
    start = Math.max(start, cut);
  }
}

interface Run {
  events: Json[];
  inputs: number;
  error?: string;
}

/** The bytes, then a connection that stays open and silent: nothing more is ever read from it. */
async function* thenSilent(bytes: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  yield* bytes;
  await new Promise<never>(() => undefined);
}

/**
 * `reuse`: the parser a translated route uses, whose events built from templates are refilled
 * (event-template.ts). `silent`: the upstream keeps its connection open after its last byte.
 */
async function run(from: WireFormat, to: WireFormat, body: Buffer, cuts: number[], batched: boolean, reuse = false, silent = false): Promise<Run> {
  const side = { toolNames: new ToolNames(), jsonTool: null };
  const client = { id: 'x', model: 'm', created: 1, request: {}, includeUsage: true, inputTokensEstimate: 3, customTools: new Set<string>(), namespacedTools: new Map() };
  const upstream = CODECS[from];
  let inputs = 0;
  const hooks = { input: () => void inputs++ };
  const parser = reuse ? upstream.eventParser?.('up', false, true) : upstream.eventParser?.('up');
  if (!parser) throw new Error('no event parser');
  const bytes = silent ? thenSilent(pieces(body, cuts)) : pieces(body, cuts);
  const stream: AsyncIterable<Json | readonly Json[]> = batched
    ? translateBatches(decodeSseBatches(bytes, (e) => e as Error), parser, upstream.streamDecoder(side, 'up'), CODECS[to].streamEncoder(client), hooks)
    : translateStream(upstream.parse(decodeSse(bytes, (e) => e as Error), 'up'), upstream.streamDecoder(side, 'up'), CODECS[to].streamEncoder(client), hooks);
  const events: Json[] = [];
  try {
    // Batches are reused: each is read before the next is asked for.
    for await (const item of stream) {
      if (Array.isArray(item)) events.push(...(item as readonly Json[]));
      else events.push(item as Json);
    }
  } catch (err) {
    return { events, inputs, error: err instanceof Error ? err.message : String(err) };
  }
  return { events, inputs };
}

/**
 * A long Chat text stream in the recorded fixture's framing, its deltas varied (escapes, non-ASCII,
 * OpenAI's obfuscation padding), so that templates are learnt and used, then a finish and usage.
 */
function longChatStream(): Buffer {
  const words = ['Hello', ' wor"ld', ' \\path', ' é中😀', ' line\nbreak', ' plain', '', ' tab\t'];
  const chunk = (delta: Json, finish: string | null, extra: Json = {}): string =>
    `data: ${JSON.stringify({ id: 'chatcmpl-9', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...extra })}\n\n`;
  const lines = [chunk({ role: 'assistant', content: '' }, null)];
  for (let i = 0; i < 40; i++) lines.push(chunk({ content: words[i % words.length] ?? '' }, null, { obfuscation: 'x'.repeat(i % 5) }));
  lines.push(chunk({}, 'stop'), `data: ${JSON.stringify({ id: 'chatcmpl-9', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [], usage: { prompt_tokens: 9, completion_tokens: 40, total_tokens: 49 } })}\n\n`, 'data: [DONE]\n\n');
  return Buffer.from(lines.join(''));
}

const CASES: [string, WireFormat, WireFormat, Buffer][] = [
  ['Long Chat text stream → Messages', 'chat', 'messages', longChatStream()],
  ['Chat tool stream → Messages', 'chat', 'messages', fixture('openai/tool-call.sse')],
  ['OpenRouter reasoning stream → Messages', 'chat', 'messages', fixture('openai/openrouter-reasoning.sse')],
  ['Messages thinking and tool stream → Chat', 'messages', 'chat', fixture('anthropic/thinking-tool.sse')],
  ['Messages text stream → Responses', 'messages', 'responses', fixture('anthropic/text.sse')],
  ['Responses stream → Messages', 'responses', 'messages', fixture('openai/responses.sse')],
];

describe('translated streams a chunk at a time (issue #17)', () => {
  for (const [name, from, to, body] of CASES) {
    it(`${name}: the same client events as event by event, however the bytes arrive`, async () => {
      const whole = await run(from, to, body, [], false);
      expect(whole.events.length).to.be.greaterThan(3);
      expect(whole.error).to.equal(undefined);
      await fc.assert(
        fc.asyncProperty(fc.uniqueArray(fc.integer({ min: 1, max: body.length - 1 }), { maxLength: 30 }).map((c) => c.sort((a, b) => a - b)), async (cuts) => {
          expect(await run(from, to, body, cuts, true)).to.deep.equal(whole);
          expect(await run(from, to, body, cuts, true, true), 'with events refilled').to.deep.equal(whole);
        }),
        { seed: 17, numRuns: 60 },
      );
    });
  }

  it('stops where the event-by-event path stops: nothing after the terminator reaches the hooks or the client', async () => {
    const body = Buffer.concat([fixture('anthropic/text.sse'), Buffer.from('event: ping\ndata: {"type":"ping"}\n\n')]);
    const batched = await run('messages', 'chat', body, [], true);
    expect(batched).to.deep.equal(await run('messages', 'chat', body, [], false));
    expect(batched.error).to.equal(undefined);
    // The hooks heard the fixture's events up to message_delta, which carries the stop: not its
    // message_stop, nor the ping after it.
    const events = (fixture('anthropic/text.sse').toString().match(/^data:/gm) ?? []).length;
    expect(batched.inputs).to.equal(events - 1);
    expect(JSON.stringify(batched.events)).to.not.include('ping');
  });

  it('fails where the event-by-event path fails: a stream cut before its terminator', async () => {
    const text = fixture('anthropic/text.sse').toString();
    const cut = Buffer.from(text.slice(0, text.indexOf('event: message_delta')));
    const batched = await run('messages', 'chat', cut, [], true);
    const single = await run('messages', 'chat', cut, [], false);
    expect(batched).to.deep.equal(single);
    expect(batched.error).to.be.a('string');
    expect(await run('messages', 'chat', cut, [], true, true), 'with events refilled').to.deep.equal(single);
    const long = longChatStream().toString();
    const cutChat = Buffer.from(long.slice(0, long.indexOf('"finish_reason":"stop"')));
    const chatSingle = await run('chat', 'messages', cutChat, [], false);
    expect(chatSingle.error).to.be.a('string');
    expect(await run('chat', 'messages', cutChat, [], true, true), 'a Chat stream cut after built events').to.deep.equal(chatSingle);
  });

  it('ends at the terminator when the upstream keeps its connection open after it', async () => {
    for (const [from, to, body] of [['chat', 'messages', longChatStream()], ['messages', 'chat', fixture('anthropic/text.sse')]] as const) {
      const whole = await run(from, to, body, [], false);
      for (const reuse of [false, true]) expect(await run(from, to, body, [], true, reuse, true), `${from}, reuse ${reuse}`).to.deep.equal(whole);
      expect(await run(from, to, body, [], false, false, true), `${from}, event by event`).to.deep.equal(whole);
    }
  });

  it('fails where the event-by-event path fails after events built from templates: an in-band error, malformed JSON', async () => {
    const long = longChatStream().toString();
    const at = long.indexOf('data: ', long.length / 2);
    const faults = [
      `data: {"error":{"message":"boom","type":"server_error"}}\n\n`,
      // Shaped like the text deltas before it, with an escape JSON.parse refuses.
      `data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"a\\qb"},"logprobs":null,"finish_reason":null}],"obfuscation":""}\n\n`,
    ];
    for (const fault of faults) {
      const body = Buffer.from(long.slice(0, at) + fault + long.slice(at));
      const single = await run('chat', 'messages', body, [], false);
      expect(single.error, fault).to.be.a('string');
      expect(single.inputs, 'events before the fault').to.be.greaterThan(10);
      for (const cuts of [[], [at - 7, at + 9], [at + fault.length - 3]]) {
        expect(await run('chat', 'messages', body, cuts, true, true), `${fault} cut at ${cuts.join(',')}`).to.deep.equal(single);
      }
    }
  });
});
