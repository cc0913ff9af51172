import Anthropic from '@anthropic-ai/sdk';
import { createAnthropic } from '@ai-sdk/anthropic';
import { streamText } from 'ai';
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { AWS_ENV, AWS_TEST_CREDENTIALS, awsError, chunk, cutEvery, eventStream, frame, sigV4Refusal, sseEvents, useAwsEnv } from '../../support/aws-fake.ts';
import { FIXTURES, type RecordedRequest, type Reply } from '../../support/fake-upstream.ts';
import { call, generationOf, KEYS, MESSAGES_HEADERS, useSdkClients, useUpstreamAndGateway, oneKeyConfig } from '../../support/gateway.ts';

const post = (gateway: string, path: string, headers: Readonly<Record<string, string>>, body: unknown): ReturnType<typeof call> => call(`${gateway}${path}`, { headers: { ...headers }, body });

/**
 * The `bedrock` plugin's Claude path (issue #15; providers.md §1.2) against a fake that refuses
 * what Bedrock refuses: a SigV4 signature that does not match the bytes, path and signed headers
 * it got (recomputed with the AWS SDK's signer), a date more than five minutes off, a missing
 * session token; `model` or `stream` in the body, a missing `anthropic_version`, any top-level
 * field InvokeModel does not take, a beta it does not know, tool fields and `cache_control.scope`
 * it does not take. It answers streams in real event-stream frames, cut at odd byte offsets.
 */

const REGION = 'us-east-1';
const MODEL = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const PATH = `/model/${encodeURIComponent(MODEL)}`;
/** Bedrock's betas (providers.md §1.2: LiteLLM's list, BerriAI/litellm#19877). */
const BEDROCK_BETAS = new Set(['computer-use-2024-10-22', 'computer-use-2025-01-24', 'token-efficient-tools-2025-02-19', 'interleaved-thinking-2025-05-14', 'output-128k-2025-02-19', 'context-1m-2025-08-07', 'context-management-2025-06-27', 'effort-2025-11-24', 'tool-search-tool-2025-10-19', 'tool-examples-2025-10-29', 'fine-grained-tool-streaming-2025-05-14']);
const INVOKE_FIELDS = new Set(['anthropic_version', 'anthropic_beta', 'max_tokens', 'messages', 'system', 'stop_sequences', 'temperature', 'top_p', 'top_k', 'tools', 'tool_choice', 'thinking', 'metadata', 'output_config', 'context_management']);
const TOOL_FIELDS = new Set(['type', 'name', 'description', 'input_schema', 'cache_control']);

type Json = Record<string, unknown>;
const validation = (message: string): Reply => awsError(400, 'ValidationException', message);

/** What Bedrock checks in an Invoke body. */
function bodyRefusal(body: Json): Reply | undefined {
  if (body['anthropic_version'] !== 'bedrock-2023-05-31') return validation('Malformed input request: anthropic_version is required');
  for (const key of Object.keys(body)) if (!INVOKE_FIELDS.has(key)) return validation(`Malformed input request: #: extraneous key [${key}] is not permitted`);
  for (const beta of (body['anthropic_beta'] as string[] | undefined) ?? []) if (!BEDROCK_BETAS.has(beta)) return validation('invalid beta flag');
  for (const tool of (body['tools'] as Json[] | undefined) ?? []) {
    for (const key of Object.keys(tool)) if (!TOOL_FIELDS.has(key)) return validation(`tools.0.custom.${key}: Extra inputs are not permitted`);
  }
  if (JSON.stringify(body).includes('"scope"')) return validation('cache_control.scope: Extra inputs are not permitted');
  return undefined;
}

/** The service's clock, which a test may skew. */
let skewMs = 0;

const bedrock = (path: string, reply: (req: RecordedRequest, body: Json) => Reply) => async (req: RecordedRequest): Promise<Reply | undefined> => {
  const refused = await sigV4Refusal(req, REGION, Date.now() + skewMs);
  if (refused) return refused;
  if (req.url !== path) return awsError(404, 'UnknownOperationException', `no route ${req.url}`);
  const body = req.json();
  return bodyRefusal(body) ?? reply(req, body);
};

