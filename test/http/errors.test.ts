import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import Koa from 'koa';
import { fileURLToPath } from 'node:url';
import { FakeUpstream } from '../support/fake-upstream.ts';
import { call, CHAT_HEADERS, KEYS, MESSAGES_HEADERS, standardConfig, startGateway, LogCapture, type TestGateway } from '../support/gateway.ts';
import { createErrorHandler } from '../../src/http/middleware/errors.ts';
import { createRequestContext } from '../../src/http/middleware/request-context.ts';
import { createLogger } from '../../src/log.ts';
import type { GatewayState } from '../../src/http/state.ts';

const PLUGINS_DIR = fileURLToPath(new URL('../fixtures/plugins/', import.meta.url));

describe('errors', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  before(async () => {
    upstream = await new FakeUpstream().start();
    gw = await startGateway(
      standardConfig(
        upstream.url,
        `  - id: needs-key
    routes: [{ provider: keyless }]
    pricing: { input: 1, output: 1 }
  - id: broken
    routes: [{ provider: failing }]
    pricing: { input: 1, output: 1 }
  - id: broken-stream
    routes: [{ provider: failing-stream }]
    pricing: { input: 1, output: 1 }
`,
      ).replace(
        '  - { id: mock, plugin: mock }',
        `  - { id: mock, plugin: mock }
  - { id: keyless, plugin: openai, base_url: "${upstream.url}/v1", api_key: "\${JUNCTION_TEST_UNSET_KEY:-}" }
  - { id: failing, plugin: ./failing-plugin.js }
  - { id: failing-stream, plugin: ./failing-plugin.js, options: { mode: stream } }`,
      ),
      { dir: PLUGINS_DIR },
    );
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });
  afterEach(() => upstream.reset());

  it('answers an unknown model with 404 naming it, in both formats, sending nothing upstream', async () => {
    const m = await call(`${gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: { model: 'gpt-5-turbo-x', max_tokens: 1, messages: [{ role: 'user', content: 'x' }] } });
    expect(m.status).to.equal(404);
    expect(m.json()).to.deep.equal({
      type: 'error',
      error: { type: 'not_found_error', message: 'model "gpt-5-turbo-x" not found' },
      request_id: m.headers.get('x-request-id'),
    });
    const c = await call(`${gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model: 'gpt-5-turbo-x', messages: [{ role: 'user', content: 'x' }] } });
    expect(c.status).to.equal(404);
    expect(c.json()).to.deep.equal({
      error: { message: 'model "gpt-5-turbo-x" not found', type: 'not_found_error', param: 'model', code: 'model_not_found' },
    });
    expect(upstream.requests).to.have.length(0);
  });

  it('answers 503 naming the variable to set when the provider has no key, and tells SDKs not to retry', async () => {
    const res = await call(`${gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model: 'needs-key', messages: [{ role: 'user', content: 'x' }] } });
    expect(res.status).to.equal(503);
    expect((res.json()['error'] as { message: string }).message).to.equal(
      'provider "keyless" has no API key: set JUNCTION_TEST_UNSET_KEY and restart the gateway',
    );
    expect(res.headers.get('x-should-retry')).to.equal('false');
    expect(upstream.requests).to.have.length(0);
  });

  it('answers an unknown path with 404 and a wrong method with 405, in the caller format', async () => {
    const chat = await call(`${gw.url}/v1/completions`, { headers: CHAT_HEADERS, body: {} });
    expect(chat.status).to.equal(404);
    expect(chat.json()['error']).to.deep.include({ type: 'not_found_error', message: 'no route for POST /v1/completions' });
    const messages = await call(`${gw.url}/v1/messages/batches`, { headers: MESSAGES_HEADERS });
    expect(messages.status).to.equal(404);
    expect(messages.json()['type']).to.equal('error');
    const wrongMethod = await call(`${gw.url}/v1/messages`, { headers: MESSAGES_HEADERS });
    expect(wrongMethod.status).to.equal(405);
    expect(wrongMethod.headers.get('allow')).to.equal('POST');
    expect(wrongMethod.json()['error']).to.deep.include({ type: 'invalid_request_error' });
  });

  it('puts x-request-id on every response, success or error, streamed or not', async () => {
    const responses = await Promise.all([
      call(`${gw.url}/healthz`),
      call(`${gw.url}/nowhere`),
      call(`${gw.url}/v1/models`),
      call(`${gw.url}/v1/models`, { headers: CHAT_HEADERS }),
      call(`${gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: '{' }),
      call(`${gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: { model: 'demo', max_tokens: 3, stream: true, messages: [{ role: 'user', content: 'x' }] } }),
      call(`${gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] } }),
    ]);
    const ids = responses.map((r) => r.headers.get('x-request-id'));
    for (const id of ids) expect(id).to.match(/^req_[0-9a-f]{32}$/);
    expect(new Set(ids).size).to.equal(ids.length);
  });

  it('answers a HEAD / probe (Claude Code sends one first)', async () => {
    const res = await fetch(`${gw.url}/`, { method: 'HEAD' });
    expect(res.status).to.equal(200);
  });

  it('turns a plugin exception into a 502 with no internal detail', async () => {
    const res = await call(`${gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: { model: 'broken', max_tokens: 1, messages: [{ role: 'user', content: 'x' }] } });
    expect(res.status).to.equal(502);
    expect(res.json()['error']).to.deep.equal({ type: 'api_error', message: 'provider "failing" failed while answering' });
    expect(res.text).not.to.match(/SECRET|plugin\.js|\bat /);
  });

  it('ends a plugin stream that fails midway with an in-band error the SDK raises', async () => {
    const client = new Anthropic({ baseURL: gw.url, apiKey: KEYS.alice, maxRetries: 0 });
    const raw = await call(`${gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: { model: 'broken-stream', max_tokens: 1, stream: true, messages: [{ role: 'user', content: 'x' }] } });
    expect(raw.status).to.equal(200);
    expect(raw.text.trim().split('\n\n').at(-1)).to.equal(
      `event: error\ndata: {"type":"error","error":{"type":"api_error","message":"provider \\"failing-stream\\" failed while answering"},"request_id":"${raw.headers.get('x-request-id')}"}`,
    );
    expect(raw.text).not.to.include('SECRET');
    const outcome = await client.messages
      .stream({ model: 'broken-stream', max_tokens: 1, messages: [{ role: 'user', content: 'x' }] })
      .finalMessage()
      .then(() => 'resolved', (err: unknown) => err);
    expect(outcome).to.be.instanceOf(Anthropic.APIError);
  });

  it('answers an unexpected exception with a bare 500 and logs the stack instead', async () => {
    const logs = new LogCapture();
    const app = new Koa<GatewayState>();
    app.silent = true;
    app.use(createRequestContext());
    app.use(createErrorHandler(createLogger('error', logs)));
    app.use(async () => {
      throw new TypeError('SECRET-STACK-DETAIL');
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const { port } = server.address() as { port: number };
      const res = await call(`http://127.0.0.1:${port}/v1/chat/completions`, { body: {} });
      expect(res.status).to.equal(500);
      expect(res.json()).to.deep.equal({ error: { message: 'internal gateway error', type: 'api_error', param: null, code: null } });
      expect(logs.raw.join('\n')).to.include('SECRET-STACK-DETAIL');
    } finally {
      server.close();
    }
  });
});
