import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import OpenAI from 'openai';
import { FIXTURES } from '../support/fake-upstream.ts';
import { limiterBackends } from '../support/services.ts';
import { call, standardConfig, startGateway, useSdkClients, useUpstreamAndGateway, type TestGateway } from '../support/gateway.ts';

type Json = Record<string, unknown>;

/** One key per scenario, so each test owns its buckets whatever the order the tests run in. */
const KEY = {
  rpmMessages: 'sk-jct-rpm-messages-0123456789',
  rpmChat: 'sk-jct-rpm-chat-0123456789abcd',
  headers: 'sk-jct-headers-0123456789abcde',
  concurrency: 'sk-jct-concurrency-0123456789',
  tpmPrompt: 'sk-jct-tpm-prompt-0123456789ab',
  tpmUsage: 'sk-jct-tpm-usage-0123456789abc',
  tpmMedia: 'sk-jct-tpm-media-0123456789abc',
} as const;

const config = (url: string) =>
  standardConfig(url).replace(
    '    - { name: restricted',
    `    - { name: rpm-messages, key: "${KEY.rpmMessages}", balance_usd: 10, limits: { rpm: 2 } }
    - { name: rpm-chat, key: "${KEY.rpmChat}", limits: { rpm: 2 } }
    - { name: headers, key: "${KEY.headers}", limits: { rpm: 1000, tpm: 1000000 } }
    - { name: concurrency, key: "${KEY.concurrency}", limits: { concurrency: 1 } }
    - { name: tpm-prompt, key: "${KEY.tpmPrompt}", limits: { tpm: 1000 } }
    - { name: tpm-usage, key: "${KEY.tpmUsage}", limits: { tpm: 1000 } }
    - { name: tpm-media, key: "${KEY.tpmMedia}", limits: { tpm: 1000 } }
    - { name: restricted`,
  );

const messagesHeaders = (key: string) => ({ 'x-api-key': key, 'anthropic-version': '2023-06-01' });
const chatHeaders = (key: string) => ({ authorization: `Bearer ${key}` });
const ask = (model: string, extra: Json = {}) => ({ model, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }], ...extra });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Retry-after in whole seconds, within bounds. */
function expectRetryAfter(headers: Headers, min: number, max: number): void {
  const value = headers.get('retry-after');
  expect(value, 'retry-after').to.match(/^\d+$/);
  expect(Number(value)).to.be.within(min, max);
}

