import { expect } from 'chai';
import { ConfigError, parseConfig } from '../../src/config/load.ts';
import { call, KEYS, MESSAGES_HEADERS, msUntilStatus, standardConfig, startGateway, TEST_DIR, type TestGateway } from '../support/gateway.ts';

type Json = Record<string, unknown>;
const ADMIN = 'adm-0123456789abcdefghijklmnop';
const withAdmin = (yaml: string, key = ADMIN) => yaml.replace('auth:\n', `auth:\n  admin_key: "${key}"\n`);

describe('admin API (/admin/*)', () => {
  let gw: TestGateway;
  const admin = (path: string, init: { method?: string; body?: unknown; key?: string } = {}) =>
    call(`${gw.url}/admin${path}`, {
      headers: { authorization: `Bearer ${init.key ?? ADMIN}` },
      ...(init.method !== undefined && { method: init.method }),
      ...(init.body !== undefined && { body: init.body }),
    });
  const demo = (key: string) =>
    call(`${gw.url}/v1/messages`, {
      headers: { ...MESSAGES_HEADERS, 'x-api-key': key },
      body: { model: 'demo', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] },
    });
  const msUntil = (key: string, status: number) => msUntilStatus(gw.url, key, status);

  before(async () => {
    // The upstream is never reached: only the mock model is called.
    gw = await startGateway(withAdmin(standardConfig('http://127.0.0.1:9')));
  });
  after(() => gw.close());

  it('refuses a missing key, a wrong key and every user key with 401, in either header', async () => {
    for (const headers of [{}, { authorization: 'Bearer adm-wrong-0123456789abcdefghij' }, { authorization: `Bearer ${KEYS.alice}` }, { 'x-api-key': KEYS.alice }]) {
      const res = await call(`${gw.url}/admin/keys`, { headers });
      expect(res.status, JSON.stringify(headers)).to.equal(401);
      expect((res.json()['error'] as Json)['type']).to.equal('authentication_error');
    }
    expect((await call(`${gw.url}/admin/keys`, { headers: { 'x-api-key': ADMIN } })).status).to.equal(200);
  });

  it('the admin key opens nothing outside /admin', async () => {
    expect((await demo(ADMIN)).status).to.equal(401);
    expect((await call(`${gw.url}/v1/balance`, { headers: { authorization: `Bearer ${ADMIN}` } })).status).to.equal(401);
  });

  it('creates a key that works on the running gateway within a second, shown once and never listed', async () => {
    const res = await admin('/keys', { body: { name: 'carol', balance_usd: '2.5', models: ['demo'], rpm: 30 } });
    expect(res.status).to.equal(201);
    const body = res.json();
    const key = String(body['key']);
    expect(key).to.match(/^sk-jct-[A-Za-z0-9_-]{32,}$/);
    expect(body).to.deep.include({ name: 'carol', balance_usd: 2.5, spent_usd: 0, requests: 0, models: ['demo'], rpm: 30, status: 'active', source: 'store' });
    expect(body['limits']).to.deep.equal({ rpm: 30, tpm: null, concurrency: null });
    expect(await msUntil(key, 200)).to.be.below(1000);

    const list = await admin('/keys');
    expect(list.text).not.to.include(key);
    const carol = (list.json()['data'] as Json[]).find((k) => k['name'] === 'carol');
    expect(carol).to.deep.include({ prefix: body['prefix'], balance_usd: 2.5, status: 'active' });
    expect(carol?.['requests']).to.be.at.least(1);
    // YAML keys are listed too, marked as such.
    expect((list.json()['data'] as Json[]).find((k) => k['name'] === 'alice')).to.deep.include({ source: 'config', balance_usd: 100 });
  });

  it('creates a key with limits and lists them', async () => {
    const res = await admin('/keys', { body: { name: 'gina', limits: { rpm: 10, tpm: 20_000, concurrency: 2 } } });
    expect(res.status).to.equal(201);
    expect(res.json()).to.deep.include({ limits: { rpm: 10, tpm: 20_000, concurrency: 2 }, rpm: 10 });
    const listed = ((await admin('/keys')).json()['data'] as Json[]).find((k) => k['name'] === 'gina');
    expect(listed).to.deep.include({ limits: { rpm: 10, tpm: 20_000, concurrency: 2 } });
    // The same rpm both ways is accepted.
    expect((await admin('/keys', { body: { name: 'hank', rpm: 4, limits: { rpm: 4 } } })).json()).to.deep.include({ limits: { rpm: 4, tpm: null, concurrency: null } });
  });

  it('tops up, disables and re-enables a key, each taking effect within a second', async () => {
    const key = String((await admin('/keys', { body: { name: 'dave' } })).json()['key']);
    expect(await msUntil(key, 200)).to.be.below(1000);

    // No balance means unlimited; topping one up is refused rather than silently giving it a cap.
    const topped = await admin('/keys/dave/topup', { body: { usd: 1.25 } });
    expect(topped.status).to.equal(400);
    expect(topped.text).to.include('unlimited');
    const limited = String((await admin('/keys', { body: { name: 'erin', balance_usd: 1 } })).json()['key']);
    expect((await admin('/keys/erin/topup', { body: { usd: '0.000000000001' } })).json()).to.deep.include({ balance_usd: 1.000000000001 });
    expect(await msUntil(limited, 200)).to.be.below(1000);

    expect((await admin('/keys/dave/disable', { method: 'POST' })).json()).to.deep.include({ status: 'disabled' });
    expect(await msUntil(key, 401)).to.be.below(1000);
    expect((await admin('/keys/dave/enable', { method: 'POST' })).json()).to.deep.include({ status: 'active' });
    expect(await msUntil(key, 200)).to.be.below(1000);
  });

  it('answers bad input with 400 naming the field, unknown keys with 404, and duplicate names with 400', async () => {
    const cases: [string, unknown, string][] = [
      ['/keys', { balance_usd: 1 }, 'name'],
      ['/keys', { name: 'x', balance_usd: -1 }, 'balance_usd'],
      ['/keys', { name: 'x', balance_usd: '1e3' }, 'balance_usd'],
      ['/keys', { name: 'x', rpm: 0 }, 'rpm'],
      ['/keys', { name: 'x', limits: { tpm: 1.5 } }, 'limits.tpm'],
      ['/keys', { name: 'x', limits: { concurrency: 0 } }, 'limits.concurrency'],
      ['/keys', { name: 'x', limits: { rpn: 5 } }, 'rpn'],
      ['/keys', { name: 'x', limits: { rpm: '5' } }, 'limits.rpm'],
      ['/keys', { name: 'x', rpm: 5, limits: { rpm: 6 } }, 'rpm'],
      ['/keys', { name: 'x', models: [] }, 'models'],
      ['/keys', { name: 'x', colour: 'red' }, 'colour'],
      ['/keys/alice/topup', { usd: 0 }, 'usd'],
      ['/keys/alice/topup', {}, 'usd'],
      // int64 pico-dollars end near $9.2 million: amounts past the per-key maximum are refused.
      ['/keys/alice/topup', { usd: '1e21' }, 'usd'],
      ['/keys/alice/topup', { usd: 1e21 }, 'usd'],
      ['/keys/alice/topup', { usd: 8_999_950 }, 'usd'],
      ['/keys', { name: 'x', balance_usd: 9_000_001 }, 'balance_usd'],
    ];
    for (const [path, body, field] of cases) {
      const res = await admin(path, { body });
      expect(res.status, `${path} ${JSON.stringify(body)}`).to.equal(400);
      expect(String((res.json()['error'] as Json)['message']), JSON.stringify(body)).to.include(field);
    }
    const broken = await admin('/keys', { body: '{"name": ' });
    expect(broken.status).to.equal(400);
    expect((await admin('/keys', { body: { name: 'alice' } })).status).to.equal(400);
    expect((await admin('/keys/nobody/topup', { body: { usd: 1 } })).status).to.equal(404);
    expect((await admin('/keys/nobody/disable', { method: 'POST' })).status).to.equal(404);
    expect((await admin('/keys/%E0%A4%A/disable', { method: 'POST' })).status).to.equal(404);
    expect((await admin('/usage?key=nobody')).status).to.equal(404);
    expect((await admin('/usage?since=yesterday')).status).to.equal(400);
    expect((await admin('/usage?limit=0')).status).to.equal(400);
  });

  it('queries the ledger by key, time window and limit, newest first', async () => {
    const key = String((await admin('/keys', { body: { name: 'frank' } })).json()['key']);
    expect(await msUntil(key, 200)).to.be.below(1000);
    const before = new Date(Date.now() - 1000).toISOString();
    for (let i = 0; i < 3; i++) expect((await demo(key)).status).to.equal(200);
    await gw.requestLogs(1); // settlement is written before the request line is logged

    const rows = (await admin(`/usage?key=frank`)).json()['data'] as Json[];
    expect(rows.length).to.be.at.least(4); // the polling request(s) plus three
    expect(rows.every((r) => r['key'] === 'frank' && r['model'] === 'demo' && r['status'] === 200)).to.equal(true);
    const started = rows.map((r) => Date.parse(String(r['started_at'])));
    expect(started).to.deep.equal([...started].sort((a, b) => b - a));

    expect(((await admin(`/usage?key=frank&limit=2`)).json()['data'] as Json[]).length).to.equal(2);
    const windowed = (await admin(`/usage?key=frank&since=${encodeURIComponent(before)}`)).json()['data'] as Json[];
    expect(windowed.length).to.be.at.least(3);
    expect(((await admin(`/usage?key=frank&until=${encodeURIComponent(before)}`)).json()['data'] as Json[]).length).to.equal(0);
    // Without a key: every key's rows.
    const all = (await admin('/usage?limit=1000')).json()['data'] as Json[];
    expect(new Set(all.map((r) => r['key']))).to.include.members(['frank', 'carol']);
  });
});

describe('admin API configuration', () => {
  it('is off (404) when auth.admin_key is unset', async () => {
    const gw = await startGateway(standardConfig('http://127.0.0.1:9'));
    try {
      const res = await call(`${gw.url}/admin/keys`, { headers: { authorization: `Bearer ${ADMIN}` } });
      expect(res.status).to.equal(404);
    } finally {
      await gw.close();
    }
  });

  it('rejects a short admin key and one equal to a user key, naming auth.admin_key', () => {
    const load = (yaml: string) => () => parseConfig(yaml, `${TEST_DIR}/admin.yaml`, {});
    expect(load(withAdmin(standardConfig('http://127.0.0.1:9'), 'short'))).to.throw(ConfigError, /auth\.admin_key: an admin key must be at least 24 characters/);
    expect(load(withAdmin(standardConfig('http://127.0.0.1:9'), KEYS.alice))).to.throw(ConfigError, /auth\.admin_key: must not be the same as a key in auth\.keys/);
  });
});
