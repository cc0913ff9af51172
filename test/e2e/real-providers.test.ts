import { expect } from 'chai';
import nock from 'nock';
import { FIXTURES } from '../support/fake-upstream.ts';
import { call, CHAT_HEADERS, KEYS, MESSAGES_HEADERS, startGateway, type TestGateway } from '../support/gateway.ts';

// nock patches http at import; keep it off except inside this suite.
nock.restore();

const ENV = { ANTHROPIC_API_KEY: 'sk-ant-REAL-1', OPENAI_API_KEY: 'sk-proj-REAL-2', OPENROUTER_API_KEY: 'sk-or-REAL-3' };

// The providers exactly as config/gateway.yaml writes them, with keys from the environment.
const CONFIG = `
auth: { keys: [{ name: alice, key: "${KEYS.alice}" }] }
providers:
  - { id: anthropic, plugin: anthropic, base_url: https://api.anthropic.com, api_key: "\${ANTHROPIC_API_KEY:-}" }
  - { id: openai, plugin: openai, base_url: https://api.openai.com/v1, api_key: "\${OPENAI_API_KEY:-}" }
  - id: openrouter
    plugin: openai
    base_url: https://openrouter.ai/api/v1
    api_key: "\${OPENROUTER_API_KEY:-}"
    options: { headers: { X-Title: Junction } }
  - { id: default-anthropic, plugin: anthropic, api_key: k-default-anthropic }
models:
  - { id: claude-sonnet-4-6, routes: [{ provider: anthropic }], pricing: { input: 3, output: 15 } }
  - { id: claude-default, routes: [{ provider: default-anthropic, model: claude-sonnet-4-6 }], pricing: { input: 3, output: 15 } }
  - { id: gpt-4o, routes: [{ provider: openai, model: gpt-4o-2024-08-06 }], pricing: { input: 2.5, output: 10 } }
  - { id: gpt-4o-mini, routes: [{ provider: openrouter, model: openai/gpt-4o-mini }], pricing: { input: 0.15, output: 0.6 } }
`;

const chat = (model: string) => ({ model, messages: [{ role: 'user', content: 'hi' }] });
const messages = (model: string) => ({ model, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] });

describe('real provider base URLs (intercepted by nock, no network)', () => {
  let gw: TestGateway;
  before(async () => {
    nock.activate();
    nock.disableNetConnect();
    nock.enableNetConnect(/^127\.0\.0\.1(:\d+)?$/);
    gw = await startGateway(CONFIG, { env: ENV });
  });
  after(async () => {
    await gw.close();
    nock.cleanAll();
    nock.enableNetConnect();
    nock.restore();
  });
  afterEach(() => {
    const pending = nock.pendingMocks();
    nock.cleanAll();
    expect(pending, 'every expected upstream call was made').to.deep.equal([]);
  });

  it('sends Messages to https://api.anthropic.com/v1/messages with x-api-key from the environment', async () => {
    nock('https://api.anthropic.com', { badheaders: ['authorization', 'cookie'] })
      .matchHeader('x-api-key', 'sk-ant-REAL-1')
      .matchHeader('anthropic-version', '2023-06-01')
      .matchHeader('host', 'api.anthropic.com')
      .post('/v1/messages', (body: { model: string }) => body.model === 'claude-sonnet-4-6')
      .query({ beta: 'true' })
      .reply(200, FIXTURES.anthropicText(), { 'content-type': 'application/json', 'anthropic-organization-id': 'org-x' });
    const res = await call(`${gw.url}/v1/messages?beta=true`, { headers: MESSAGES_HEADERS, body: messages('claude-sonnet-4-6') });
    expect(res.status).to.equal(200);
    expect(res.text).to.equal(FIXTURES.anthropicText());
    expect(res.headers.has('anthropic-organization-id')).to.equal(false);
  });

  it('defaults the anthropic plugin to api.anthropic.com when base_url is omitted', async () => {
    nock('https://api.anthropic.com').matchHeader('x-api-key', 'k-default-anthropic').post('/v1/messages/count_tokens').reply(200, { input_tokens: 3 });
    const res = await call(`${gw.url}/v1/messages/count_tokens`, { headers: MESSAGES_HEADERS, body: { model: 'claude-default', messages: [{ role: 'user', content: 'hi' }] } });
    expect(res.json()).to.deep.equal({ input_tokens: 3 });
  });

  it('sends Chat to https://api.openai.com/v1/chat/completions with the provider Bearer key', async () => {
    nock('https://api.openai.com', { badheaders: ['x-api-key'] })
      .matchHeader('authorization', 'Bearer sk-proj-REAL-2')
      .post('/v1/chat/completions', (body: { model: string }) => body.model === 'gpt-4o-2024-08-06')
      .reply(200, FIXTURES.openaiText(), { 'content-type': 'application/json', 'openai-organization': 'org-x', 'x-request-id': 'req_oa' });
    const res = await call(`${gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: chat('gpt-4o') });
    expect(res.status).to.equal(200);
    expect(res.headers.has('openai-organization')).to.equal(false);
    expect(res.headers.get('upstream-request-id')).to.equal('req_oa');
    expect(res.headers.get('x-request-id')).to.match(/^req_[0-9a-f]{32}$/);
  });

  it('sends OpenRouter requests to https://openrouter.ai/api/v1/chat/completions with its attribution header', async () => {
    nock('https://openrouter.ai')
      .matchHeader('authorization', 'Bearer sk-or-REAL-3')
      .matchHeader('x-title', 'Junction')
      .post('/api/v1/chat/completions', (body: { model: string }) => body.model === 'openai/gpt-4o-mini')
      .reply(200, FIXTURES.openaiText(), { 'content-type': 'application/json' });
    const res = await call(`${gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: chat('gpt-4o-mini') });
    expect(res.status).to.equal(200);
  });

  it('sends nothing anywhere for requests it refuses', async () => {
    // No interceptor is registered: any upstream call would fail with a nock NetConnectNotAllowedError → 502.
    const refused = await Promise.all([
      call(`${gw.url}/v1/messages`, { headers: { 'x-api-key': KEYS.alice }, body: messages('claude-sonnet-4-6') }),
      call(`${gw.url}/v1/chat/completions`, { headers: { authorization: 'Bearer sk-jct-nope-00000000000' }, body: chat('gpt-4o') }),
      call(`${gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: chat('unknown-model') }),
      call(`${gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { ...chat('gpt-4o'), temperature: 5 } }),
    ]);
    expect(refused.map((r) => r.status)).to.deep.equal([400, 401, 404, 400]);
  });
});