for (const limiter of limiterBackends('the rate-limit end-to-end suite')) {
describe(`rate limits per key (${limiter.name} limiter)`, () => {
  const env = useUpstreamAndGateway((url) => config(url) + limiter.yaml());
  const messages = (key: string, body: Json, path = '/v1/messages') => call(`${env.gw.url}${path}`, { headers: messagesHeaders(key), body });
  const chat = (key: string, body: Json) => call(`${env.gw.url}/v1/chat/completions`, { headers: chatHeaders(key), body });
  const balance = async (key: string) => (await call(`${env.gw.url}/v1/balance`, { headers: chatHeaders(key) })).json();
  /** Waits until the key's ledger counts `n` requests: each is settled after its response. */
  const settled = async (key: string, n: number) => {
    for (let i = 0; i < 200; i++) {
      const now = await balance(key);
      if (now['requests'] === n) return now;
      await sleep(10);
    }
    throw new Error(`the ledger never reached ${n} requests`);
  };
  const upstreamCalls = (path: string) => env.upstream.requests.filter((r) => r.url.split('?')[0] === path).length;

  it('answers the request past rpm with 429 in the Messages format, its headers and retry-after, sending nothing upstream and charging nothing', async () => {
    const first = await messages(KEY.rpmMessages, ask('claude-sonnet-4-6'));
    expect(first.status).to.equal(200);
    expect(first.headers.get('anthropic-ratelimit-requests-limit')).to.equal('2');
    expect(first.headers.get('anthropic-ratelimit-requests-remaining')).to.equal('1');
    expect((await messages(KEY.rpmMessages, ask('claude-sonnet-4-6'))).status).to.equal(200);
    const before = await settled(KEY.rpmMessages, 2);

    const refused = await messages(KEY.rpmMessages, ask('claude-sonnet-4-6'));
    expect(refused.status).to.equal(429);
    expect(refused.json()).to.deep.include({ type: 'error' });
    expect(refused.json()['error']).to.deep.equal({
      type: 'rate_limit_error',
      message: `rate limit exceeded: 2 requests per minute for this key; retry in ${refused.headers.get('retry-after')} s`,
    });
    // One request refills every 30 s.
    expectRetryAfter(refused.headers, 1, 30);
    expect(refused.headers.get('anthropic-ratelimit-requests-limit')).to.equal('2');
    expect(refused.headers.get('anthropic-ratelimit-requests-remaining')).to.equal('0');
    const reset = Date.parse(refused.headers.get('anthropic-ratelimit-requests-reset') ?? '');
    expect(refused.headers.get('anthropic-ratelimit-requests-reset')).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(reset - Date.now()).to.be.within(1_000, 62_000);
    expect(refused.headers.get('anthropic-ratelimit-tokens-limit')).to.equal(null);
    expect(refused.headers.get('x-ratelimit-limit-requests')).to.equal(null);
    expect(upstreamCalls('/v1/messages')).to.equal(2);

    // No charge for the refusal: its ledger row says 429 and $0, and the balance did not move.
    const after = await settled(KEY.rpmMessages, 3);
    expect(after).to.deep.include({ balance_usd: before['balance_usd'], spent_usd: before['spent_usd'], held_usd: 0 });
    const row = (await call(`${env.gw.url}/v1/generations/${refused.headers.get('x-request-id')}`, { headers: chatHeaders(KEY.rpmMessages) })).json();
    expect(row).to.deep.include({ status: 429, charged_usd: 0, cost_usd: 0 });

    // count_tokens is free and not counted.
    const counted = await messages(KEY.rpmMessages, { model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'hi' }] }, '/v1/messages/count_tokens');
    expect(counted.status).to.equal(200);
    expect(upstreamCalls('/v1/messages/count_tokens')).to.equal(1);
  });

  it('answers the request past rpm with 429 in the Chat format and OpenAI’s headers', async () => {
    for (const remaining of ['1', '0']) {
      const ok = await chat(KEY.rpmChat, ask('gpt-4o'));
      expect(ok.status).to.equal(200);
      expect(ok.headers.get('x-ratelimit-limit-requests')).to.equal('2');
      expect(ok.headers.get('x-ratelimit-remaining-requests')).to.equal(remaining);
      expect(ok.headers.get('x-ratelimit-reset-requests')).to.match(/^(\d+ms|\d+(\.\d+)?s|\d+m\d+(\.\d+)?s)$/);
    }
    const refused = await chat(KEY.rpmChat, ask('gpt-4o'));
    expect(refused.status).to.equal(429);
    expect(refused.json()['error']).to.deep.include({ type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null });
    expect(String((refused.json()['error'] as Json)['message'])).to.match(/^rate limit exceeded: 2 requests per minute for this key; retry in \d+ s$/);
    expectRetryAfter(refused.headers, 1, 30);
    expect(refused.headers.get('x-ratelimit-remaining-requests')).to.equal('0');
    expect(refused.headers.get('x-ratelimit-reset-requests')).to.match(/^(\d+(\.\d+)?s|1m0s)$/);
    expect(refused.headers.get('anthropic-ratelimit-requests-limit')).to.equal(null);
    expect(upstreamCalls('/v1/chat/completions')).to.equal(2);
  });

  describe('headers on answered requests, whatever the route', () => {
    const routes: { name: string; run: () => Promise<{ status: number; headers: Headers }>; surface: 'messages' | 'chat' }[] = [
      { name: 'Messages, native, whole', surface: 'messages', run: () => messages(KEY.headers, ask('claude-sonnet-4-6')) },
      { name: 'Messages, native, streamed', surface: 'messages', run: () => messages(KEY.headers, ask('claude-sonnet-4-6', { stream: true })) },
      { name: 'Messages, translated to Chat, whole', surface: 'messages', run: () => messages(KEY.headers, ask('gpt-4o')) },
      { name: 'Messages, translated to Chat, streamed', surface: 'messages', run: () => messages(KEY.headers, ask('gpt-4o', { stream: true })) },
      { name: 'Messages, in-process', surface: 'messages', run: () => messages(KEY.headers, ask('demo', { stream: true })) },
      { name: 'Chat, native, whole', surface: 'chat', run: () => chat(KEY.headers, ask('gpt-4o')) },
      { name: 'Chat, native, streamed', surface: 'chat', run: () => chat(KEY.headers, ask('gpt-4o', { stream: true })) },
      { name: 'Chat, translated to Messages, streamed', surface: 'chat', run: () => chat(KEY.headers, ask('claude-sonnet-4-6', { stream: true })) },
    ];
    for (const route of routes) {
      it(`${route.name}: the caller’s family of headers, never the upstream’s`, async () => {
        const res = await route.run();
        expect(res.status).to.equal(200);
        if (route.surface === 'messages') {
          // The fake upstream sends its own anthropic-ratelimit-requests-limit: 50; the key's wins.
          expect(res.headers.get('anthropic-ratelimit-requests-limit')).to.equal('1000');
          expect(Number(res.headers.get('anthropic-ratelimit-requests-remaining'))).to.be.within(900, 999);
          expect(res.headers.get('anthropic-ratelimit-tokens-limit')).to.equal('1000000');
          expect(Number(res.headers.get('anthropic-ratelimit-tokens-remaining'))).to.be.within(900_000, 999_999);
          expect(Date.parse(res.headers.get('anthropic-ratelimit-tokens-reset') ?? '')).to.be.above(Date.now() - 1000);
          expect(res.headers.get('x-ratelimit-limit-requests')).to.equal(null);
        } else {
          expect(res.headers.get('x-ratelimit-limit-requests')).to.equal('1000');
          expect(res.headers.get('x-ratelimit-limit-tokens')).to.equal('1000000');
          expect(Number(res.headers.get('x-ratelimit-remaining-tokens'))).to.be.within(900_000, 999_999);
          expect(res.headers.get('x-ratelimit-reset-tokens')).to.match(/^(\d+ms|\d+(\.\d+)?s)$/);
          expect(res.headers.get('anthropic-ratelimit-requests-limit')).to.equal(null);
        }
      });
    }
  });

  it('refuses a second concurrent request with 429 and retry-after 1, and admits again once the first stream ends', async () => {
    let first = true;
    env.upstream.script(() => {
      if (!first) return undefined;
      first = false;
      return { sse: FIXTURES.anthropicTextSse(), eventDelayMs: 100 };
    });
    const streaming = await fetch(`${env.gw.url}/v1/messages`, {
      method: 'POST',
      headers: { ...messagesHeaders(KEY.concurrency), 'content-type': 'application/json' },
      body: JSON.stringify(ask('claude-sonnet-4-6', { stream: true })),
    });
    expect(streaming.status).to.equal(200);

    const refused = await messages(KEY.concurrency, ask('claude-sonnet-4-6'));
    expect(refused.status).to.equal(429);
    expect(refused.headers.get('retry-after')).to.equal('1');
    expect((refused.json()['error'] as Json)['message']).to.equal('rate limit exceeded: 1 concurrent requests for this key; retry in 1 s');
    // No rpm or tpm applies: nothing to describe beyond retry-after.
    expect(refused.headers.get('anthropic-ratelimit-requests-limit')).to.equal(null);
    expect((await chat(KEY.concurrency, ask('gpt-4o'))).status).to.equal(429);
    expect(env.upstream.requests.length).to.equal(1);

    expect(await streaming.text()).to.include('message_stop');
    // The slot is freed as the response ends; allow the server a moment past the client's last byte.
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      status = (await messages(KEY.concurrency, ask('claude-sonnet-4-6'))).status;
      if (status !== 200) await sleep(20);
    }
    expect(status).to.equal(200);
  });

  it('refuses a prompt larger than what is left of tpm, in the Chat format with its token headers', async () => {
    const small = await messages(KEY.tpmPrompt, ask('claude-sonnet-4-6'));
    expect(small.status).to.equal(200);
    expect(small.headers.get('anthropic-ratelimit-tokens-limit')).to.equal('1000');
    expect(Number(small.headers.get('anthropic-ratelimit-tokens-remaining'))).to.be.within(950, 999);
    // tpm only: no requests headers.
    expect(small.headers.get('anthropic-ratelimit-requests-limit')).to.equal(null);
    await settled(KEY.tpmPrompt, 1);

    const big = await chat(KEY.tpmPrompt, { model: 'gpt-4o', messages: [{ role: 'user', content: 'lorem ipsum '.repeat(2000) }] });
    expect(big.status).to.equal(429);
    expect(String((big.json()['error'] as Json)['message'])).to.match(/^rate limit exceeded: 1000 tokens per minute for this key; retry in \d+ s$/);
    // The prompt waits for a full bucket: the few tokens the first request used, at 1000 a minute.
    expectRetryAfter(big.headers, 1, 10);
    expect(big.headers.get('x-ratelimit-limit-tokens')).to.equal('1000');
    expect(Number(big.headers.get('x-ratelimit-remaining-tokens'))).to.be.within(950, 999);
    expect(big.headers.get('x-ratelimit-reset-tokens')).to.match(/^(\d+ms|\d+(\.\d+)?s)$/);
    expect(big.headers.get('x-ratelimit-limit-requests')).to.equal(null);
    expect(env.upstream.requests.length).to.equal(1);
  });

  it('debits the tokens a request really used, so a key in debt waits', async () => {
    const heavy = JSON.parse(FIXTURES.anthropicText()) as { usage: Json };
    heavy.usage['input_tokens'] = 4000;
    env.upstream.script(() => ({ body: heavy }));
    expect((await messages(KEY.tpmUsage, ask('claude-sonnet-4-6'))).status).to.equal(200);
    // 1000 - 4009 used: about 3000 in debt, refilled at 1000 a minute.
    let refused = await messages(KEY.tpmUsage, ask('claude-sonnet-4-6'));
    for (let i = 0; i < 100 && refused.status === 200; i++) {
      // The debit lands when the first request's chain ends, just after its last byte.
      await sleep(10);
      refused = await messages(KEY.tpmUsage, ask('claude-sonnet-4-6'));
    }
    expect(refused.status).to.equal(429);
    expectRetryAfter(refused.headers, 150, 200);
    expect(refused.headers.get('anthropic-ratelimit-tokens-remaining')).to.equal('0');
  });

  it('counts audio and image tokens against tpm too (issue #13: they are kept apart from input and output)', async () => {
    // 4,000 completion tokens, all but 10 of them audio: the bucket goes about 3,000 into debt.
    const usage = { prompt_tokens: 9, completion_tokens: 4000, total_tokens: 4009, completion_tokens_details: { audio_tokens: 3990 } };
    env.upstream.script(() => ({ body: { id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'hi', refusal: null }, finish_reason: 'stop', logprobs: null }], usage } }));
    expect((await chat(KEY.tpmMedia, ask('gpt-4o'))).status).to.equal(200);
    await settled(KEY.tpmMedia, 1); // the debit lands when the first request's chain ends
    // Counting only the 19 text tokens would leave about 980 of the 1,000.
    expect((await chat(KEY.tpmMedia, ask('gpt-4o'))).status).to.equal(429);
  });
});

