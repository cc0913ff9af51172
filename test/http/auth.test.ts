import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { FakeUpstream } from '../support/fake-upstream.ts';
import { call, KEYS, MESSAGES_HEADERS, standardConfig, startGateway, type TestGateway } from '../support/gateway.ts';

const messages = (model: string) => ({ model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
const chat = (model: string) => ({ model, messages: [{ role: 'user', content: 'hi' }] });
const VERSION = { 'anthropic-version': '2023-06-01' };

describe('keys', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;

  before(async () => {
    upstream = await new FakeUpstream().start();
    const hashed = createHash('sha256').update(KEYS.hashed).digest('hex');
    gw = await startGateway(
      standardConfig(upstream.url).replace(
        '    - { name: restricted',
        `    - { name: hashed, key_sha256: "${hashed.toUpperCase()}" }\n    - { name: restricted`,
      ),
    );
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });
  afterEach(() => upstream.reset());

  it('accepts a key in x-api-key (Anthropic SDK 0.x, Claude Code)', async () => {
    const res = await call(`${gw.url}/v1/messages`, { headers: { ...VERSION, 'x-api-key': KEYS.alice }, body: messages('claude-sonnet-4-6') });
    expect(res.status).to.equal(200);
  });

  it('accepts a key as Authorization: Bearer (Anthropic SDK 1.x, OpenAI SDK)', async () => {
    const res = await call(`${gw.url}/v1/chat/completions`, { headers: { authorization: `Bearer ${KEYS.alice}` }, body: chat('gpt-4o') });
    expect(res.status).to.equal(200);
    const res2 = await call(`${gw.url}/v1/messages`, { headers: { ...VERSION, authorization: `bearer ${KEYS.alice}` }, body: messages('demo') });
    expect(res2.status).to.equal(200);
  });

  it('accepts a key configured only as key_sha256 (any case)', async () => {
    const res = await call(`${gw.url}/v1/messages`, { headers: { ...VERSION, 'x-api-key': KEYS.hashed }, body: messages('demo') });
    expect(res.status).to.equal(200);
  });

  it('answers 401 in the Messages format when the key is missing, and sends nothing upstream', async () => {
    const res = await call(`${gw.url}/v1/messages`, { headers: VERSION, body: messages('claude-sonnet-4-6') });
    expect(res.status).to.equal(401);
    expect(res.json()).to.deep.equal({
      type: 'error',
      error: {
        type: 'authentication_error',
        message: 'missing API key: send it in the x-api-key header or as Authorization: Bearer <key>',
      },
      request_id: res.headers.get('x-request-id'),
    });
    expect(upstream.requests).to.have.length(0);
  });

  it('answers 401 in the Chat format for a wrong key', async () => {
    const res = await call(`${gw.url}/v1/chat/completions`, { headers: { authorization: 'Bearer sk-jct-wrong-000000000000' }, body: chat('gpt-4o') });
    expect(res.status).to.equal(401);
    expect(res.json()).to.deep.equal({
      error: { message: 'invalid API key', type: 'authentication_error', param: null, code: 'invalid_api_key' },
    });
    expect(upstream.requests).to.have.length(0);
  });

  it('answers 401 for a non-Bearer Authorization scheme', async () => {
    const res = await call(`${gw.url}/v1/chat/completions`, { headers: { authorization: `Basic ${KEYS.alice}` }, body: chat('gpt-4o') });
    expect(res.status).to.equal(401);
  });

  it('refuses two different keys in one request rather than picking one', async () => {
    const res = await call(`${gw.url}/v1/messages`, {
      headers: { ...VERSION, 'x-api-key': KEYS.alice, authorization: `Bearer ${KEYS.restricted}` },
      body: messages('demo'),
    });
    expect(res.status).to.equal(400);
    expect(res.text).to.include('different keys');
    const same = await call(`${gw.url}/v1/messages`, {
      headers: { ...VERSION, 'x-api-key': KEYS.alice, authorization: `Bearer ${KEYS.alice}` },
      body: messages('demo'),
    });
    expect(same.status).to.equal(200);
  });

  it('answers 403 permission_error for a model outside the key allowlist, in both formats', async () => {
    const m = await call(`${gw.url}/v1/messages`, { headers: { ...VERSION, 'x-api-key': KEYS.restricted }, body: messages('claude-sonnet-4-6') });
    expect(m.status).to.equal(403);
    expect(m.json()['error']).to.deep.equal({ type: 'permission_error', message: 'this API key may not use model "claude-sonnet-4-6"' });
    const c = await call(`${gw.url}/v1/chat/completions`, { headers: { authorization: `Bearer ${KEYS.restricted}` }, body: chat('gpt-4o') });
    expect(c.status).to.equal(200); // gpt-* is allowed
    expect(upstream.requests).to.have.length(1);
  });

  it('lists only the models a restricted key may use', async () => {
    const res = await call(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${KEYS.restricted}` } });
    const ids = (res.json()['data'] as { id: string }[]).map((m) => m.id);
    expect(ids).to.deep.equal(['gpt-4o', 'gpt-same', 'demo']);
  });

  it('requires a key on /v1/models but not on /healthz', async () => {
    expect((await call(`${gw.url}/v1/models`)).status).to.equal(401);
    const health = await call(`${gw.url}/healthz`);
    expect(health.status).to.equal(200);
    expect(health.json()).to.deep.equal({ status: 'ok' });
  });

  it('uses the client key only to authenticate: it never reaches the upstream', async () => {
    await call(`${gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: messages('claude-sonnet-4-6') });
    await call(`${gw.url}/v1/chat/completions`, { headers: { authorization: `Bearer ${KEYS.alice}` }, body: chat('gpt-4o') });
    expect(upstream.requests).to.have.length(2);
    for (const req of upstream.requests) expect(req.rawHeaders.join('\n')).not.to.include(KEYS.alice);
  });
});
