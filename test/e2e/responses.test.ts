import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText } from 'ai';
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import OpenAI from 'openai';
import type { RecordedRequest, Reply } from '../support/fake-upstream.ts';
import { call, CHAT_HEADERS, expectNothingSentOrCharged, KEYS, PROVIDER_KEYS, standardConfig, generationOf, useUpstreamAndGateway } from '../support/gateway.ts';

/**
 * POST /v1/responses, natively (issue #14; responses-api.md): an `openai` provider whose
 * `options.formats` include `responses` gets the client's bytes (the model renamed), answers pass
 * through untouched, usage is read from the whole answer or the terminal event, and a stream that
 * ends without one of its three terminal events ends in an in-band error the SDKs throw on.
 */

const fixture = (name: string): string => readFileSync(new URL(`../fixtures/openai/${name}`, import.meta.url), 'utf8');
const ANSWER = fixture('responses.json');
const STREAM = fixture('responses.sse');
const json = { 'content-type': 'application/json' };

const EXTRA = `  - id: gpt-5
    routes: [{ provider: openai-responses, model: gpt-5-2025-08-07 }]
    pricing: { input: 1.25, output: 10, cache_read: 0.125 }
    max_output_tokens: 128000
  - id: gpt-5-b
    routes: [{ provider: openai-b, model: gpt-5-2025-08-07 }]
    pricing: { input: 1.25, output: 10 }
  - id: gpt-5-either
    routes: [{ provider: openai-b, model: gpt-5-2025-08-07 }, { provider: openai-responses, model: gpt-5-2025-08-07 }]
    pricing: { input: 1.25, output: 10 }
  - id: chat-only
    routes: [{ provider: openai }]
    pricing: { input: 1, output: 1 }
`;
const config = (url: string): string =>
  standardConfig(url, EXTRA).replace(
    '  - { id: mock, plugin: mock }',
    `  - { id: mock, plugin: mock }\n  - { id: openai-responses, plugin: openai, base_url: "${url}/v1", api_key: "${PROVIDER_KEYS.openai}", options: { formats: [chat_completions, responses] } }\n` +
      `  - { id: openai-b, plugin: openai, base_url: "${url}/b/v1", api_key: "${PROVIDER_KEYS.anthropic}", options: { formats: [responses] } }`,
  );


const responsesUpstream = (reply: Reply) => (req: RecordedRequest): Reply | undefined => (req.url === '/v1/responses' ? reply : undefined);