describe(`rate limits: auth.default_limits and stored keys (${limiter.name} limiter)`, () => {
  const ADMIN = 'adm-0123456789abcdefghijklmnop';
  const PLAIN = 'sk-jct-plain-0123456789abcdef';
  const OWN_RPM = 'sk-jct-own-rpm-0123456789abcd';
  const OWN_TPM = 'sk-jct-own-tpm-0123456789abcd';
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway(`
auth:
  admin_key: "${ADMIN}"
  default_limits: { rpm: 1, concurrency: 10 }
  keys:
    - { name: plain, key: "${PLAIN}" }
    - { name: own-rpm, key: "${OWN_RPM}", limits: { rpm: 3 } }
    - { name: own-tpm, key: "${OWN_TPM}", limits: { tpm: 100000 } }
providers: [{ id: mock, plugin: mock }]
models: [{ id: demo, routes: [{ provider: mock }], pricing: { input: 0, output: 0 } }]
${limiter.yaml()}`);
  });
  after(() => gw.close());
  const demo = (key: string) => call(`${gw.url}/v1/messages`, { headers: messagesHeaders(key), body: ask('demo') });
  const admin = (body: Json) => call(`${gw.url}/admin/keys`, { headers: { authorization: `Bearer ${ADMIN}` }, body });
  /** Statuses of `n` requests in a row. */
  const statuses = async (key: string, n: number) => {
    const seen: number[] = [];
    for (let i = 0; i < n; i++) seen.push((await demo(key)).status);
    return seen;
  };

  it('applies the defaults to a key without limits', async () => {
    const first = await demo(PLAIN);
    expect(first.headers.get('anthropic-ratelimit-requests-limit')).to.equal('1');
    expect(first.status).to.equal(200);
    expect((await demo(PLAIN)).status).to.equal(429);
  });

  it('lets a key’s own limits replace the defaults field by field', async () => {
    expect(await statuses(OWN_RPM, 4)).to.deep.equal([200, 200, 200, 429]);
    // own-tpm sets only tpm: its rpm is the default's.
    const first = await demo(OWN_TPM);
    expect(first.headers.get('anthropic-ratelimit-requests-limit')).to.equal('1');
    expect(first.headers.get('anthropic-ratelimit-tokens-limit')).to.equal('100000');
    expect((await demo(OWN_TPM)).status).to.equal(429);
  });

  it('enforces a stored key’s limits set through the admin API, and lists them', async () => {
    const created = await admin({ name: 'stored', limits: { rpm: 2, tpm: 50_000 } });
    expect(created.status).to.equal(201);
    expect(created.json()).to.deep.include({ limits: { rpm: 2, tpm: 50_000, concurrency: null }, rpm: 2 });
    const key = String(created.json()['key']);
    expect(await statuses(key, 3)).to.deep.equal([200, 200, 429]);
    const refused = await demo(key);
    expect(refused.headers.get('anthropic-ratelimit-tokens-limit')).to.equal('50000');

    // The pre-`limits` top-level rpm still works.
    const legacy = String((await admin({ name: 'legacy', rpm: 1 })).json()['key']);
    expect(await statuses(legacy, 2)).to.deep.equal([200, 429]);
    // A stored key without limits gets the defaults.
    const bare = String((await admin({ name: 'bare' })).json()['key']);
    expect(await statuses(bare, 2)).to.deep.equal([200, 429]);

    const listed = (await call(`${gw.url}/admin/keys`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()['data'] as Json[];
    expect(listed.find((k) => k['name'] === 'legacy')).to.deep.include({ limits: { rpm: 1, tpm: null, concurrency: null } });
    expect(listed.find((k) => k['name'] === 'own-rpm')).to.deep.include({ limits: { rpm: 3, tpm: null, concurrency: null }, source: 'config' });
  });

  it('leaves count_tokens out of every limit', async () => {
    await statuses(OWN_RPM, 4);
    for (let i = 0; i < 5; i++) {
      const res = await call(`${gw.url}/v1/messages/count_tokens`, { headers: messagesHeaders(OWN_RPM), body: { model: 'demo', messages: [{ role: 'user', content: 'hi' }] } });
      expect(res.status).to.equal(200);
      expect(res.headers.get('anthropic-ratelimit-requests-limit')).to.equal(null);
    }
  });
});

