import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { countInputTokens } from '../../src/usage/token-count.ts';
import { FakeUpstream, FIXTURES } from '../support/fake-upstream.ts';
import { call, CHAT_HEADERS, KEYS, MESSAGES_HEADERS, standardConfig, startGateway, translationConfig, useUpstreamAndGateway } from '../support/gateway.ts';

type Json = Record<string, unknown>;
const POOR = 'sk-jct-poor-0123456789abcdefgh';

/**
 * Ways a request could escape its charge or be charged wrongly, each found in review of issue #4:
 * other spellings of a path, cut translated streams, `n`, malformed upstream usage, clients that
 * leave before the answer, count_tokens on a model with a flat fee, same-format translators, and
 * shutdown with requests in flight.
 */
const config = (url: string) =>
  translationConfig(url)
    .replace('    - { name: restricted', `    - { name: poor, key: "${POOR}", balance_usd: 0.0001 }\n    - { name: restricted`)
    .replace('  - { id: mock, plugin: mock }', `  - { id: mock, plugin: mock }\n  - { id: relay, plugin: ./fixtures/plugins/chat-relay.js, base_url: "${url}/v1", api_key: sk-relay }`)
    .replace(
      '  - id: demo\n',
      `  - id: fee-claude
    routes: [{ provider: anthropic }]
    pricing: { input: 3, output: 15, request: 0.01 }
  - id: relayed
    routes: [{ provider: relay, model: gpt-4o }]
    pricing: { input: 2.5, output: 10, cache_read: 1.25 }
  - id: demo\n`,
    );

