import { expect } from 'chai';
import { FIXTURES } from '../support/fake-upstream.ts';
import { ledgerBackends } from '../support/services.ts';
import { call, CHAT_HEADERS, KEYS, MESSAGES_HEADERS, translationConfig, useSdkClients, useUpstreamAndGateway } from '../support/gateway.ts';

type Json = Record<string, unknown>;
const POOR = 'sk-jct-poor-0123456789abcdefgh';

/** The standard config (claude-sonnet-4-6 at $3/$15, cache $0.30/$3.75; gpt-4o at $2.50/$10, cache $1.25) plus a nearly empty key. */
const config = (url: string) =>
  translationConfig(url).replace('    - { name: restricted', `    - { name: poor, key: "${POOR}", balance_usd: 0.0001 }\n    - { name: restricted`);

for (const ledger of ledgerBackends('the billing end-to-end suite')) {
describe(`billing (${ledger.name} ledger): charges, holds and the ledger`, () => {
  const storage = ledger.use();
  const env = useUpstreamAndGateway((url) => config(url) + storage.storageYaml());
  const sdk = useSdkClients(env);
  const generation = async (id: string | null, key: string = KEYS.alice) =>
    (await call(`${env.gw.url}/v1/generations/${id}`, { headers: { authorization: `Bearer ${key}` } })).json();
  const balance = async (key: string = KEYS.alice) => (await call(`${env.gw.url}/v1/balance`, { headers: { authorization: `Bearer ${key}` } })).json();

  describe('what each request is charged', () => {
    // Each case: the route, how it is called, the usage in its fixture and the cost by hand.
    const cases: { name: string; run: () => Promise<string | null>; tokens: Json; cost: number }[] = [
      {
        name: 'native Messages, whole (12 in × $3 + 9 out × $15 per million)',
        run: async () => (await sdk.anthropic.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] }).withResponse()).response.headers.get('x-request-id'),
        tokens: { input: 12, output: 9, cache_read: 0, cache_write: 0, reasoning: 0 },
        cost: 0.000171,
      },
      {
        name: 'native Messages, streamed (424 × $3 + 200 cached × $0.30 + 89 × $15)',
        run: async () => {
          const stream = sdk.anthropic.messages.stream({ model: 'claude-sonnet-4-6', max_tokens: 100, thinking: { type: 'enabled', budget_tokens: 50 } as never, messages: [{ role: 'user', content: 'x' }] });
          await stream.finalMessage();
          return (await stream.withResponse()).response.headers.get('x-request-id');
        },
        tokens: { input: 424, output: 89, cache_read: 200, cache_write: 0, reasoning: 0 },
        cost: 0.002667,
      },
      {
        name: 'native Chat, whole (15 × $2.50 + 4 cached × $1.25 + 7 × $10)',
        run: async () => (await sdk.openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }).withResponse()).response.headers.get('x-request-id'),
        tokens: { input: 15, output: 7, cache_read: 4, cache_write: 0, reasoning: 0 },
        cost: 0.0001125,
      },
      {
        name: 'translated Messages → Chat, streamed (61 × $2.50 + 16 × $10)',
        run: async () => {
          const stream = sdk.anthropic.messages.stream({ model: 'gpt-4o', max_tokens: 100, tools: [{ name: 'weather', input_schema: { type: 'object' } }], messages: [{ role: 'user', content: 'x' }] });
          await stream.finalMessage();
          return (await stream.withResponse()).response.headers.get('x-request-id');
        },
        tokens: { input: 61, output: 16, cache_read: 0, cache_write: 0, reasoning: 0 },
        cost: 0.0003125,
      },
      {
        name: 'translated Chat → Messages, streamed, usage not asked for (424 × $3 + 200 cached × $0.30 + 89 × $15)',
        run: async () => {
          const res = await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model: 'claude-sonnet-4-6', stream: true, tools: [{ type: 'function', function: { name: 'weather' } }], messages: [{ role: 'user', content: 'x' }] } });
          expect(res.text).not.to.include('"usage":{');
          return res.headers.get('x-request-id');
        },
        tokens: { input: 424, output: 89, cache_read: 200, cache_write: 0, reasoning: 0 },
        cost: 0.002667,
      },
      {
        name: 'native Chat, streamed through the OpenAI SDK, usage not asked for (15 × $2.50 + 4 cached × $1.25 + 7 × $10)',
        run: async () => {
          const { data, response } = await sdk.openai.chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'x' }] }).withResponse();
          const chunks = [];
          for await (const chunk of data) chunks.push(chunk);
          // Charged from the usage chunk the gateway asked for, which the client never sees.
          expect(chunks.filter((c) => c.usage != null || c.choices.length === 0)).to.deep.equal([]);
          return response.headers.get('x-request-id');
        },
        tokens: { input: 15, output: 7, cache_read: 4, cache_write: 0, reasoning: 0 },
        cost: 0.0001125,
      },
      {
        name: 'translated Messages → Chat, whole, through the Anthropic SDK (15 × $2.50 + 4 cached × $1.25 + 7 × $10)',
        run: async () => (await sdk.anthropic.messages.create({ model: 'gpt-4o', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] }).withResponse()).response.headers.get('x-request-id'),
        tokens: { input: 15, output: 7, cache_read: 4, cache_write: 0, reasoning: 0 },
        cost: 0.0001125,
      },
      {
        name: 'translated Chat → Messages, whole, through the OpenAI SDK (472 × $3 + 100 cached × $0.30 + 30 written × $3.75 + 89 × $15)',
        run: async () =>
          (await sdk.openai.chat.completions.create({ model: 'claude-sonnet-4-6', tools: [{ type: 'function', function: { name: 'weather' } }], messages: [{ role: 'user', content: 'x' }] }).withResponse()).response.headers.get('x-request-id'),
        tokens: { input: 472, output: 89, cache_read: 100, cache_write: 30, reasoning: 0 },
        cost: 0.0028935,
      },
      {
        name: 'translated Chat → Messages, streamed through the OpenAI SDK with usage (25 × $3 + 15 × $15)',
        run: async () => {
          const { data, response } = await sdk.openai.chat.completions.create({ model: 'claude-sonnet-4-6', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'x' }] }).withResponse();
          let cost: unknown;
          for await (const chunk of data) if (chunk.usage) cost = (chunk.usage as unknown as Json)['cost'];
          expect(cost).to.equal(0.0003);
          return response.headers.get('x-request-id');
        },
        tokens: { input: 25, output: 15, cache_read: 0, cache_write: 0, reasoning: 0 },
        cost: 0.0003,
      },
    ];
    for (const c of cases) {
      it(`${c.name}: $${c.cost}, on the ledger and off the balance`, async () => {
        const before = await balance();
        const id = await c.run();
        const row = await generation(id);
        expect(row).to.deep.include({ id, key: 'alice', status: 200, outcome: 'ok', estimated: false, tokens: c.tokens, cost_usd: c.cost, charged_usd: c.cost });
        const after = await balance();
        expect(Math.round(((before['balance_usd'] as number) - (after['balance_usd'] as number)) * 1e9)).to.equal(Math.round(c.cost * 1e9));
        expect(after['requests']).to.equal((before['requests'] as number) + 1);
        expect(after['held_usd']).to.equal(0);
      });
    }
  });

  it('gives Chat clients usage.cost, whole and in the usage chunk they asked for, translated too', async () => {
    const whole = await sdk.openai.chat.completions.create({ model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'x' }] });
    // 12 in × $3 + 9 out × $15 per million
    expect((whole.usage as unknown as Json)['cost']).to.equal(0.000171);
    const streamed = await sdk.openai.chat.completions.stream({ model: 'claude-sonnet-4-6', stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'x' }] }).finalChatCompletion();
    // The text stream: 25 in × $3 + 15 out × $15 per million
    expect((streamed.usage as unknown as Json)['cost']).to.equal(0.0003);
  });

  it('answers 402 when the hold does not fit: billing_error for Messages, insufficient_quota for Chat; nothing goes upstream', async () => {
    const m = await call(`${env.gw.url}/v1/messages`, { headers: { 'x-api-key': POOR, 'anthropic-version': '2023-06-01' }, body: { model: 'claude-sonnet-4-6', max_tokens: 1000, messages: [{ role: 'user', content: 'x' }] } });
    expect(m.status).to.equal(402);
    expect(m.json()['error']).to.deep.include({ type: 'billing_error' });
    expect((m.json()['error'] as { message: string }).message).to.match(/may cost up to \$0\.015\d* and \$0\.0001 is available/);
    const c = await call(`${env.gw.url}/v1/chat/completions`, { headers: { authorization: `Bearer ${POOR}` }, body: { model: 'gpt-4o', max_tokens: 1000, messages: [{ role: 'user', content: 'x' }] } });
    expect(c.status).to.equal(402);
    expect(c.json()['error']).to.deep.include({ type: 'insufficient_quota', code: 'insufficient_quota' });
    expect(env.upstream.requests).to.have.length(0);
    expect(await generation(m.headers.get('x-request-id'), POOR)).to.deep.include({ status: 402, cost_usd: 0, outcome: 'GW_ERR_INSUFFICIENT_BALANCE' });
    expect(await balance(POOR)).to.deep.include({ balance_usd: 0.0001, spent_usd: 0 });
  });

  it('sizes the hold with the estimator count_tokens answers with, and shows it in message_start', async () => {
    // gpt-4o has no upstream count, so count_tokens is the local estimate.
    const request = { model: 'gpt-4o', max_tokens: 1, system: 'You review code.', messages: [{ role: 'user', content: 'function main() { return 42; }\n'.repeat(40) }] };
    const counted = await call(`${env.gw.url}/v1/messages/count_tokens`, { headers: MESSAGES_HEADERS, body: request });
    expect(counted.headers.get('x-junction-estimate')).to.equal('true');
    const tokens = counted.json()['input_tokens'] as number;
    expect(tokens).to.be.within(300, 600);
    // Held: the estimate plus half (README), at $2.50 per million, and 1 output token at $10.
    const held = (Math.ceil(tokens * 1.5) * 2.5 + 10) / 1e6;
    const refused = await call(`${env.gw.url}/v1/messages`, { headers: { 'x-api-key': POOR, 'anthropic-version': '2023-06-01' }, body: request });
    expect(refused.status).to.equal(402);
    expect((refused.json()['error'] as { message: string }).message).to.include(`may cost up to $${held} and`);
    // The translated stream's message_start carries the same estimate until the upstream's count arrives.
    env.upstream.script(() => ({ sse: FIXTURES.openaiTextSse() }));
    const streamed = await call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: { ...request, stream: true } });
    const start = streamed.text.split('\n').find((line) => line.startsWith('data: {"type":"message_start"'));
    expect(JSON.parse(start!.slice(6)).message.usage.input_tokens).to.equal(tokens);
  });

  it('shows a generation only to the key that made it', async () => {
    const res = await call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: { model: 'claude-sonnet-4-6', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] } });
    const id = res.headers.get('x-request-id');
    expect((await generation(id))['id']).to.equal(id);
    const other = await call(`${env.gw.url}/v1/generations/${id}`, { headers: { authorization: `Bearer ${KEYS.restricted}` } });
    expect(other.status).to.equal(404);
  });

  it('charges a stream the client cut short for what passed, marked estimated', async () => {
    env.upstream.script(() => ({ sse: FIXTURES.anthropicToolSse(), eventDelayMs: 40 }));
    const controller = new AbortController();
    const res = await fetch(`${env.gw.url}/v1/messages`, {
      method: 'POST',
      headers: { ...MESSAGES_HEADERS, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'x' }] }),
      signal: controller.signal,
    });
    const id = res.headers.get('x-request-id');
    const reader = res.body!.getReader();
    let seen = '';
    while (!seen.includes('thinking_delta')) seen += Buffer.from((await reader.read()).value!).toString();
    controller.abort();
    await env.upstream.last().closed;
    let row: Json = {};
    for (let i = 0; i < 50 && row['id'] !== id; i++) {
      row = await generation(id);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(row).to.deep.include({ estimated: true, outcome: 'client_disconnected' });
    // message_start said 424 in and 200 cached; at least one delta passed.
    expect(row['tokens']).to.deep.include({ input: 424, cache_read: 200 });
    expect((row['tokens'] as Json)['output']).to.be.greaterThan(0);
    expect(row['charged_usd']).to.be.greaterThan(0.001332);
  });

  it('charges a native stream the upstream cut one output token per content event that passed, each counted once', async () => {
    // 14 events: message_start (output_tokens 5) … 7 content_block_delta events, and no message_delta.
    // Each delta event says `content_block_delta` and `thinking_delta` or `text_delta`: counting
    // the bytes `_delta"` charged them twice (issue #17's read-through).
    env.upstream.script(() => ({ sse: FIXTURES.anthropicToolSse(), resetAfterEvents: 14 }));
    const messages = await call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: { model: 'claude-sonnet-4-6', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'x' }] } });
    expect(messages.text.match(/^event: content_block_delta$/gm)).to.have.length(7);
    expect(messages.text).to.include('event: error');
    // 4 of the Chat stream's 6 chunks, none with usage.
    env.upstream.script(() => ({ sse: FIXTURES.openaiToolSse(), resetAfterEvents: 4 }));
    const chat = await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'x' }] } });
    expect(chat.text).to.include('"error"');
    expect(await env.gw.gateway.settled(10_000)).to.equal(true);
    const cut = await generation(messages.headers.get('x-request-id'));
    expect(cut).to.deep.include({ estimated: true, outcome: 'GW_ERR_UPSTREAM_INTERRUPTED', route: 'native' });
    expect(cut['tokens']).to.deep.include({ input: 424, cache_read: 200, output: 7 });
    const chatCut = await generation(chat.headers.get('x-request-id'));
    expect(chatCut).to.deep.include({ estimated: true, outcome: 'GW_ERR_UPSTREAM_INTERRUPTED', route: 'native' });
    expect((chatCut['tokens'] as Json)['output']).to.equal(4);
  });

  it('charges nothing when the upstream fails before any output, and releases the hold', async () => {
    env.upstream.script(() => ({ status: 500, body: { type: 'error', error: { type: 'api_error', message: 'boom' } } }));
    const before = await balance();
    const res = await call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: { model: 'claude-sonnet-4-6', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] } });
    expect(res.status).to.equal(500);
    expect(await generation(res.headers.get('x-request-id'))).to.deep.include({ status: 500, cost_usd: 0, estimated: false });
    expect(await balance()).to.deep.include({ balance_usd: before['balance_usd'], held_usd: 0 });
  });

  it('keeps count_tokens free', async () => {
    const before = await balance();
    await sdk.anthropic.messages.countTokens({ model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'x' }] });
    expect((await balance())['balance_usd']).to.equal(before['balance_usd']);
  });
});