describe(`rate limits through the official SDKs (${limiter.name} limiter)`, () => {
  const env = useUpstreamAndGateway((url) => standardConfig(url).replace('balance_usd: 100 }', 'balance_usd: 100, limits: { rpm: 1 } }') + limiter.yaml());
  const sdk = useSdkClients(env);

  it('the Anthropic SDK raises its RateLimitError (429) with retry-after', async () => {
    let error: unknown;
    for (let i = 0; i < 3 && error === undefined; i++) {
      error = await sdk.anthropic.messages.create(ask('demo') as Anthropic.MessageCreateParamsNonStreaming).then(() => undefined, (e: unknown) => e);
    }
    expect(error).to.be.instanceOf(Anthropic.RateLimitError);
    const err = error as InstanceType<typeof Anthropic.RateLimitError>;
    expect(err.status).to.equal(429);
    expect(err.headers.get('retry-after')).to.match(/^\d+$/);
    expect(err.message).to.include('rate limit exceeded: 1 requests per minute');
  });

  it('the OpenAI SDK raises its RateLimitError (429) with retry-after', async () => {
    let error: unknown;
    for (let i = 0; i < 3 && error === undefined; i++) {
      error = await sdk.openai.chat.completions.create({ model: 'demo', messages: [{ role: 'user', content: 'hi' }] }).then(() => undefined, (e: unknown) => e);
    }
    expect(error).to.be.instanceOf(OpenAI.RateLimitError);
    const err = error as InstanceType<typeof OpenAI.RateLimitError>;
    expect(err.status).to.equal(429);
    expect(err.code).to.equal('rate_limit_exceeded');
    expect(err.headers.get('x-ratelimit-limit-requests')).to.equal('1');
  });
});
}
