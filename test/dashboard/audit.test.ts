import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { junction } from '../support/cli.ts';
import { call, startGateway, type TestGateway } from '../support/gateway.ts';
import { ADMIN, DashboardClient, dashboardConfig } from './client.ts';

type Json = Record<string, unknown>;

describe('audit of admin actions (issue #16)', () => {
  let gw: TestGateway;
  const admin = (route: string, body?: unknown) =>
    call(`${gw.url}/admin${route}`, { headers: { authorization: `Bearer ${ADMIN}` }, ...(body !== undefined && { body }) });
  const audit = async (): Promise<Json[]> => ((await admin('/audit?limit=1000')).json()['data'] as Json[]).filter((r) => r['action'] !== 'session.login');
  /** The rows of one key, oldest first. */
  const rowsOf = async (key: string): Promise<Json[]> => (await audit()).filter((r) => r['key'] === key).reverse();

  before(async () => {
    gw = await startGateway(dashboardConfig());
  });
  after(() => gw.close());

  it('writes a row per admin API action: the admin key, channel api, the client address, what and how much; never the key', async () => {
    const created = await admin('/keys', { name: 'api-1', balance_usd: 2, models: ['demo'], limits: { rpm: 30 } });
    const key = String(created.json()['key']);
    await admin('/keys/api-1/topup', { usd: '0.25' });
    await admin('/keys/api-1/disable', {});
    await admin('/keys/api-1/enable', {});
    const rows = await rowsOf('api-1');
    expect(rows.map((r) => [r['action'], r['amount_usd'], r['detail']])).to.deep.equal([
      ['key.create', 2, 'models=demo; rpm=30'],
      ['key.topup', 0.25, null],
      ['key.disable', null, null],
      ['key.enable', null, null],
    ]);
    for (const row of rows) {
      expect(row).to.deep.include({ actor: 'admin', channel: 'api' });
      expect(String(row['client'])).to.match(/127\.0\.0\.1$/);
      expect(Date.now() - Date.parse(String(row['at']))).to.be.within(0, 60_000);
    }
    const everything = (await admin('/audit?limit=1000')).text;
    expect(everything).not.to.include(key);
    expect(everything).not.to.include(ADMIN);
  });

  it('writes no row for a refused action', async () => {
    const before = (await audit()).length;
    expect((await admin('/keys/nobody/topup', { usd: 1 })).status).to.equal(404);
    expect((await admin('/keys/restricted/topup', { usd: 1 })).status).to.equal(400); // unlimited
    expect((await admin('/keys', { name: 'alice' })).status).to.equal(400); // taken
    expect((await audit()).length).to.equal(before);
  });

  it('writes the dashboard’s actions as channel dashboard, with logins, and shows them on its audit page', async () => {
    const client = new DashboardClient(gw.url);
    await client.login();
    const created = await client.post('/dashboard/keys', { name: 'web-audit', balance_usd: '1' });
    const key = /id="new-key">([^<]+)</.exec(created.text)?.[1] ?? '';
    await client.post('/dashboard/keys/topup', { name: 'web-audit', usd: '4' });
    await client.post('/dashboard/keys/disable', { name: 'web-audit' });
    const rows = await rowsOf('web-audit');
    expect(rows.map((r) => [r['action'], r['channel'], r['actor'], r['amount_usd']])).to.deep.equal([
      ['key.create', 'dashboard', 'admin', 1],
      ['key.topup', 'dashboard', 'admin', 4],
      ['key.disable', 'dashboard', 'admin', null],
    ]);
    const logins = ((await admin('/audit')).json()['data'] as Json[]).filter((r) => r['action'] === 'session.login');
    expect(logins[0]).to.deep.include({ channel: 'dashboard', key: null });
    const page = (await client.get('/dashboard/audit')).text;
    expect(page).to.include('web-audit').and.include('key.topup').and.include('$4').and.not.include(key);
  });

  it('writes `junction keys` actions with the OS user and host, channel cli', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'junction-audit-'));
    const file = path.join(dir, 'gateway.yaml');
    writeFileSync(file, 'storage: { url: "sqlite://ledger.db" }\nproviders: [{ id: mock, plugin: mock }]\nmodels: [{ id: demo, routes: [{ provider: mock }], pricing: { input: 0, output: 0 } }]\n');
    const created = await junction('keys', 'create', '--config', file, '--name', 'cli-1', '--balance-usd', '5', '--tpm', '1000');
    expect(created.code).to.equal(0);
    for (const args of [['topup', '--usd', '2.5'], ['disable'], ['enable']]) {
      expect((await junction('keys', args[0] as string, '--config', file, '--name', 'cli-1', ...args.slice(1))).code).to.equal(0);
    }
    const store = new SqliteStore(path.join(dir, 'ledger.db'));
    try {
      const rows = (await store.auditLog(10)).reverse();
      expect(rows.map((r) => [r.action, r.keyName, r.amount, r.detail])).to.deep.equal([
        ['key.create', 'cli-1', 5_000_000_000_000n, 'tpm=1000'],
        ['key.topup', 'cli-1', 2_500_000_000_000n, null],
        ['key.disable', 'cli-1', null, null],
        ['key.enable', 'cli-1', null, null],
      ]);
      for (const row of rows) expect(row).to.deep.include({ actor: userInfo().username, channel: 'cli', client: hostname() });
      expect(JSON.stringify(rows, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).not.to.include(created.stdout.trim());
    } finally {
      await store.close();
    }
  });
});