describe('billing: edges', () => {
  const env = useUpstreamAndGateway(config);
  const generation = async (id: string | null, key: string = KEYS.alice): Promise<Json> => {
    // The row is written as the response ends; a cut request may settle a moment later.
    let row: Json = {};
    for (let i = 0; i < 100 && row['id'] !== id; i++) {
      row = (await call(`${env.gw.url}/v1/generations/${id}`, { headers: { authorization: `Bearer ${key}` } })).json();
      if (row['id'] !== id) await new Promise((r) => setTimeout(r, 20));
    }
    return row;
  };
  const balance = async (key: string = KEYS.alice) => (await call(`${env.gw.url}/v1/balance`, { headers: { authorization: `Bearer ${key}` } })).json();
  const chat = { model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] };

  it('charges the other spellings of a path the router serves (case, trailing slash)', async () => {
    for (const route of ['/V1/CHAT/COMPLETIONS', '/v1/chat/completions/']) {
      const res = await call(`${env.gw.url}${route}`, { headers: CHAT_HEADERS, body: chat });
      expect(res.status, route).to.equal(200);
      expect(await generation(res.headers.get('x-request-id')), route).to.deep.include({ cost_usd: 0.0001125, charged_usd: 0.0001125 });
    }
    expect(await balance()).to.deep.include({ held_usd: 0 });
  });

  it('charges a translated stream the upstream cut short for what passed, marked estimated', async () => {
    env.upstream.script(() => ({ sse: FIXTURES.openaiToolSse(), resetAfterEvents: 3 }));
    const res = await call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: { model: 'gpt-4o', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'x' }] } });
    expect(res.text).to.include('event: error');
    const row = await generation(res.headers.get('x-request-id'));
    expect(row).to.deep.include({ estimated: true, route: 'translated' });
    expect(row['outcome']).not.to.equal('ok');
    expect((row['tokens'] as Json)['input']).to.be.greaterThan(0);
    expect((row['tokens'] as Json)['output']).to.be.greaterThan(0);
  });

  it('reads no usage from a whole answer the upstream cut short, even where the cut leaves an inner usage at its end (issue #17, eighteenth session)', async () => {
    // Read from its end, the cut answer would look like an object whose usage is the inner one.
    const answer = JSON.parse(FIXTURES.openaiText()) as Json;
    answer['usage'] = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, details: { usage: { prompt_tokens: 5000, completion_tokens: 5000 } }, more: 1 };
    const text = JSON.stringify(answer);
    env.upstream.script(() => ({ body: text, truncateAt: text.indexOf(',"more"') }));
    const res = await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: chat });
    expect(res.status).to.equal(502);
    // Nothing reached the client, so nothing is charged (finish.ts finalUsage): not the inner 10,000 tokens.
    const row = await generation(res.headers.get('x-request-id'));
    expect(row).to.deep.include({ outcome: 'GW_ERR_UPSTREAM_INTERRUPTED', cost_usd: 0, charged_usd: 0 });
    expect(row['tokens']).to.deep.include({ input: 0, output: 0 });
  });

  it("holds the output of every choice a Chat request's n asks for", async () => {
    const body = { ...chat, max_tokens: 1, n: 128 };
    const res = await call(`${env.gw.url}/v1/chat/completions`, { headers: { authorization: `Bearer ${POOR}` }, body });
    expect(res.status).to.equal(402);
    const input = await countInputTokens('chat', body);
    // ceil(input × 1.5) at $2.50 per million, plus 128 choices × 1 token at $10 per million.
    expect((res.json()['error'] as Json)['message']).to.include(`may cost up to $${(Math.ceil(input * 1.5) * 2.5 + 128 * 10) / 1e6} and`);
    expect(env.upstream.requests).to.have.length(0);
  });

  it('rounds fractional token counts an upstream reports, and keeps serving', async () => {
    const answer = JSON.parse(FIXTURES.openaiText()) as Json;
    answer['usage'] = { prompt_tokens: 10.5, completion_tokens: 2.5, total_tokens: 13 };
    env.upstream.script(() => ({ body: answer }));
    const res = await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: chat });
    expect(res.status).to.equal(200);
    expect(await generation(res.headers.get('x-request-id'))).to.deep.include({ tokens: { input: 11, output: 3, cache_read: 0, cache_write: 0, reasoning: 0 } });
    env.upstream.script(undefined);
    expect((await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: chat })).status).to.equal(200);
  });

  for (const [route, model] of [['native', 'claude-sonnet-4-6'], ['translated', 'gpt-4o']] as const) {
    it(`charges the input estimate when the client leaves before any answer (${route}), marked estimated`, async () => {
      env.upstream.script(() => ({ delayMs: 400, body: model === 'gpt-4o' ? FIXTURES.openaiText() : FIXTURES.anthropicText() }));
      const controller = new AbortController();
      const pending = fetch(`${env.gw.url}/v1/messages`, {
        method: 'POST',
        headers: { ...MESSAGES_HEADERS, 'content-type': 'application/json' },
        body: JSON.stringify({ model, max_tokens: 100, messages: [{ role: 'user', content: 'Summarise the plot of Hamlet in detail.' }] }),
        signal: controller.signal,
      }).catch(() => undefined);
      while (env.upstream.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
      controller.abort();
      await pending;
      await env.upstream.last().closed;
      // The settlement follows the request's end; read the ledger once it is written.
      expect(await env.gw.gateway.settled(10_000)).to.equal(true);
      const rows = await env.gw.gateway.store.usage({ limit: 1 });
      const row = (await generation(rows[0]!.requestId));
      expect(row).to.deep.include({ estimated: true, outcome: 'client_disconnected', route });
      expect((row['tokens'] as Json)['input']).to.be.greaterThan(5);
      expect((row['tokens'] as Json)['output']).to.equal(0);
      expect(row['cost_usd']).to.be.greaterThan(0);
    });
  }

  it('keeps count_tokens free on a model with a per-request fee', async () => {
    const before = await balance();
    const res = await call(`${env.gw.url}/v1/messages/count_tokens`, { headers: MESSAGES_HEADERS, body: { model: 'fee-claude', messages: [{ role: 'user', content: 'x' }] } });
    expect(res.status).to.equal(200);
    expect(await generation(res.headers.get('x-request-id'))).to.deep.include({ cost_usd: 0, estimated: false });
    expect((await balance())['balance_usd']).to.equal(before['balance_usd']);
    // The fee itself is charged on real requests: $0.01 + 12 × $3 + 9 × $15 per million.
    const real = await call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: { model: 'fee-claude', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] } });
    expect(await generation(real.headers.get('x-request-id'))).to.deep.include({ cost_usd: 0.010171 });
  });

  it("asks a same-format Chat translator's upstream for usage, bills it, and hides it from a client that did not ask", async () => {
    const res = await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model: 'relayed', stream: true, messages: [{ role: 'user', content: 'x' }] } });
    expect(env.upstream.last().json()).to.deep.include({ model: 'gpt-4o', stream_options: { include_usage: true } });
    expect(res.text).not.to.include('"usage"');
    expect(res.text).to.include('data: [DONE]');
    expect(await generation(res.headers.get('x-request-id'))).to.deep.include({ route: 'translated', tokens: { input: 15, output: 7, cache_read: 4, cache_write: 0, reasoning: 0 }, estimated: false });
    // Asked for: the usage chunk comes through, with its cost.
    const asked = await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model: 'relayed', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'x' }] } });
    expect(asked.text).to.include('"cost":0.0001125');
  });

  it('answers malformed percent-encoding with 404, not 500', async () => {
    for (const route of ['/v1/generations/%E0%A4%A', '/v1/models/%E0%A4%A']) {
      expect((await call(`${env.gw.url}${route}`, { headers: CHAT_HEADERS })).status, route).to.equal(404);
    }
  });
});

describe('billing: shutdown with a request in flight', () => {
  let upstream: FakeUpstream;
  before(async () => {
    upstream = await new FakeUpstream().start();
  });
  after(() => upstream.close());

  it('charges the cut stream before the store closes, leaving no hold', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'junction-close-')), 'ledger.db');
    const gw = await startGateway(`${standardConfig(upstream.url)}\nstorage: { url: "sqlite://${file}" }\n`);
    upstream.script(() => ({ sse: FIXTURES.anthropicToolSse(), eventDelayMs: 50 }));
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { ...MESSAGES_HEADERS, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'x' }] }),
    });
    const id = res.headers.get('x-request-id')!;
    const reader = res.body!.getReader();
    let seen = '';
    while (!seen.includes('content_block_delta')) seen += Buffer.from((await reader.read()).value!).toString();
    await gw.close();
    await reader.cancel().catch(() => undefined);

    const store = new SqliteStore(file);
    try {
      await store.migrate();
      const alice = (await store.listKeys()).find((k) => k.name === 'alice')!;
      expect(alice.held).to.equal(0n);
      const row = await store.generation(id, alice.id);
      expect(row).to.deep.include({ estimated: true });
      expect(row!.usage.input).to.equal(424);
      expect(row!.charged > 0n).to.equal(true);
    } finally {
      await store.close();
    }
  });
});