describe('responses, native', () => {
  const env = useUpstreamAndGateway(config);
  let openai: OpenAI;
  before(() => {
    openai = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: KEYS.alice, maxRetries: 0 });
  });
  const generation = (id: string | string[] | null | undefined) => generationOf(env.gw.url, id);

  it('openai SDK responses.create: the body goes up with the model renamed and the key swapped; the answer comes back byte for byte, charged with reasoning', async () => {
    env.upstream.script(responsesUpstream({ body: ANSWER, headers: json }));
    const { data, response } = await openai.responses.create({ model: 'gpt-5', input: 'Say hi in Portuguese', max_output_tokens: 4000 }).withResponse();
    expect(data.output_text).to.equal('Olá!');
    const seen = env.upstream.last();
    expect(seen.url).to.equal('/v1/responses');
    expect(seen.json()).to.deep.equal({ model: 'gpt-5-2025-08-07', input: 'Say hi in Portuguese', max_output_tokens: 4000 });
    expect(seen.headers['authorization']).to.equal(`Bearer ${PROVIDER_KEYS.openai}`);
    const raw = await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'gpt-5', input: 'x' } });
    expect(raw.text).to.equal(ANSWER);
    const row = await generation(response.headers.get('x-request-id'));
    expect(row).to.deep.include({ endpoint: 'responses', route: 'native' });
    expect(row.tokens).to.deep.include({ input: 19, output: 86, reasoning: 64, cache_read: 0 });
    expect(row.cost_usd).to.be.closeTo((19 * 1.25 + 86 * 10) / 1e6, 1e-12);
  });

  it('a native request is never parsed whole (issue #17): the byte check reads what routing, holds and the response state need; only a body it refuses is', async () => {
    const marker = 'never-parsed-0f3a';
    const whole: string[] = [];
    const parse = JSON.parse;
    // The gateway runs in this process: a whole-body parse is a JSON.parse of text holding both the client's model and the marker.
    JSON.parse = ((text: string, reviver?: (this: unknown, key: string, value: unknown) => unknown) => {
      if (typeof text === 'string' && text.startsWith('{') && text.includes(marker) && text.includes('"model":"gpt-5"')) whole.push(text);
      return parse(text, reviver);
    }) as typeof JSON.parse;
    try {
      const body = {
        model: 'gpt-5', instructions: marker, max_output_tokens: 100, store: true,
        tools: [{ type: 'function', name: 'shell', parameters: { type: 'object' } }],
        input: [{ role: 'user', content: [{ type: 'input_text', text: marker }] }, { type: 'function_call_output', call_id: 'c1', output: marker }],
      };
      env.upstream.script((req) => (req.url === '/v1/responses' ? { body: ANSWER.replace('resp_0320a1b2c3', 'resp_unparsed'), headers: json } : undefined));
      expect((await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body })).status).to.equal(200);
      env.upstream.script(responsesUpstream({ sse: STREAM }));
      expect((await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { ...body, stream: true } })).text).to.equal(STREAM);
      // Continuations of what the upstream keeps: by id and by item_reference (the recorded answer's message is msg_0320a1).
      env.upstream.script(responsesUpstream({ body: ANSWER, headers: json }));
      const continued = await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { ...body, previous_response_id: 'resp_unparsed', input: [{ type: 'item_reference', id: 'msg_0320a1' }, ...body.input] } });
      expect(continued.status, continued.text).to.equal(200);
      env.upstream.script(() => ({ body: { object: 'response.input_tokens', input_tokens: 42 }, headers: json }));
      expect((await call(`${env.gw.url}/v1/responses/input_tokens`, { headers: CHAT_HEADERS, body })).json()).to.deep.include({ input_tokens: 42 });
      expect(whole, 'bodies parsed whole').to.deep.equal([]);
      // The same request with a field the check refuses (a null item type) is parsed, and answered by zod as before.
      const refused = await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { ...body, input: [{ type: null, text: marker }] } });
      expect(refused.status).to.equal(400);
      expect(refused.json()).to.have.nested.property('error.param', 'input[0].type');
      expect(whole).to.have.length(1);
    } finally {
      JSON.parse = parse;
    }
  });

  it('responses.stream: every event passes untouched and the accumulator builds the answer; cached input charged at its price', async () => {
    env.upstream.script(responsesUpstream({ sse: STREAM }));
    const stream = openai.responses.stream({ model: 'gpt-5', input: 'Say hi', stream: true });
    const types: string[] = [];
    stream.on('event', (event) => types.push(event.type));
    const final = await stream.finalResponse();
    const message = final.output.find((item) => item.type === 'message');
    expect(message?.type === 'message' && message.content[0]?.type === 'output_text' ? message.content[0].text : undefined).to.equal('Olá!');
    expect(final.usage?.output_tokens_details.reasoning_tokens).to.equal(64);
    expect(types[0]).to.equal('response.created');
    expect(types.at(-1)).to.equal('response.completed');
    expect(types).to.have.length(19);
    const raw = await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'gpt-5', input: 'x', stream: true } });
    expect(raw.text).to.equal(STREAM);
    const row = await generation(raw.headers.get('x-request-id'));
    // 1,200 input tokens of which 1,024 cached: 176 at $1.25, 1,024 at $0.125, 86 out at $10 per million.
    expect(row.tokens).to.deep.include({ input: 176, cache_read: 1024, output: 86, reasoning: 64 });
    expect(row.cost_usd).to.be.closeTo((176 * 1.25 + 1024 * 0.125 + 86 * 10) / 1e6, 1e-12);
  });

  it('a stream cut before its terminal event ends in an error event the SDK throws on, not a clean end', async () => {
    const cut = STREAM.slice(0, STREAM.indexOf('event: response.completed'));
    env.upstream.script(responsesUpstream({ sse: cut }));
    const raw = await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'gpt-5', input: 'x', stream: true } });
    const frames = raw.text.trimEnd().split('\n\n');
    // The cut stream's last event was number 17: the error continues the numbering, then response.failed ends it.
    const [error, failed] = frames.slice(-2).map((frame) => ({ event: frame.split('\n')[0], data: JSON.parse(frame.split('\n')[1]?.slice(6) ?? '{}') as Record<string, unknown> }));
    expect(error?.event).to.equal('event: error');
    expect(error?.data).to.deep.include({ type: 'error', sequence_number: 18, message: 'upstream provider "openai-responses" ended the response early' });
    expect(error?.data['error']).to.be.an('object');
    expect(failed?.event).to.equal('event: response.failed');
    expect(failed?.data).to.deep.include({ type: 'response.failed', sequence_number: 19 });
    expect(failed?.data['response']).to.deep.include({ id: 'resp_0320a1b2c3', status: 'failed' });
    env.upstream.script(responsesUpstream({ sse: cut }));
    let thrown: unknown;
    try {
      await openai.responses.stream({ model: 'gpt-5', input: 'x', stream: true }).finalResponse();
    } catch (err) {
      thrown = err;
    }
    expect(thrown).to.be.instanceOf(Error);
  });

  it('text that merely says "response.completed" does not pass a cut stream off as whole', async () => {
    const cut = STREAM.slice(0, STREAM.indexOf('event: response.completed')).replace('"delta":"Ol"', '"delta":"response.completed"');
    env.upstream.script(responsesUpstream({ sse: cut }));
    const raw = await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'gpt-5', input: 'x', stream: true } });
    expect(raw.text).to.include('"delta":"response.completed"');
    expect(raw.text.trimEnd().split('\n\n').at(-1)).to.match(/^event: response\.failed\n/);
  });

  it('response.incomplete and response.failed end a stream as whole as response.completed does', async () => {
    for (const terminal of ['response.incomplete', 'response.failed']) {
      const sse = STREAM.replaceAll('response.completed', terminal);
      env.upstream.script(responsesUpstream({ sse }));
      const raw = await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'gpt-5', input: 'x', stream: true } });
      expect(raw.text).to.equal(sse);
      const row = await generation(raw.headers.get('x-request-id'));
      expect(row.tokens).to.deep.include({ input: 176, cache_read: 1024, output: 86 });
    }
  });

  it('the upstream\'s own error answer comes back as sent, and costs nothing', async () => {
    const error = JSON.stringify({ error: { message: "Unsupported parameter: 'temperature' is not supported with this model.", type: 'invalid_request_error', param: 'temperature', code: null } });
    env.upstream.script(responsesUpstream({ status: 400, body: error, headers: json }));
    const raw = await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'gpt-5', input: 'x', temperature: 0.2 } });
    expect(raw.status).to.equal(400);
    expect(raw.text).to.equal(error);
    const row = await generation(raw.headers.get('x-request-id'));
    expect(row.cost_usd).to.equal(0);
  });

  it('Codex CLI\'s headers reach the upstream; the client\'s key never does', async () => {
    env.upstream.script(responsesUpstream({ sse: STREAM }));
    await call(`${env.gw.url}/v1/responses`, {
      headers: { ...CHAT_HEADERS, originator: 'codex_cli_rs', session_id: 'sess-1', 'x-codex-turn-metadata': '{"turn":1}', 'user-agent': 'codex_cli_rs/0.130.0' },
      body: { model: 'gpt-5', input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }], stream: true, store: false },
    });
    const headers = env.upstream.last().headers;
    expect(headers).to.include({ originator: 'codex_cli_rs', session_id: 'sess-1', 'x-codex-turn-metadata': '{"turn":1}', authorization: `Bearer ${PROVIDER_KEYS.openai}` });
    expect(JSON.stringify(headers)).to.not.include(KEYS.alice);
  });

  it('openai SDK responses.parse with a zod schema: the schema goes up as text.format, the answer is parsed', async () => {
    const { zodTextFormat } = await import('openai/helpers/zod');
    const { z } = await import('zod');
    const Weather = z.object({ city: z.string(), celsius: z.number() });
    const structured = ANSWER.replace('"text":"Olá!"', '"text":"{\\"city\\":\\"Rome\\",\\"celsius\\":21}"');
    env.upstream.script(responsesUpstream({ body: structured, headers: json }));
    const parsed = await openai.responses.parse({ model: 'gpt-5', input: 'Weather in Rome?', text: { format: zodTextFormat(Weather, 'weather') } });
    expect(parsed.output_parsed).to.deep.equal({ city: 'Rome', celsius: 21 });
    const sent = env.upstream.last().json();
    expect(sent['text']).to.have.nested.property('format.type', 'json_schema');
    expect(sent['text']).to.have.nested.property('format.name', 'weather');
  });

  for (const store of [false, true]) {
    it(`the Vercel AI SDK's tool loop over a native route (store: ${store}): the call goes out, its result comes back with the same call id`, async () => {
      const { tool, stepCountIs } = await import('ai');
      const { z } = await import('zod');
      const call = ANSWER.replace(
        /"output":\[.*\],"parallel_tool_calls"/,
        '"output":[{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_weather_1","name":"weather","arguments":"{\\"city\\":\\"Rome\\"}"}],"parallel_tool_calls"',
      ).replace('resp_0320a1b2c3', `resp_tools_${store}`);
      let turns = 0;
      env.upstream.script((req) => (req.url === '/v1/responses' ? { body: ++turns === 1 ? call : ANSWER, headers: json } : undefined));
      const provider = createOpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: KEYS.alice });
      const result = await generateText({
        model: provider.responses('gpt-5'),
        prompt: 'Weather in Rome, then say hi',
        tools: { weather: tool({ description: 'weather', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => ({ city, celsius: 21 }) }) },
        stopWhen: stepCountIs(3),
        providerOptions: { openai: { store } },
      });
      expect(result.text).to.equal('Olá!');
      expect(turns).to.equal(2);
      const second = env.upstream.requests.filter((r) => r.url === '/v1/responses')[1]?.json() ?? {};
      const items = second['input'] as Record<string, unknown>[];
      expect(items.find((item) => item['type'] === 'function_call_output')).to.deep.include({ call_id: 'call_weather_1' });
      expect(second['store']).to.equal(store);
    });
  }

  it('the Vercel AI SDK\'s openai.responses(): generateText and streamText', async () => {
    const provider = createOpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: KEYS.alice });
    env.upstream.script(responsesUpstream({ body: ANSWER, headers: json }));
    const whole = await generateText({ model: provider.responses('gpt-5'), prompt: 'Say hi' });
    expect(whole.text).to.equal('Olá!');
    expect(whole.usage.inputTokens).to.equal(19);
    env.upstream.script(responsesUpstream({ sse: STREAM }));
    const streamed = streamText({ model: provider.responses('gpt-5'), prompt: 'Say hi' });
    expect(await streamed.text).to.equal('Olá!');
    expect((await streamed.usage).outputTokens).to.equal(86);
  });

  describe('refused before anything goes upstream', () => {
    expectNothingSentOrCharged(env);

    it('a hosted tool on a translated route (a model whose upstream speaks only Chat): 400 naming the tool, never dropped', async () => {
      const res = await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'chat-only', input: 'x', tools: [{ type: 'web_search' }] } });
      expect(res.status).to.equal(400);
      expect(res.json()).to.have.nested.property('error.param', 'tools[0].type');
      expect(res.json()).to.have.nested.property('error.message').that.includes('web_search');
    });

    it('items a translated route cannot take: an unknown item type and a hosted tool\'s item, 400 naming the item', async () => {
      const unknown = await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'chat-only', input: [{ type: 'telepathy', text: 'x' }] } });
      expect(unknown.status).to.equal(400);
      expect(unknown.json()).to.have.nested.property('error.param', 'input[0].type');
      const hosted = await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'chat-only', input: [{ role: 'user', content: 'x' }, { type: 'web_search_call', id: 'ws_1', status: 'completed' }] } });
      expect(hosted.status).to.equal(400);
      expect(hosted.json()).to.have.nested.property('error.param', 'input[1].type');
    });

    it('malformed input: 400 naming the field, in OpenAI\'s error shape', async () => {
      const res = await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'gpt-5', input: 42 } });
      expect(res.status).to.equal(400);
      expect(res.json()).to.have.nested.property('error.param', 'input');
    });

    it('an unknown model: 404 naming it', async () => {
      const res = await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'no-such-model', input: 'x' } });
      expect(res.status).to.equal(404);
      expect(res.json()).to.have.nested.property('error.code', 'model_not_found');
    });
  });

  describe('state kept upstream (issue #14)', () => {
    const stored = (id: string) => responsesUpstream({ body: ANSWER.replace('resp_0320a1b2c3', id), headers: json });
    const create = async (model: string, id: string, extra: Record<string, unknown> = {}) => {
      env.upstream.script((req) => (req.url.endsWith('/responses') ? stored(id)(req) ?? { body: ANSWER.replace('resp_0320a1b2c3', id), headers: json } : undefined));
      return call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model, input: 'remember me', ...extra } });
    };

    it('a continuation goes to the provider that keeps the response, whichever route comes first', async () => {
      expect((await create('gpt-5', 'resp_kept_a')).status).to.equal(200);
      env.upstream.script(() => ({ body: ANSWER, headers: json }));
      const res = await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'gpt-5-either', input: 'and then?', previous_response_id: 'resp_kept_a' } });
      expect(res.status).to.equal(200);
      // gpt-5-either tries openai-b first; the conversation is at openai-responses.
      expect(env.upstream.last().url).to.equal('/v1/responses');
      expect(env.upstream.last().json()).to.include({ previous_response_id: 'resp_kept_a' });
    });

    it('item_reference (the Vercel AI SDK\'s way): routed to where the item is kept; an item the key never made is a 404', async () => {
      // The recorded answer's message item is msg_0320a1.
      expect((await create('gpt-5', 'resp_items')).status).to.equal(200);
      env.upstream.script(() => ({ body: ANSWER, headers: json }));
      const res = await call(`${env.gw.url}/v1/responses`, {
        headers: CHAT_HEADERS,
        body: { model: 'gpt-5-either', input: [{ type: 'item_reference', id: 'msg_0320a1' }, { role: 'user', content: 'and then?' }] },
      });
      expect(res.status).to.equal(200);
      expect(env.upstream.last().url).to.equal('/v1/responses');
      env.upstream.reset();
      const unknown = await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'gpt-5', input: [{ type: 'item_reference', id: 'msg_someone_elses' }] } });
      expect(unknown.status).to.equal(404);
      expect(unknown.json()).to.have.nested.property('error.param', 'input');
      const bob = await call(`${env.gw.url}/v1/responses`, { headers: { authorization: `Bearer ${KEYS.restricted}` }, body: { model: 'gpt-5', input: [{ type: 'item_reference', id: 'msg_0320a1' }] } });
      expect(bob.status).to.equal(404);
      expect(env.upstream.requests).to.have.length(0);
    });

    it('GET, input_items and DELETE reach the upstream that keeps it, with its key; after DELETE it is gone', async () => {
      await create('gpt-5-b', 'resp_kept_b');
      env.upstream.script((req) => (req.method === 'DELETE' ? { body: { id: 'resp_kept_b', object: 'response.deleted', deleted: true }, headers: json } : { body: ANSWER, headers: json }));
      const got = await call(`${env.gw.url}/v1/responses/resp_kept_b?include[]=reasoning.encrypted_content`, { headers: CHAT_HEADERS });
      expect(got.status).to.equal(200);
      expect(got.text).to.equal(ANSWER);
      expect(env.upstream.last()).to.deep.include({ method: 'GET', url: '/b/v1/responses/resp_kept_b?include[]=reasoning.encrypted_content' });
      expect(env.upstream.last().headers['authorization']).to.equal(`Bearer ${PROVIDER_KEYS.anthropic}`);
      await call(`${env.gw.url}/v1/responses/resp_kept_b/input_items?limit=5`, { headers: CHAT_HEADERS });
      expect(env.upstream.last().url).to.equal('/b/v1/responses/resp_kept_b/input_items?limit=5');
      const deleted = await call(`${env.gw.url}/v1/responses/resp_kept_b`, { method: 'DELETE', headers: CHAT_HEADERS });
      expect(deleted.json()).to.deep.equal({ id: 'resp_kept_b', object: 'response.deleted', deleted: true });
      const after = await call(`${env.gw.url}/v1/responses/resp_kept_b`, { headers: CHAT_HEADERS });
      expect(after.status).to.equal(404);
    });

    it('the openai SDK retrieves and deletes a stored response', async () => {
      await create('gpt-5', 'resp_sdk');
      env.upstream.script((req) => (req.method === 'DELETE' ? { body: { id: 'resp_sdk', object: 'response.deleted', deleted: true }, headers: json } : { body: ANSWER.replace('resp_0320a1b2c3', 'resp_sdk'), headers: json }));
      const got = await openai.responses.retrieve('resp_sdk');
      expect(got.id).to.equal('resp_sdk');
      await openai.responses.delete('resp_sdk');
      expect(env.upstream.last().method).to.equal('DELETE');
    });

    it('store: false keeps nothing upstream, so nothing is remembered', async () => {
      await create('gpt-5', 'resp_unstored', { store: false });
      const got = await call(`${env.gw.url}/v1/responses/resp_unstored`, { headers: CHAT_HEADERS });
      expect(got.status).to.equal(404);
    });

    it('input_tokens: counted by an upstream that speaks Responses, else estimated locally, free either way', async () => {
      env.upstream.script(() => ({ body: { object: 'response.input_tokens', input_tokens: 42 }, headers: json }));
      const native = await call(`${env.gw.url}/v1/responses/input_tokens`, { headers: CHAT_HEADERS, body: { model: 'gpt-5', input: 'count me' } });
      expect(native.json()).to.deep.equal({ object: 'response.input_tokens', input_tokens: 42 });
      expect(env.upstream.last().url).to.equal('/v1/responses/input_tokens');
      const local = await call(`${env.gw.url}/v1/responses/input_tokens`, { headers: CHAT_HEADERS, body: { model: 'demo', input: 'count me please' } });
      expect(local.headers.get('x-junction-estimate')).to.equal('true');
      expect(local.json()).to.deep.include({ object: 'response.input_tokens' });
      expect(local.json()['input_tokens']).to.be.a('number').above(0);
    });

    describe('refused before anything is held or sent', () => {
      expectNothingSentOrCharged(env);

      it("another key's response, or an unknown one: 404 previous_response_not_found", async () => {
        const res = await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'gpt-5', input: 'x', previous_response_id: 'resp_never_seen' } });
        expect(res.status).to.equal(404);
        expect(res.json()).to.have.nested.property('error.code', 'previous_response_not_found');
        const got = await call(`${env.gw.url}/v1/responses/resp_never_seen`, { headers: CHAT_HEADERS });
        expect(got.status).to.equal(404);
      });

      it('an upstream conversation, or a background response: 400 (neither can be scoped to a key or metered yet)', async () => {
        const conversation = await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'gpt-5', input: 'x', previous_response_id: 'resp_x', conversation: 'conv_1' } });
        expect(conversation.status).to.equal(400);
        expect(conversation.json()).to.have.nested.property('error.param', 'conversation');
        const background = await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'gpt-5', input: 'x', background: true } });
        expect(background.status).to.equal(400);
        expect(background.json()).to.have.nested.property('error.param', 'background');
      });

      it("input_tokens for another key's response: 404, as for a create", async () => {
        const res = await call(`${env.gw.url}/v1/responses/input_tokens`, { headers: CHAT_HEADERS, body: { model: 'gpt-5', input: 'x', previous_response_id: 'resp_never_seen' } });
        expect(res.status).to.equal(404);
      });
    });

    it('a continuation on a model whose routes cannot reach the keeper: 400 naming it, nothing sent', async () => {
      await create('gpt-5', 'resp_at_a');
      env.upstream.reset();
      const res = await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'gpt-5-b', input: 'x', previous_response_id: 'resp_at_a' } });
      expect(res.status).to.equal(400);
      expect(res.json()).to.have.nested.property('error.message').that.includes('"openai-responses"');
      expect(env.upstream.requests).to.have.length(0);
    });

    it("the upstream's rejection of the gateway's key is never relayed (its body may echo the key)", async () => {
      await create('gpt-5', 'resp_keyed');
      env.upstream.script(() => ({ status: 401, body: { error: { message: 'Incorrect API key provided: sk-proj-****abcd', type: 'invalid_request_error' } }, headers: json }));
      const got = await call(`${env.gw.url}/v1/responses/resp_keyed`, { headers: CHAT_HEADERS });
      expect(got.status).to.equal(502);
      expect(got.text).to.not.include('sk-proj');
    });

    it('a replay cut by the upstream ends the client\'s answer too: it never hangs', async () => {
      await create('gpt-5', 'resp_replay');
      env.upstream.script(() => ({ sse: STREAM, resetAfterEvents: 3 }));
      let failed = false;
      try {
        await call(`${env.gw.url}/v1/responses/resp_replay?stream=true`, { headers: CHAT_HEADERS });
      } catch {
        failed = true;
      }
      expect(failed).to.equal(true);
    });

    it("another key cannot read or continue this key's response", async () => {
      await create('gpt-5', 'resp_alice');
      env.upstream.reset();
      const bob = { authorization: `Bearer ${KEYS.restricted}` };
      expect((await call(`${env.gw.url}/v1/responses/resp_alice`, { headers: bob })).status).to.equal(404);
      expect((await call(`${env.gw.url}/v1/responses/resp_alice`, { method: 'DELETE', headers: bob })).status).to.equal(404);
      expect(env.upstream.requests).to.have.length(0);
    });
  });

  describe('in-process: the demo model (issue #14)', () => {
    it('openai SDK responses.create: a Responses answer made from the plugin\'s Chat answer, with usage and item ids', async () => {
      const { data, response } = await openai.responses.create({ model: 'demo', instructions: 'Be brief.', input: 'Hello from Responses' }).withResponse();
      expect(data.status).to.equal('completed');
      expect(data.output_text).to.include('the last one reads: "Hello from Responses"');
      expect(data.id).to.match(/^resp_/);
      expect(data.output[0]).to.deep.include({ type: 'message', role: 'assistant', status: 'completed' });
      expect(data.usage?.output_tokens).to.be.above(0);
      expect(data.instructions).to.equal('Be brief.');
      const row = await generation(response.headers.get('x-request-id'));
      expect(row).to.deep.include({ endpoint: 'responses', route: 'in-process' });
    });

    it('responses.stream: the whole event sequence, numbered without gaps, accepted by the SDK\'s accumulator', async () => {
      const stream = openai.responses.stream({ model: 'demo', input: 'stream me' });
      const sequence: number[] = [];
      const types: string[] = [];
      stream.on('event', (event) => {
        sequence.push(event.sequence_number);
        types.push(event.type);
      });
      const final = await stream.finalResponse();
      expect(sequence).to.deep.equal(sequence.map((_, i) => i));
      expect(types.slice(0, 2)).to.deep.equal(['response.created', 'response.in_progress']);
      expect(types).to.include.members(['response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'response.output_text.done', 'response.content_part.done', 'response.output_item.done']);
      expect(types.at(-1)).to.equal('response.completed');
      const message = final.output.find((item) => item.type === 'message');
      expect(message?.type === 'message' && message.content[0]?.type === 'output_text' ? message.content[0].text : '').to.include('stream me');
    });

    it('max_output_tokens cut short: status incomplete with its reason, and response.incomplete ends the stream', async () => {
      const whole = await openai.responses.create({ model: 'demo', input: 'a long answer please', max_output_tokens: 3 });
      expect(whole).to.deep.include({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
      const raw = await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'demo', input: 'x', max_output_tokens: 3, stream: true } });
      expect(raw.text.trimEnd().split('\n\n').at(-1)).to.match(/^event: response\.incomplete\n/);
    });

    it('the Vercel AI SDK\'s openai.responses() on the demo: generateText and streamText', async () => {
      const provider = createOpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: KEYS.alice });
      const whole = await generateText({ model: provider.responses('demo'), prompt: 'Say hi' });
      expect(whole.text).to.include('Say hi');
      const streamed = streamText({ model: provider.responses('demo'), prompt: 'Say hi again' });
      expect(await streamed.text).to.include('Say hi again');
      expect((await streamed.usage).outputTokens).to.be.above(0);
    });

    it('an in-process answer is not stored: continuing it is a 404, not an answer without its conversation', async () => {
      const first = await openai.responses.create({ model: 'demo', input: 'one' });
      const res = await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'demo', input: 'two', previous_response_id: first.id } });
      expect(res.status).to.equal(404);
    });
  });

  describe('holds for continuations (issue #14)', () => {
    // A key with $1: the first turn reports 700,000 input tokens ($0.875 at $1.25 a million).
    const small = useUpstreamAndGateway((url) => config(url).replace('balance_usd: 100', 'balance_usd: 1'));
    it('a continuation holds the conversation it carries in: a key that cannot cover it gets 402, and nothing is sent', async () => {
      const big = ANSWER.replace('resp_0320a1b2c3', 'resp_big').replace('"input_tokens":19', '"input_tokens":700000');
      small.upstream.script((req) => (req.url.endsWith('/responses') ? { body: big, headers: json } : undefined));
      expect((await call(`${small.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'gpt-5', input: 'first', max_output_tokens: 100 } })).status).to.equal(200);
      small.upstream.reset();
      const res = await call(`${small.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'gpt-5', input: 'and?', max_output_tokens: 100, previous_response_id: 'resp_big' } });
      expect(res.status).to.equal(402);
      expect(small.upstream.requests).to.have.length(0);
      // Without the earlier turn counted, the same request fits what is left.
      const fresh = await call(`${small.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'gpt-5', input: 'and?', max_output_tokens: 100 } });
      expect(fresh.status).to.not.equal(402);
    });
  });
});

// The companion routes' relay keeps the provider's timeouts as every upstream exchange does
// (proxy/upstream-timers.ts). Short ones here, in a gateway of their own.
const TIMED = { firstByteMs: 400, idleMs: 200 };
const timedConfig = (url: string): string => config(url).replace('options: { formats: [chat_completions, responses] } }', `options: { formats: [chat_completions, responses] }, timeouts: { first_byte_ms: ${TIMED.firstByteMs}, idle_ms: ${TIMED.idleMs} } }`);

describe('responses, native: the companion routes under the provider timeouts', () => {
  const env = useUpstreamAndGateway(timedConfig);
  const create = async (id: string): Promise<void> => {
    env.upstream.script(() => ({ body: ANSWER.replace('resp_0320a1b2c3', id), headers: json }));
    expect((await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'gpt-5', input: 'remember me' } })).status).to.equal(200);
  };

  it('a replay read slower than idle_ms is the client\'s pace, not a silent upstream: all of it arrives', async function () {
    this.timeout(60_000);
    await create('resp_slow');
    // 40 MB, more than the loopback buffers take up while the client reads nothing (as in the
    // resilience suite's slow reader), so the gateway has to stop reading the upstream.
    const spec = { events: 2000, bytes: 20000, format: 'chat' as const } as { events: number; bytes: number; format: 'chat'; written?: number; waiting?: boolean };
    env.upstream.script(() => ({ flood: spec }));
    const { res, done } = await getPaused(`${env.gw.url}/v1/responses/resp_slow?stream=true`);
    expect(res.statusCode).to.equal(200);
    // Unread for three times idle_ms: time must pass for the idle deadline to, so this is a real wait.
    await new Promise((resolve) => setTimeout(resolve, TIMED.idleMs * 3));
    expect(spec.waiting, 'the upstream is waiting for the gateway to read').to.equal(true);
    res.resume();
    const bytes = await done;
    expect(spec.written).to.equal(spec.events);
    expect(bytes).to.be.above(spec.events * spec.bytes);
  });

  it('an upstream that never answers is cut after first_byte_ms: 504 naming the timeout, in OpenAI\'s shape', async () => {
    await create('resp_silent');
    env.upstream.script(() => ({ hang: true }));
    const got = await call(`${env.gw.url}/v1/responses/resp_silent`, { headers: CHAT_HEADERS });
    expect(got.status).to.equal(504);
    expect(got.json()['error']).to.deep.include({ type: 'api_error' });
    expect(String((got.json()['error'] as Record<string, unknown>)['message'])).to.include('"openai-responses" timed out: no answer');
  });
});

/** A GET left unread until the caller resumes it; `done` resolves with the bytes read, or rejects if the answer is cut. */
function getPaused(url: string): Promise<{ res: http.IncomingMessage; done: Promise<number> }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: CHAT_HEADERS }, (res) => {
      res.pause();
      const done = new Promise<number>((finish, fail) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => (bytes += chunk.length));
        res.on('end', () => finish(bytes));
        res.on('error', fail);
        res.on('aborted', () => fail(new Error('the answer was cut')));
      });
      resolve({ res, done });
    });
    req.on('error', reject);
  });
}