describe(`billing (${ledger.name} ledger): 200 concurrent requests on a key funded for 10`, () => {
  // Output at $1,000 per million and max_tokens 100: each request holds exactly $0.10 (input is free).
  // The key holds $1.05, so exactly 10 holds fit while they are all open.
  const FUNDED = 'sk-jct-funded-0123456789abcdef';
  const storage = ledger.use();
  const env = useUpstreamAndGateway(
    (url) => `
auth: { keys: [{ name: funded, key: "${FUNDED}", balance_usd: 1.05 }] }
providers: [{ id: up, plugin: anthropic, base_url: "${url}", api_key: k }]
models: [{ id: pricey, routes: [{ provider: up }], pricing: { input: 0, output: 1000 } }]
${storage.storageYaml()}`,
  );

  it('admits exactly what the funds cover, never goes below zero, and the ledger sums to the balance change', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // The upstream answers only once the admitted requests are all waiting, so every hold is open at once.
    env.upstream.script(() => ({ delayMs: 0, body: FIXTURES.anthropicText() }));
    const pending = Array.from({ length: 200 }, () =>
      call(`${env.gw.url}/v1/messages`, { headers: { 'x-api-key': FUNDED, 'anthropic-version': '2023-06-01' }, body: { model: 'pricey', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] } }),
    );
    void gate;
    release();
    const results = await Promise.all(pending);
    const admitted = results.filter((r) => r.status === 200).length;
    const refused = results.filter((r) => r.status === 402).length;
    expect(admitted + refused).to.equal(200);
    // Each admitted request costs 9 output tokens × $1,000 per million = $0.009 and frees the rest of its hold,
    // so later requests can be admitted as earlier ones settle: at least 10, never more than the money allows.
    expect(admitted).to.be.at.least(10);
    expect(admitted).to.be.at.most(Math.floor(1.05 / 0.009));
    // Each request is settled just after its answer: on a PostgreSQL ledger the last settlement can
    // still be on its way when the last answer arrives (seen once in CI on Node 24).
    expect(await env.gw.gateway.settled(10_000)).to.equal(true);
    const key = (await env.gw.gateway.store.listKeys())[0]!;
    expect(key.balance! >= 0n).to.equal(true);
    expect(key.held).to.equal(0n);
    const rows = await env.gw.gateway.store.usage({ keyId: key.id, limit: 1000 });
    expect(rows).to.have.length(200);
    const charged = rows.reduce((sum, r) => sum + r.charged, 0n);
    expect(charged).to.equal(1_050_000_000_000n - key.balance!);
    expect(charged).to.equal(BigInt(admitted) * 9_000_000_000n);
  });
});
}
