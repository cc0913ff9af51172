import { expect } from 'chai';
import { GatewayMetrics } from '../../src/metrics/gateway-metrics.ts';
import { call, CHAT_HEADERS, generationOf, KEYS, MESSAGES_HEADERS, standardConfig, startGateway, useUpstreamAndGateway, type TestGateway } from '../support/gateway.ts';

/**
 * GET /metrics (issue #16; operations.md §1): after real traffic the values, not only the names,
 * match what was served and billed; labels are bounded (an unknown model is `other`; never a key
 * or a key name); access follows `server.metrics`.
 */
const ADMIN = 'sk-admin-metrics-0123456789abcdef';
const BROKE = 'sk-jct-broke-0123456789abcdef';
const withAdmin = (yaml: string, server = ''): string =>
  yaml.replace('auth:\n', `${server}auth:\n  admin_key: "${ADMIN}"\n`).replace('  keys:\n', `  keys:\n    - { name: broke, key: "${BROKE}", balance_usd: 0 }\n`);

/** One sample's value from Prometheus' text format, or undefined. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const inside = line.slice(name.length + 1, line.lastIndexOf('}'));
    if (wanted.every((pair) => inside.split(',').includes(pair))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('GET /metrics', () => {
  const env = useUpstreamAndGateway((url) => withAdmin(standardConfig(url)));
  const scrape = async (): Promise<string> => {
    const res = await call(`${env.gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
    return res.text;
  };

  it('counts requests, tokens and time as they were served and billed, by bounded labels', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await call(`${env.gw.url}/v1/messages`, { headers: { ...MESSAGES_HEADERS }, body: { model: 'demo', max_tokens: 20, messages: [{ role: 'user', content: `Hello number ${i}` }] } });
      expect(res.status).to.equal(200);
      ids.push(String(res.headers.get('x-request-id')));
    }
    const streamed = await call(`${env.gw.url}/v1/chat/completions`, { headers: { ...CHAT_HEADERS }, body: { model: 'demo', stream: true, messages: [{ role: 'user', content: 'Stream please' }] } });
    ids.push(String(streamed.headers.get('x-request-id')));
    const missing = await call(`${env.gw.url}/v1/messages`, { headers: { ...MESSAGES_HEADERS }, body: { model: 'no-such-model-xyz', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] } });
    expect(missing.status).to.equal(404);
    const text = await scrape();
    expect(sample(text, 'junction_requests_total', { endpoint: 'messages', model: 'demo', provider: 'mock', route_kind: 'in-process', status_class: '2xx' })).to.equal(3);
    expect(sample(text, 'junction_requests_total', { endpoint: 'chat_completions', model: 'demo', provider: 'mock', status_class: '2xx' })).to.equal(1);
    expect(sample(text, 'junction_requests_total', { model: 'other', status_class: '4xx' })).to.equal(1);
    // The ledger's own rows: the tokens counted are the tokens billed.
    let input = 0;
    let output = 0;
    for (const id of ids) {
      const row = await generationOf(env.gw.url, id);
      input += row.tokens['input'] ?? 0;
      output += row.tokens['output'] ?? 0;
    }
    expect(input).to.be.greaterThan(0);
    expect(sample(text, 'junction_tokens_total', { model: 'demo', provider: 'mock', kind: 'input' })).to.equal(input);
    expect(sample(text, 'junction_tokens_total', { model: 'demo', provider: 'mock', kind: 'output' })).to.equal(output);
    expect(sample(text, 'junction_request_duration_seconds_count', { endpoint: 'messages', route_kind: 'in-process', status_class: '2xx' })).to.equal(3);
    expect(sample(text, 'gen_ai_server_time_to_first_token_seconds_count', { gen_ai_operation_name: 'chat_completions', gen_ai_request_model: 'demo' })).to.equal(1);
    // The process's own, and event-loop lag.
    expect(text).to.include('process_cpu_user_seconds_total').and.include('nodejs_eventloop_lag_p99_seconds');
    // Never a key, a key name or the client's model string.
    expect(text).not.to.include(KEYS.alice).and.not.include('alice').and.not.include('no-such-model-xyz');
  });

  it('a paid model\'s cost, in USD, is what the ledger charged', async () => {
    env.upstream.reset();
    const res = await call(`${env.gw.url}/v1/messages`, { headers: { ...MESSAGES_HEADERS }, body: { model: 'claude-sonnet-4-6', max_tokens: 20, messages: [{ role: 'user', content: 'Hello' }] } });
    expect(res.status).to.equal(200);
    const row = await generationOf(env.gw.url, res.headers.get('x-request-id'));
    expect(row.cost_usd).to.be.greaterThan(0);
    const text = await scrape();
    expect(sample(text, 'junction_cost_usd_total', { model: 'claude-sonnet-4-6', provider: 'anthropic' })).to.be.closeTo(row.cost_usd, 1e-9);
  });

  it('times each stream\'s first chunk from its upstream, native and translated', async () => {
    const native = await call(`${env.gw.url}/v1/messages`, { headers: { ...MESSAGES_HEADERS }, body: { model: 'claude-sonnet-4-6', max_tokens: 20, stream: true, messages: [{ role: 'user', content: 'Hi' }] } });
    expect(native.text).to.include('message_stop');
    const translated = await call(`${env.gw.url}/v1/chat/completions`, { headers: { ...CHAT_HEADERS }, body: { model: 'claude-sonnet-4-6', stream: true, messages: [{ role: 'user', content: 'Hi' }] } });
    expect(translated.text).to.include('[DONE]');
    const text = await scrape();
    expect(sample(text, 'gen_ai_client_operation_time_to_first_chunk_seconds_count', { gen_ai_provider_name: 'anthropic', gen_ai_request_model: 'claude-sonnet-4-6' })).to.equal(2);
  });

  it('counts a refusal for balance, and shows holds, pending settlements and breakers', async () => {
    const refused = await call(`${env.gw.url}/v1/messages`, { headers: { 'x-api-key': BROKE, 'anthropic-version': '2023-06-01' }, body: { model: 'claude-sonnet-4-6', max_tokens: 20, messages: [{ role: 'user', content: 'Hello' }] } });
    expect(refused.status).to.equal(402);
    const text = await scrape();
    expect(sample(text, 'junction_refusals_total', { reason: 'balance' })).to.equal(1);
    // Nothing is in flight between requests: no hold left open, nothing waiting to settle.
    expect(text).to.match(/^junction_holds_outstanding 0$/m).and.match(/^junction_settlements_pending 0$/m);
    expect(sample(text, 'junction_circuit_breakers_open', { provider: 'anthropic' })).to.equal(0);
  });

  it('asks for the admin key by default: none or a user key is refused', async () => {
    expect((await call(`${env.gw.url}/metrics`)).status).to.equal(401);
    expect((await call(`${env.gw.url}/metrics`, { headers: { authorization: `Bearer ${KEYS.alice}` } })).status).to.equal(401);
  });
});

describe('GET /metrics, by server.metrics', () => {
  const gateways: TestGateway[] = [];
  after(async () => {
    for (const gw of gateways) await gw.close();
  });
  const start = async (yaml: string): Promise<TestGateway> => {
    const gw = await startGateway(yaml);
    gateways.push(gw);
    return gw;
  };

  it('public: open to a scraper without a key', async () => {
    const gw = await start(withAdmin(standardConfig('http://127.0.0.1:9'), 'server: { metrics: public }\n'));
    const res = await call(`${gw.url}/metrics`);
    expect(res.status).to.equal(200);
    expect(res.text).to.include('junction_requests_in_flight');
  });

  it('off: not there', async () => {
    const gw = await start(withAdmin(standardConfig('http://127.0.0.1:9'), 'server: { metrics: off }\n'));
    expect((await call(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).status).to.equal(404);
  });

  it('admin without an admin key configured: a 403 that says which setting opens it', async () => {
    const gw = await start(standardConfig('http://127.0.0.1:9'));
    const res = await call(`${gw.url}/metrics`);
    expect(res.status).to.equal(403);
    expect(res.text).to.include('server.metrics: public').and.include('auth.admin_key');
  });
});

describe('GatewayMetrics.record', () => {
  it('counts each label set apart when requests of different labels interleave', async () => {
    const metrics = new GatewayMetrics(['a', 'b'], { inFlight: () => 0, settlementsPending: () => 0, breakersOpen: () => new Map() });
    const base = { requestId: 'r', method: 'POST', path: '/v1/messages', durationMs: 1, endpoint: 'messages', provider: 'p', kind: 'native' } as const;
    const order = [['a', 200], ['b', 200], ['a', 200], ['a', 503], ['a', 200], ['c', 200], ['b', 200]] as const;
    for (const [model, status] of order) metrics.record({ ...base, model, status });
    const text = await metrics.registry.metrics();
    const count = (model: string, statusClass: string) => sample(text, 'junction_requests_total', { model, status_class: statusClass });
    expect([count('a', '2xx'), count('b', '2xx'), count('a', '5xx'), count('other', '2xx')]).to.deep.equal([3, 2, 1, 1]);
  });
});
