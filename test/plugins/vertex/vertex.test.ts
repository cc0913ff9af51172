import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { FIXTURES, type RecordedRequest, type Reply } from '../../support/fake-upstream.ts';
import { call, KEYS, MESSAGES_HEADERS, useSdkClients, useUpstreamAndGateway, oneKeyConfig } from '../../support/gateway.ts';
import { GoogleTokenFake } from '../../support/google-fake.ts';

/**
 * The `vertex` plugin (issue #15; providers.md §2) against a fake with its own OAuth token
 * endpoint, which the service-account file's `token_uri` points at: it checks the signed JWT
 * grant and issues tokens the API then requires. The API refuses `model` in a Claude body, a
 * version other than Vertex's, and betas Vertex does not take (its 400 for the header).
 */

const json = { 'content-type': 'application/json' };
const google = new GoogleTokenFake();
let tokenUri = '';
const PUBLISHERS = '/v1/projects/my-project/locations/us-east5/publishers';
const CLAUDE = `${PUBLISHERS}/anthropic/models/${encodeURIComponent('claude-sonnet-4-5@20250929')}`;
/** Betas Vertex refuses, as it says (vercel/ai#4431, anthropics/claude-code#21625). */
const REFUSED_BETAS = ['prompt-caching-2024-07-31', 'prompt-caching-scope-2026-01-05', 'effort-2025-11-24', 'claude-code-20250219'];

type Json = Record<string, unknown>;
const invalid = (message: string): Reply => ({ status: 400, headers: json, body: { type: 'error', error: { type: 'invalid_request_error', message } } });

function claudeRefusal(req: RecordedRequest, countTokens = false): Reply | undefined {
  const body = req.json();
  if (body['anthropic_version'] !== 'vertex-2023-10-16') return invalid('anthropic_version: vertex-2023-10-16 is required');
  if ('model' in body && !countTokens) return invalid('model: Extra inputs are not permitted');
  const refused = String(req.headers['anthropic-beta'] ?? '').split(',').filter((b) => REFUSED_BETAS.includes(b));
  if (refused.length > 0) return invalid(`Unexpected value(s) \`${refused.join(',')}\` for the \`anthropic-beta\` header.`);
  return undefined;
}

const vertex = (routes: Record<string, (req: RecordedRequest) => Reply>) => (req: RecordedRequest): Reply => {
  if (req.url === '/token') return google.token(req, tokenUri);
  const refused = google.refusal(req);
  if (refused) return refused;
  const route = routes[req.url];
  return route ? route(req) : { status: 404, headers: json, body: { error: { code: 404, message: `no route ${req.url}`, status: 'NOT_FOUND' } } };
};

const config = (url: string): string => {
  tokenUri = `${url}/token`;
  const file = google.writeServiceAccount(tokenUri);
  return oneKeyConfig(`
providers:
  - { id: vertex, plugin: vertex, base_url: "${url}", options: { project: my-project, location: us-east5, credentials_file: "${file}" } }
models:
  - { id: claude-vertex, routes: [{ provider: vertex, model: "claude-sonnet-4-5@20250929" }], pricing: { input: 3, output: 15 } }
  - { id: gemini-vertex, routes: [{ provider: vertex, model: gemini-2.5-pro }], pricing: { input: 1.25, output: 10 } }
`);
};