const config = (url: string): string => oneKeyConfig(`
providers:
  - { id: bedrock, plugin: bedrock, base_url: "${url}", options: { region: ${REGION} } }
  - { id: bedrock-key, plugin: bedrock, base_url: "${url}", api_key: "ABSKbedrock-api-key-0123", options: { region: ${REGION} } }
  - { id: bedrock-quick, plugin: bedrock, base_url: "${url}", options: { region: ${REGION} }, timeouts: { first_byte_ms: 300 } }
  - { id: anthropic, plugin: anthropic, base_url: "${url}", api_key: "sk-ant-direct" }
models:
  - { id: claude-bedrock, routes: [{ provider: bedrock, model: "${MODEL}" }], pricing: { input: 3, output: 15, cache_read: 0.3 } }
  - { id: claude-bedrock-key, routes: [{ provider: bedrock-key, model: "${MODEL}" }], pricing: { input: 3, output: 15 } }
  - { id: claude-quick, routes: [{ provider: bedrock-quick, model: "${MODEL}" }], pricing: { input: 3, output: 15 } }
  - { id: claude-failover, routes: [{ provider: bedrock, model: "${MODEL}" }, { provider: anthropic, model: claude-sonnet-4-5 }], pricing: { input: 3, output: 15 } }
`);

const thinkingToolEvents = sseEvents(FIXTURES.anthropicToolSse());
const withMetrics = (events: Json[]): Json[] =>
  events.map((e) => (e['type'] === 'message_stop' ? { ...e, 'amazon-bedrock-invocationMetrics': { inputTokenCount: 424, outputTokenCount: 90, invocationLatency: 900, firstByteLatency: 300 } } : e));
const weather: Anthropic.Tool = { name: 'weather', description: 'The weather', input_schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } };

describe('bedrock plugin: Claude through InvokeModel', () => {
  useAwsEnv();
  const env = useUpstreamAndGateway(config);
  const sdk = useSdkClients(env);
  afterEach(() => (skewMs = 0));

  it('a whole answer: signed with the session token, the body adapted (version in, model and stream out), the answer as Anthropic sent it, billed', async () => {
    env.upstream.script(bedrock(`${PATH}/invoke`, () => ({ headers: { 'content-type': 'application/json' }, body: JSON.parse(FIXTURES.anthropicText()) as Json })));
    const message = await sdk.anthropic.messages.create({ model: 'claude-bedrock', max_tokens: 100, messages: [{ role: 'user', content: 'Hello' }] });
    expect(message.content[0]).to.deep.include({ type: 'text' });
    const sent = env.upstream.last();
    expect(sent.url).to.equal(`${PATH}/invoke`).and.include('%3A0');
    expect(sent.headers['x-amz-security-token']).to.equal(AWS_TEST_CREDENTIALS.sessionToken);
    expect(sent.headers['x-api-key']).to.equal(undefined);
    expect(JSON.stringify(sent.headers)).not.to.include(KEYS.alice);
    const body = sent.json();
    expect(body).to.deep.include({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 100 });
    expect(body).not.to.have.any.keys('model', 'stream');
    const res = await post(env.gw.url, '/v1/messages', MESSAGES_HEADERS, { model: 'claude-bedrock', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] });
    expect(res.status).to.equal(200);
    const generation = await generationOf(env.gw.url, res.headers.get('x-request-id'));
    const usage = res.json()['usage'] as { input_tokens: number; output_tokens: number };
    expect(generation.tokens['input']).to.equal(usage.input_tokens);
    expect(generation.cost_usd).to.be.greaterThan(0);
  });

  it('a stream of thinking, a signature and a tool call, in frames cut every 7 bytes: the SDK\'s accumulator gets exactly what Anthropic would send', async () => {
    const bytes = Buffer.concat(withMetrics(thinkingToolEvents).map(chunk));
    env.upstream.script(bedrock(`${PATH}/invoke-with-response-stream`, () => eventStream(cutEvery(bytes, 7))));
    const stream = sdk.anthropic.messages.stream({ model: 'claude-bedrock', max_tokens: 1024, thinking: { type: 'enabled', budget_tokens: 512 }, tools: [weather], messages: [{ role: 'user', content: 'Weather in Florence?' }] });
    const raw: string[] = [];
    stream.on('streamEvent', (event) => raw.push(JSON.stringify(event)));
    const final = await stream.finalMessage();
    expect(final.content.map((b) => b.type)).to.deep.equal(['thinking', 'text', 'tool_use']);
    const thinking = final.content[0];
    expect(thinking?.type === 'thinking' && thinking.signature).to.equal('EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds');
    const use = final.content[2];
    expect(use?.type === 'tool_use' && use.input).to.deep.equal({ location: 'Florence, Italy' });
    expect(final.stop_reason).to.equal('tool_use');
    expect(final.usage.input_tokens).to.equal(424);
    expect(raw.join('\n')).not.to.include('amazon-bedrock-invocationMetrics');
    expect(env.upstream.last().headers['x-amzn-bedrock-accept']).to.equal('application/json');
  });

  it('several frames in one network chunk, and one frame split at every offset, decode the same', async () => {
    const events = sseEvents(FIXTURES.anthropicTextSse());
    const bytes = Buffer.concat(events.map(chunk));
    for (const cut of [1, 3, 64, bytes.length]) {
      env.upstream.script(bedrock(`${PATH}/invoke-with-response-stream`, () => eventStream(cutEvery(bytes, cut))));
      const final = await sdk.anthropic.messages.stream({ model: 'claude-bedrock', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] }).finalMessage();
      expect(final.content[0]?.type === 'text' && final.content[0].text.length).to.be.greaterThan(0);
    }
  });

  it('Claude Code\'s real request with its betas: unknown betas, tool fields and cache scopes dropped, the allowed betas in the body', async () => {
    const request = JSON.parse(readFileSync(new URL('../../fixtures/claude-code/claude-code-request.json', import.meta.url), 'utf8')) as Json;
    const headers = JSON.parse(readFileSync(new URL('../../fixtures/claude-code/claude-code-request.headers.json', import.meta.url), 'utf8')) as { headers: Record<string, string> };
    // What newer Claude Code versions add, which Bedrock refuses.
    const tools = (request['tools'] as Json[]).map((t, i) => (i === 0 ? { ...t, defer_loading: true, eager_input_streaming: true, cache_control: { type: 'ephemeral', scope: 'global' } } : t));
    const events = sseEvents(FIXTURES.anthropicTextSse());
    env.upstream.script(bedrock(`${PATH}/invoke-with-response-stream`, () => eventStream([Buffer.concat(events.map(chunk))])));
    const res = await post(env.gw.url, '/v1/messages?beta=true', { ...MESSAGES_HEADERS, 'anthropic-beta': headers.headers['anthropic-beta']! }, { ...request, tools, model: 'claude-bedrock' });
    expect(res.status).to.equal(200);
    const text = res.text;
    expect(text).to.include('event: message_stop');
    const sent = env.upstream.last().json();
    expect(sent['anthropic_beta']).to.deep.equal(['context-1m-2025-08-07', 'interleaved-thinking-2025-05-14', 'context-management-2025-06-27', 'effort-2025-11-24']);
    expect(sent['thinking']).to.deep.equal(request['thinking']);
    expect((sent['messages'] as unknown[]).length).to.equal((request['messages'] as unknown[]).length);
  });

  it('count_tokens goes to CountTokens with the foundation model id and the Invoke body, and answers input_tokens', async () => {
    const countPath = `/model/${encodeURIComponent('anthropic.claude-sonnet-4-5-20250929-v1:0')}/count-tokens`;
    let invokeBody: Json = {};
    env.upstream.script(async (req) => {
      const refused = await sigV4Refusal(req, REGION);
      if (refused) return refused;
      if (req.url !== countPath) return awsError(400, 'ValidationException', 'The provided model identifier is invalid.');
      invokeBody = JSON.parse(Buffer.from(String(((req.json()['input'] as Json)['invokeModel'] as Json)['body']), 'base64').toString('utf8')) as Json;
      return bodyRefusal(invokeBody) ?? { headers: { 'content-type': 'application/json' }, body: { inputTokens: 1234 } };
    });
    const count = await sdk.anthropic.messages.countTokens({ model: 'claude-bedrock', system: 'Be brief.', messages: [{ role: 'user', content: 'Hello' }] });
    expect(count.input_tokens).to.equal(1234);
    expect(invokeBody).to.deep.include({ anthropic_version: 'bedrock-2023-05-31', system: 'Be brief.', max_tokens: 1 });
  });

  it('an OpenAI SDK client streams from Claude on Bedrock, translated, with usage', async () => {
    const events = sseEvents(FIXTURES.anthropicTextSse());
    env.upstream.script(bedrock(`${PATH}/invoke-with-response-stream`, () => eventStream(cutEvery(Buffer.concat(events.map(chunk)), 50))));
    const stream = await sdk.openai.chat.completions.create({ model: 'claude-bedrock', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Hi' }] });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const part of stream) {
      text += part.choices[0]?.delta.content ?? '';
      if (part.usage) usage = part.usage;
    }
    expect(text.length).to.be.greaterThan(0);
    expect(usage?.prompt_tokens).to.be.greaterThan(0);
    expect(env.upstream.last().json()).to.have.property('max_tokens');
  });

  it('the Vercel AI SDK (its Anthropic provider) streams from Claude on Bedrock, and an image goes up as the client sent it', async () => {
    const events = sseEvents(FIXTURES.anthropicTextSse());
    env.upstream.script(bedrock(`${PATH}/invoke-with-response-stream`, () => eventStream(cutEvery(Buffer.concat(events.map(chunk)), 33))));
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
    const provider = createAnthropic({ baseURL: `${env.gw.url}/v1`, apiKey: KEYS.alice });
    const result = streamText({ model: provider('claude-bedrock'), messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', image: png, mediaType: 'image/png' }] }], maxRetries: 0 });
    let text = '';
    for await (const part of result.textStream) text += part;
    expect(text.length).to.be.greaterThan(0);
    expect((await result.usage).inputTokens).to.be.greaterThan(0);
    const content = (env.upstream.last().json()['messages'] as Json[])[0]!['content'] as Json[];
    expect(content.find((b) => b['type'] === 'image')).to.deep.include({ source: { type: 'base64', media_type: 'image/png', data: png.toString('base64') } });
  });

  it('a Chat client gets Bedrock\'s throttling as OpenAI\'s 429, with retry-after', async () => {
    env.upstream.script(async (req) => (await sigV4Refusal(req, REGION)) ?? awsError(429, 'ThrottlingException', 'Too many requests, please wait before trying again.'));
    const res = await post(env.gw.url, '/v1/chat/completions', { authorization: `Bearer ${KEYS.alice}` }, { model: 'claude-bedrock', messages: [{ role: 'user', content: 'Hi' }] });
    expect(res.status).to.equal(429);
    expect(res.headers.get('retry-after')).to.match(/^\d+$/);
    const error = res.json()['error'] as Json;
    expect(error['message']).to.include('ThrottlingException');
  });

  it('an image by URL is refused with a 400 naming the block, and nothing is sent', async () => {
    const res = await post(env.gw.url, '/v1/messages', MESSAGES_HEADERS, { model: 'claude-bedrock', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'text', text: 'What?' }, { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } }] }] });
    expect(res.status).to.equal(400);
    expect(res.text).to.include('messages[0].content[1].source').and.include('base64');
    expect(env.upstream.requests).to.have.length(0);
  });

  it('a Bedrock API key goes as a bearer token, and nothing is signed', async () => {
    env.upstream.script((req) => (req.headers['authorization'] === 'Bearer ABSKbedrock-api-key-0123' && req.headers['x-amz-date'] === undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.parse(FIXTURES.anthropicText()) as Json } : awsError(403, 'UnrecognizedClientException', 'bad key')));
    const message = await sdk.anthropic.messages.create({ model: 'claude-bedrock-key', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
    expect(message.type).to.equal('message');
  });

  it('a clock more than five minutes off: refused for its time, signed again with the clock corrected from Date, once', async () => {
    skewMs = 20 * 60_000;
    env.upstream.script(bedrock(`${PATH}/invoke`, () => ({ headers: { 'content-type': 'application/json' }, body: JSON.parse(FIXTURES.anthropicText()) as Json })));
    const message = await sdk.anthropic.messages.create({ model: 'claude-bedrock', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
    expect(message.type).to.equal('message');
    expect(env.upstream.requests).to.have.length(2);
    // Later requests are signed with the corrected clock from the start.
    await sdk.anthropic.messages.create({ model: 'claude-bedrock', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
    expect(env.upstream.requests).to.have.length(3);
  });

  describe('Bedrock\'s exceptions, in the caller\'s format', () => {
    const cases: [string, Reply, number, string][] = [
      ['ThrottlingException', awsError(429, 'ThrottlingException', 'Too many requests, please wait before trying again.'), 429, 'rate_limit_error'],
      ['ServiceQuotaExceededException (a 400 from Bedrock)', awsError(400, 'ServiceQuotaExceededException', 'Too many tokens per day.'), 429, 'rate_limit_error'],
      ['AccessDeniedException (a model not enabled in the region)', awsError(403, 'AccessDeniedException', "You don't have access to the model with the specified model ID."), 403, 'permission_error'],
      ['ValidationException', awsError(400, 'ValidationException', 'messages: roles must alternate'), 400, 'invalid_request_error'],
      ['ServiceUnavailableException', awsError(503, 'ServiceUnavailableException', 'Service unavailable.'), 503, 'overloaded_error'],
      ['ModelErrorException', awsError(424, 'ModelErrorException', 'The model failed.'), 502, 'api_error'],
    ];
    for (const [name, reply, status, type] of cases) {
      it(`${name} → ${status} ${type}`, async () => {
        env.upstream.script(async (req) => (await sigV4Refusal(req, REGION)) ?? reply);
        const res = await post(env.gw.url, '/v1/messages', MESSAGES_HEADERS, { model: 'claude-bedrock', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
        expect(res.status).to.equal(status);
        const body = res.json() as unknown as { error: { type: string; message: string } };
        expect(body.error.type).to.equal(type);
        // Throttling passes in about a second; a quota does not, and gets no such promise.
        if (name === 'ThrottlingException') expect(res.headers.get('retry-after')).to.match(/^\d+$/);
        else expect(res.headers.get('retry-after')).to.equal(null);
      });
    }

    it('credentials AWS does not know: a 502 naming the provider, never the key id or secret', async () => {
      env.upstream.script(() => awsError(403, 'UnrecognizedClientException', `The security token included in the request is invalid. (${AWS_TEST_CREDENTIALS.accessKeyId})`));
      const res = await post(env.gw.url, '/v1/messages', MESSAGES_HEADERS, { model: 'claude-bedrock', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
      expect(res.status).to.equal(502);
      const text = res.text;
      expect(text).to.include('bedrock').and.not.include(AWS_TEST_CREDENTIALS.accessKeyId);
      expect(text).not.to.include(AWS_TEST_CREDENTIALS.secretAccessKey);
    });

    it('a retry is watched by its own timers: refused for its time, then silent, it ends in a 504, not a hang', async () => {
      skewMs = 20 * 60_000;
      env.upstream.script(async (req) => (env.upstream.requests.length === 1 ? sigV4Refusal(req, REGION, Date.now() + skewMs) : { hang: true }));
      const res = await post(env.gw.url, '/v1/messages', MESSAGES_HEADERS, { model: 'claude-quick', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
      expect(env.upstream.requests).to.have.length(2);
      expect(res.status).to.equal(504);
    });

    for (const [what, reply] of [
      ['a model not enabled in the region (AccessDeniedException)', awsError(403, 'AccessDeniedException', "You don't have access to the model with the specified model ID.")],
      ['credentials AWS refuses', awsError(403, 'UnrecognizedClientException', 'The security token included in the request is invalid.')],
      ['a model Bedrock does not have (ResourceNotFoundException)', awsError(404, 'ResourceNotFoundException', 'Model not found.')],
    ] as const) {
      it(`${what}: the next route, another cloud, serves it`, async () => {
        env.upstream.script((req) => (req.url.startsWith('/v1/') ? undefined : reply));
        const message = await sdk.anthropic.messages.create({ model: 'claude-failover', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
        expect(message.type).to.equal('message');
        expect(env.upstream.requests.map((r) => r.url.split('/')[1])).to.deep.equal(['model', 'v1']);
      });
    }

    it('an operator\'s account and role in AWS\'s message never reach the caller', async () => {
      env.upstream.script(() => awsError(400, 'ValidationException', 'User: arn:aws:sts::123456789012:assumed-role/JunctionRole/i-0abc is not authorized to use this model'));
      const res = await post(env.gw.url, '/v1/messages', MESSAGES_HEADERS, { model: 'claude-bedrock', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
      expect(res.status).to.equal(400);
      expect(res.text).to.include('is not authorized').and.not.include('123456789012').and.not.include('JunctionRole');
    });

    it('an exception as the very first frame: a real HTTP status before any byte, so a client can retry', async () => {
      env.upstream.script(bedrock(`${PATH}/invoke-with-response-stream`, () => eventStream([frame('throttlingException', { message: 'Too many requests' }, 'exception')])));
      const res = await post(env.gw.url, '/v1/messages', MESSAGES_HEADERS, { model: 'claude-bedrock', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'Hi' }] });
      expect(res.status).to.equal(429);
      expect((res.json()['error'] as Json)['type']).to.equal('rate_limit_error');
    });

    it('a model down before the first byte fails over to the Anthropic route', async () => {
      env.upstream.script(async (req) => (req.url.startsWith('/v1/') ? undefined : ((await sigV4Refusal(req, REGION)) ?? awsError(503, 'ServiceUnavailableException', 'Service unavailable.'))));
      const message = await sdk.anthropic.messages.create({ model: 'claude-failover', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
      expect(message.type).to.equal('message');
      expect(env.upstream.requests.map((r) => r.url.split('/')[1])).to.deep.equal(['model', 'v1']);
      expect(env.upstream.last().headers['x-api-key']).to.equal('sk-ant-direct');
    });

    it('a throttling exception after 200, mid-stream: an in-band rate_limit_error, never a clean end', async () => {
      const events = sseEvents(FIXTURES.anthropicTextSse()).slice(0, 3);
      env.upstream.script(bedrock(`${PATH}/invoke-with-response-stream`, () => eventStream([...events.map(chunk), frame('throttlingException', { message: 'Too many tokens, please wait.' }, 'exception')])));
      const res = await post(env.gw.url, '/v1/messages', MESSAGES_HEADERS, { model: 'claude-bedrock', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'Hi' }] });
      const text = res.text;
      expect(text).to.include('event: error').and.include('rate_limit_error').and.include('Too many tokens');
      expect(text).not.to.include('message_stop');
    });

    it('a frame with a bad checksum, and a stream cut inside a frame: the good events, then an in-band error, never a hang or a clean end', async () => {
      const events = sseEvents(FIXTURES.anthropicTextSse());
      const good = events.slice(0, 3).map(chunk);
      const bad = chunk(events[3]);
      bad.writeUInt8(bad.readUInt8(bad.length - 20) ^ 0xff, bad.length - 20); // inside the payload: the message CRC no longer matches
      const cut = chunk(events[3]).subarray(0, 30);
      for (const tail of [bad, cut]) {
        env.upstream.script(bedrock(`${PATH}/invoke-with-response-stream`, () => eventStream([...good, tail])));
        const res = await post(env.gw.url, '/v1/messages', MESSAGES_HEADERS, { model: 'claude-bedrock', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'Hi' }] });
        // The three good events go out first, so the error is in-band.
        expect(res.status).to.equal(200);
        expect(res.text).to.include('event: message_start').and.include('event: error').and.not.include('message_stop');
        expect(res.text).to.match(/checksum|ended inside a message/i);
      }
    });
  });
});

describe('bedrock plugin: no credentials anywhere', () => {
  useAwsEnv({ ...AWS_ENV, AWS_ACCESS_KEY_ID: undefined, AWS_SECRET_ACCESS_KEY: undefined, AWS_SESSION_TOKEN: undefined, AWS_CONTAINER_CREDENTIALS_FULL_URI: undefined, AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: undefined, AWS_WEB_IDENTITY_TOKEN_FILE: undefined });
  const env = useUpstreamAndGateway(config);

  it('a 502 naming the provider, and nothing sent', async () => {
    const res = await post(env.gw.url, '/v1/messages', MESSAGES_HEADERS, { model: 'claude-bedrock', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
    expect(res.status).to.equal(502);
    const body = res.json() as unknown as { error: { message: string } };
    expect(body.error.message).to.include('credentials for').and.include('upstream provider "bedrock"');
    expect(env.upstream.requests).to.have.length(0);
  });
});