describe('vertex plugin: Claude and Gemini on Vertex AI, with OAuth from a service account', () => {
  const env = useUpstreamAndGateway(config);
  const sdk = useSdkClients(env);
  afterEach(() => {
    google.expiresIn = 3600;
    google.refuse = false;
  });

  it('Claude, whole and streamed: rawPredict with Vertex\'s version and the model in the path; one token for many requests, from the file\'s token_uri', async () => {
    const fetchesBefore = google.fetches;
    env.upstream.script(
      vertex({
        [`${CLAUDE}:rawPredict`]: (req) => claudeRefusal(req) ?? { headers: json, body: JSON.parse(FIXTURES.anthropicText()) as Json },
        [`${CLAUDE}:streamRawPredict`]: (req) => claudeRefusal(req) ?? { headers: { 'content-type': 'text/event-stream' }, sse: FIXTURES.anthropicToolSse() },
      }),
    );
    const whole = await sdk.anthropic.messages.create({ model: 'claude-vertex', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] });
    expect(whole.content[0]?.type).to.equal('text');
    const sent = env.upstream.last();
    expect(sent.json()).to.deep.include({ anthropic_version: 'vertex-2023-10-16', max_tokens: 100 });
    expect(sent.json()).not.to.have.property('model');
    const streamed = await sdk.anthropic.messages
      .stream({ model: 'claude-vertex', max_tokens: 1024, thinking: { type: 'enabled', budget_tokens: 512 }, messages: [{ role: 'user', content: 'Weather?' }] }, { headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14,prompt-caching-scope-2026-01-05,effort-2025-11-24' } })
      .finalMessage();
    expect(streamed.content.map((b) => b.type)).to.deep.equal(['thinking', 'text', 'tool_use']);
    expect(env.upstream.last().headers['anthropic-beta']).to.equal('interleaved-thinking-2025-05-14');
    expect(env.upstream.last().json()['stream']).to.equal(true);
    await sdk.anthropic.messages.create({ model: 'claude-vertex', max_tokens: 100, messages: [{ role: 'user', content: 'Again' }] });
    expect(google.fetches - fetchesBefore).to.equal(1);
    expect(env.upstream.requests.filter((r) => r.url === '/token')).to.have.length(1);
  });

  it('Claude Code\'s real request and betas through Vertex: only the betas Vertex takes, in the header', async () => {
    const request = JSON.parse(readFileSync(new URL('../../fixtures/claude-code/claude-code-request.json', import.meta.url), 'utf8')) as Json;
    const recorded = JSON.parse(readFileSync(new URL('../../fixtures/claude-code/claude-code-request.headers.json', import.meta.url), 'utf8')) as { headers: Record<string, string> };
    env.upstream.script(vertex({ [`${CLAUDE}:streamRawPredict`]: (req) => claudeRefusal(req) ?? { headers: { 'content-type': 'text/event-stream' }, sse: FIXTURES.anthropicTextSse() } }));
    const res = await call(`${env.gw.url}/v1/messages?beta=true`, { headers: { ...MESSAGES_HEADERS, 'anthropic-beta': recorded.headers['anthropic-beta']! }, body: { ...request, model: 'claude-vertex' } });
    expect(res.status).to.equal(200);
    expect(res.text).to.include('event: message_stop');
    expect(env.upstream.last().headers['anthropic-beta']).to.equal('context-1m-2025-08-07,interleaved-thinking-2025-05-14,context-management-2025-06-27');
    expect((env.upstream.last().json()['messages'] as unknown[]).length).to.equal((request['messages'] as unknown[]).length);
  });

  it('count_tokens through Vertex\'s count-tokens, with the model in the body', async () => {
    env.upstream.script(vertex({ [`${PUBLISHERS}/anthropic/models/count-tokens:rawPredict`]: (req) => claudeRefusal(req, true) ?? (req.json()['model'] === 'claude-sonnet-4-5@20250929' ? { headers: json, body: { input_tokens: 77 } } : invalid('model missing')) }));
    const count = await sdk.anthropic.messages.countTokens({ model: 'claude-vertex', messages: [{ role: 'user', content: 'Hello' }] });
    expect(count.input_tokens).to.equal(77);
  });

  it('count_tokens on a Gemini model: Vertex\'s countTokens with contents and system at the top', async () => {
    env.upstream.script(vertex({ [`${PUBLISHERS}/google/models/gemini-2.5-pro:countTokens`]: (req) => (Array.isArray(req.json()['contents']) && req.json()['systemInstruction'] ? { headers: json, body: { totalTokens: 55 } } : invalid('contents required')) }));
    const count = await sdk.anthropic.messages.countTokens({ model: 'gemini-vertex', system: 'Be brief.', messages: [{ role: 'user', content: 'Hello' }] });
    expect(count.input_tokens).to.equal(55);
  });

  it('Gemini through generateContent, from an OpenAI SDK client, streamed and whole', async () => {
    const gemini = (text: string, finishReason?: string): Json => ({ candidates: [{ content: { role: 'model', parts: [{ text }] }, ...(finishReason && { finishReason }), index: 0 }], usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 3, totalTokenCount: 12 }, modelVersion: 'gemini-2.5-pro' });
    env.upstream.script(
      vertex({
        [`${PUBLISHERS}/google/models/gemini-2.5-pro:generateContent`]: (req) => ((req.json()['contents'] as Json[]).every((c) => c['role'] === 'user' || c['role'] === 'model') ? { headers: json, body: gemini('Hello from Vertex.', 'STOP') } : invalid('role missing')),
        [`${PUBLISHERS}/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse`]: () => ({ headers: { 'content-type': 'text/event-stream' }, sse: `data: ${JSON.stringify(gemini('Hello '))}\r\n\r\ndata: ${JSON.stringify(gemini('again.', 'STOP'))}\r\n\r\n` }),
      }),
    );
    const whole = await sdk.openai.chat.completions.create({ model: 'gemini-vertex', messages: [{ role: 'user', content: 'Hi' }] });
    expect(whole.choices[0]?.message.content).to.equal('Hello from Vertex.');
    expect(whole.usage?.prompt_tokens).to.equal(9);
    const stream = await sdk.openai.chat.completions.create({ model: 'gemini-vertex', stream: true, messages: [{ role: 'user', content: 'Hi' }] });
    let text = '';
    for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
    expect(text).to.equal('Hello again.');
  });

  it('a token revoked early: the 401 drops it, a new one is fetched and the request sent once more', async () => {
    env.upstream.script(vertex({ [`${CLAUDE}:rawPredict`]: () => ({ headers: json, body: JSON.parse(FIXTURES.anthropicText()) as Json }) }));
    await sdk.anthropic.messages.create({ model: 'claude-vertex', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
    google.revokeAll();
    const before = google.fetches;
    env.upstream.reset();
    env.upstream.script(vertex({ [`${CLAUDE}:rawPredict`]: () => ({ headers: json, body: JSON.parse(FIXTURES.anthropicText()) as Json }) }));
    const message = await sdk.anthropic.messages.create({ model: 'claude-vertex', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
    expect(message.type).to.equal('message');
    expect(google.fetches - before).to.equal(1);
    expect(env.upstream.requests.map((r) => r.url.split(':')[1] ?? r.url)).to.deep.equal(['rawPredict', '/token', 'rawPredict']);
  });

  it('a token about to expire is fetched again before it does, not used until refused', async () => {
    google.revokeAll();
    google.expiresIn = 120; // inside the library's five-minute early-refresh window
    env.upstream.script(vertex({ [`${CLAUDE}:rawPredict`]: () => ({ headers: json, body: JSON.parse(FIXTURES.anthropicText()) as Json }) }));
    await sdk.anthropic.messages.create({ model: 'claude-vertex', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
    const before = google.fetches;
    const sent = env.upstream.requests.length;
    await sdk.anthropic.messages.create({ model: 'claude-vertex', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
    expect(google.fetches - before).to.equal(1);
    // Fetched before the request, not after a refusal: a token request, then one API request.
    expect(env.upstream.requests.slice(sent).map((r) => r.url.split(':')[1] ?? r.url)).to.deep.equal(['/token', 'rawPredict']);
  });

  it('a token revoked and a new grant refused: a 502 naming the provider, never the key', async () => {
    // Whatever token is cached is refused by the API; the plugin asks for a new one and is refused.
    google.revokeAll();
    google.refuse = true;
    env.upstream.script(vertex({ [`${CLAUDE}:rawPredict`]: () => ({ headers: json, body: JSON.parse(FIXTURES.anthropicText()) as Json }) }));
    const res = await call(`${env.gw.url}/v1/messages`, { headers: { ...MESSAGES_HEADERS }, body: { model: 'claude-vertex', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] } });
    expect(res.status).to.equal(502);
    expect(String((res.json()['error'] as Json)['message'])).to.include('provider "vertex"');
    expect(res.text).not.to.include('PRIVATE KEY').and.not.include(google.email);
    expect(env.upstream.requests.filter((r) => r.url.includes('rawPredict'))).to.have.length.at.most(1);
  });
});

describe('vertex plugin: Application Default Credentials from the metadata server', () => {
  const adc = new GoogleTokenFake();
  const saved: Record<string, string | undefined> = {};
  const ADC_ENV = ['GOOGLE_APPLICATION_CREDENTIALS', 'CLOUDSDK_CONFIG', 'GCE_METADATA_HOST', 'METADATA_SERVER_DETECTION'];
  const env = useUpstreamAndGateway((url) => {
    // No file anywhere: not in the config, not in GOOGLE_APPLICATION_CREDENTIALS, not gcloud's.
    for (const name of ADC_ENV) saved[name] = process.env[name];
    delete process.env['GOOGLE_APPLICATION_CREDENTIALS'];
    process.env['CLOUDSDK_CONFIG'] = '/nonexistent/gcloud';
    process.env['GCE_METADATA_HOST'] = new URL(url).host;
    process.env['METADATA_SERVER_DETECTION'] = 'assume-present';
    return `
log: { level: info }
routing: { retries: 0 }
auth: { keys: [{ name: alice, key: "${KEYS.alice}", balance_usd: 10 }] }
providers:
  - { id: vertex, plugin: vertex, base_url: "${url}", options: { project: my-project, location: us-east5 } }
models:
  - { id: claude-vertex, routes: [{ provider: vertex, model: "claude-sonnet-4-5@20250929" }], pricing: { input: 3, output: 15 } }
`;
  });
  const sdk = useSdkClients(env);
  after(() => {
    for (const name of ADC_ENV) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  });

  it('gets its token from the metadata server, once for many requests', async () => {
    env.upstream.script((req) => adc.metadataToken(req) ?? adc.refusal(req) ?? (req.url === `${CLAUDE}:rawPredict` ? { headers: json, body: JSON.parse(FIXTURES.anthropicText()) as Json } : undefined));
    for (let i = 0; i < 3; i++) expect((await sdk.anthropic.messages.create({ model: 'claude-vertex', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] })).type).to.equal('message');
    expect(adc.fetches).to.equal(1);
    expect(env.upstream.requests.filter((r) => r.url.includes('rawPredict'))).to.have.length(3);
  });
});
