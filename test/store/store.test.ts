import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { usdToPico } from '../../src/billing/money.ts';
import { openDatabase } from '../../src/store/sqlite/database.ts';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { freshPostgresSchema, POSTGRES_URL, saySkipped } from '../support/services.ts';
import { KeyNotFoundError, type LedgerEntry, type Store } from '../../src/store/store.ts';

/** Every backend runs the same suite; PostgreSQL when JUNCTION_TEST_POSTGRES_URL is set (issue #7). */
const BACKENDS: { name: string; open: () => Promise<Store> }[] = [
  {
    name: 'SQLite',
    open: async () => {
      const store = new SqliteStore(path.join(mkdtempSync(path.join(tmpdir(), 'junction-store-')), 'ledger.db'));
      await store.migrate();
      return store;
    },
  },
];
const pgBase = POSTGRES_URL;
if (pgBase) {
  BACKENDS.push({
    name: 'PostgreSQL',
    open: async () => {
      const schema = await freshPostgresSchema(pgBase);
      const store = new PostgresStore(schema.url);
      await store.migrate();
      // Dropped with the store: each test has its own tables.
      const close = store.close.bind(store);
      store.close = async () => {
        await close();
        await schema.drop();
      };
      return store;
    },
  });
} else {
  saySkipped('PostgreSQL', 'the store suite');
}

const usd = usdToPico;
const ZERO = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 };
const entry = (requestId: string, keyId: number, cost: bigint, extra: Partial<LedgerEntry> = {}): LedgerEntry => ({
  requestId, keyId, endpoint: 'messages', model: 'm', provider: 'p', upstreamModel: 'um', route: 'native',
  usage: { ...ZERO, input: 10, output: 5 }, cost, status: 200, outcome: 'ok', estimated: false,
  startedAtMs: Date.parse('2026-11-22T10:00:00Z'), firstByteMs: 12.5, durationMs: 40, ...extra,
});
const NO_LIMITS = { rpm: null, tpm: null, concurrency: null };
const newKey = (name: string, balance: bigint | null) => ({ name, sha256: `${name}`.padEnd(64, '0'), prefix: 'sk-jct-ab', balance, models: null, limits: NO_LIMITS });

for (const backend of BACKENDS) {
  describe(`store (${backend.name})`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await backend.open();
    });
    afterEach(() => store.close());

    it('migrates idempotently', async () => {
      await store.migrate();
      await store.migrate();
      expect(await store.listKeys()).to.deep.equal([]);
    });

    it('creates, finds, lists, tops up and disables keys, bumping the keys version each time', async () => {
      const v0 = await store.keysVersion();
      const key = await store.createKey({ ...newKey('alice', usd(10)), models: ['gpt-*'], limits: { rpm: 60, tpm: 1000, concurrency: null } });
      expect(key).to.deep.include({ name: 'alice', balance: usd(10), held: 0n, spent: 0n, requests: 0, models: ['gpt-*'], disabled: false, source: 'store' });
      expect(key.limits).to.deep.equal({ rpm: 60, tpm: 1000, concurrency: null });
      const v1 = await store.keysVersion();
      expect(v1).not.to.equal(v0);
      expect((await store.findKey(key.sha256))?.id).to.equal(key.id);
      expect(await store.findKey('f'.repeat(64))).to.equal(undefined);
      expect((await store.topUp('alice', usd(2.5))).balance).to.equal(usd(12.5));
      expect((await store.setDisabled('alice', true)).disabled).to.equal(true);
      expect(await store.keysVersion()).not.to.equal(v1);
      expect((await store.listKeys()).map((k) => k.name)).to.deep.equal(['alice']);
      await store.createKey(newKey('free', null)).catch(() => undefined);
      const error = await store.topUp('free', usd(1)).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(RangeError);
      expect(await store.topUp('nobody', usd(1)).catch((e: unknown) => e)).to.be.instanceOf(KeyNotFoundError);
      expect(await store.createKey(newKey('alice', null)).catch((e: unknown) => e)).to.be.instanceOf(Error);
    });

    it('syncs YAML keys: starting balance set once, removed keys disabled, balance removed means unlimited', async () => {
      const sha = 'a'.repeat(64);
      await store.syncConfigKeys([{ name: 'cfg', sha256: sha, balance: usd(5), models: null, limits: NO_LIMITS }]);
      const key = (await store.findKey(sha))!;
      await store.reserve({ requestId: 'r1', keyId: key.id, amount: usd(1), inputCost: 0n, model: 'm', provider: 'p', instanceId: 'i' });
      await store.settle(entry('r1', key.id, usd(1)));
      // Editing the YAML's balance does not reset spending.
      await store.syncConfigKeys([{ name: 'cfg', sha256: sha, balance: usd(50), models: ['x'], limits: NO_LIMITS }]);
      expect(await store.findKey(sha)).to.deep.include({ balance: usd(4), spent: usd(1), models: ['x'], disabled: false });
      await store.syncConfigKeys([{ name: 'cfg', sha256: sha, balance: null, models: null, limits: NO_LIMITS }]);
      expect((await store.findKey(sha))?.balance).to.equal(null);
      await store.syncConfigKeys([]);
      expect((await store.findKey(sha))?.disabled).to.equal(true);
      // Listed again: back on. But a key an operator disabled stays off across restarts.
      await store.syncConfigKeys([{ name: 'cfg', sha256: sha, balance: null, models: null, limits: NO_LIMITS }]);
      expect((await store.findKey(sha))?.disabled).to.equal(false);
      await store.setDisabled('cfg', true);
      await store.syncConfigKeys([{ name: 'cfg', sha256: sha, balance: null, models: null, limits: NO_LIMITS }]);
      expect((await store.findKey(sha))?.disabled).to.equal(true);
    });

    it('stores YAML keys’ limits and follows the YAML on every sync', async () => {
      const sha = 'b'.repeat(64);
      await store.syncConfigKeys([{ name: 'lim', sha256: sha, balance: null, models: null, limits: { rpm: 60, tpm: 10_000, concurrency: 2 } }]);
      expect((await store.findKey(sha))?.limits).to.deep.equal({ rpm: 60, tpm: 10_000, concurrency: 2 });
      await store.syncConfigKeys([{ name: 'lim', sha256: sha, balance: null, models: null, limits: { rpm: null, tpm: 500, concurrency: null } }]);
      expect((await store.findKey(sha))?.limits).to.deep.equal({ rpm: null, tpm: 500, concurrency: null });
      const before = await store.keysVersion();
      await store.syncConfigKeys([{ name: 'lim', sha256: sha, balance: null, models: null, limits: NO_LIMITS }]);
      expect((await store.findKey(sha))?.limits).to.deep.equal(NO_LIMITS);
      // A running gateway's key cache reloads on a version change.
      expect(await store.keysVersion()).not.to.equal(before);
    });

    it('stores a created key’s limits and lists them', async () => {
      await store.createKey({ ...newKey('capped', null), limits: { rpm: null, tpm: null, concurrency: 3 } });
      expect((await store.listKeys()).find((k) => k.name === 'capped')?.limits).to.deep.equal({ rpm: null, tpm: null, concurrency: 3 });
    });

    it('settles each request once: a retried settlement returns what was charged and changes nothing', async () => {
      const key = await store.createKey(newKey('retry', usd(1)));
      await store.reserve({ requestId: 'once', keyId: key.id, amount: usd(0.5), inputCost: 0n, model: 'm', provider: 'p', instanceId: 'i' });
      const first = await store.settle(entry('once', key.id, usd(0.2)));
      const again = await store.settle(entry('once', key.id, usd(0.2)));
      expect(again).to.deep.equal(first);
      expect(await store.findKey(key.sha256)).to.deep.include({ balance: usd(0.8), spent: usd(0.2), held: 0n, requests: 1 });
    });

    it('holds atomically: a hold that does not fit is refused and says what is available', async () => {
      const key = await store.createKey(newKey('k', usd(1)));
      const hold = (id: string, amount: bigint) => store.reserve({ requestId: id, keyId: key.id, amount, inputCost: 0n, model: 'm', provider: 'p', instanceId: 'i' });
      expect(await hold('a', usd(0.6))).to.deep.equal({ ok: true });
      expect(await hold('b', usd(0.5))).to.deep.equal({ ok: false, available: usd(0.4) });
      expect(await hold('c', usd(0.4))).to.deep.equal({ ok: true });
      expect((await store.findKey(key.sha256))?.held).to.equal(usd(1));
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => hold(`p${i}`, 1n)));
      expect(results.every((r) => !r.ok)).to.equal(true);
    });

    it('settles: releases the hold, charges the cost, writes the ledger row', async () => {
      const key = await store.createKey(newKey('k', usd(1)));
      await store.reserve({ requestId: 'r', keyId: key.id, amount: usd(0.5), inputCost: 0n, model: 'm', provider: 'p', instanceId: 'i' });
      expect(await store.settle(entry('r', key.id, usd(0.2)))).to.deep.equal({ charged: usd(0.2), uncollected: 0n });
      expect(await store.findKey(key.sha256)).to.deep.include({ balance: usd(0.8), held: 0n, spent: usd(0.2), requests: 1 });
      const row = await store.generation('r', key.id);
      expect(row).to.deep.include({ keyName: 'k', cost: usd(0.2), charged: usd(0.2), uncollected: 0n, status: 200, outcome: 'ok', estimated: false, route: 'native', firstByteMs: 12.5 });
      expect(row?.usage).to.deep.equal({ ...ZERO, input: 10, output: 5 });
    });

    it('writes a media request’s image, audio and character counts, each alone or all together (issue #13)', async () => {
      const key = await store.createKey(newKey('k', null));
      const all = { inputImage: 3, outputImage: 4, images: 1, characters: 20, inputAudio: 5, outputAudio: 6, audioMs: 7000 };
      const cases = [all, ...Object.entries(all).map(([field, value]) => ({ [field]: value }))];
      for (const [i, media] of cases.entries()) {
        await store.settle(entry(`m${i}`, key.id, usd(0.01), { usage: { ...ZERO, input: 10, output: 5, ...media } }));
        expect((await store.generation(`m${i}`, key.id))?.usage).to.deep.equal({ ...ZERO, input: 10, output: 5, ...media });
      }
    });

    it('never takes a balance below zero nor another request’s hold: the excess is recorded as uncollected', async () => {
      const key = await store.createKey(newKey('k', usd(1)));
      const hold = (id: string, amount: bigint) => store.reserve({ requestId: id, keyId: key.id, amount, inputCost: 0n, model: 'm', provider: 'p', instanceId: 'i' });
      await hold('a', usd(0.3));
      await hold('b', usd(0.5));
      // a cost more than its hold: it may take its own hold and the free 0.2, not b's 0.5.
      expect(await store.settle(entry('a', key.id, usd(0.9)))).to.deep.equal({ charged: usd(0.5), uncollected: usd(0.4) });
      expect(await store.findKey(key.sha256)).to.deep.include({ balance: usd(0.5), held: usd(0.5) });
      expect(await store.settle(entry('b', key.id, usd(0.5)))).to.deep.equal({ charged: usd(0.5), uncollected: 0n });
      expect((await store.findKey(key.sha256))?.balance).to.equal(0n);
    });

    it('charges unlimited keys in full and keeps their balance unlimited', async () => {
      const key = await store.createKey(newKey('u', null));
      expect(await store.reserve({ requestId: 'r', keyId: key.id, amount: usd(1000), inputCost: 0n, model: 'm', provider: 'p', instanceId: 'i' })).to.deep.equal({ ok: true });
      expect(await store.settle(entry('r', key.id, usd(3)))).to.deep.equal({ charged: usd(3), uncollected: 0n });
      expect(await store.findKey(key.sha256)).to.deep.include({ balance: null, held: 0n, spent: usd(3) });
    });

    it('shows a generation only to the key that made it, and lists usage newest first', async () => {
      const a = await store.createKey(newKey('a', null));
      const b = await store.createKey(newKey('b', null));
      await store.settle(entry('r1', a.id, 1n, { startedAtMs: Date.parse('2026-11-22T10:00:00Z') }));
      await store.settle(entry('r2', a.id, 2n, { startedAtMs: Date.parse('2026-11-22T11:00:00Z') }));
      await store.settle(entry('r3', b.id, 3n));
      expect(await store.generation('r1', b.id)).to.equal(undefined);
      expect((await store.usage({ keyId: a.id, limit: 10 })).map((r) => r.requestId)).to.deep.equal(['r2', 'r1']);
      expect((await store.usage({ since: new Date('2026-11-22T10:30:00Z'), limit: 10 })).map((r) => r.requestId)).to.deep.equal(['r2']);
    });

    it('remembers which upstream holds a response, for its own key only, until it expires (issue #14)', async () => {
      const a = await store.createKey(newKey('a', null));
      const b = await store.createKey(newKey('b', null));
      const created = new Date('2026-11-24T10:00:00Z');
      const record = { id: 'resp_1', keyId: a.id, provider: 'openai', model: 'gpt-5', contextTokens: 1234, createdAt: created, expiresAt: new Date('2026-12-24T10:00:00Z') };
      await store.saveResponse(record, ['msg_1', 'fc_1']);
      await store.saveResponse({ ...record, id: 'resp_old', expiresAt: new Date('2026-11-24T11:00:00Z') }, ['msg_old']);
      const now = new Date('2026-11-24T12:00:00Z');
      expect(await store.findResponse('resp_1', a.id, now)).to.deep.equal(record);
      expect(await store.findResponse('resp_1', b.id, now)).to.equal(undefined);
      expect(await store.findResponse('resp_old', a.id, now)).to.equal(undefined);
      expect(await store.findResponseOfItem('fc_1', a.id, now)).to.deep.equal(record);
      expect(await store.findResponseOfItem('fc_1', b.id, now)).to.equal(undefined);
      expect(await store.findResponseOfItem('msg_old', a.id, now)).to.equal(undefined);
      expect(await store.purgeResponses(now)).to.equal(1);
      expect(await store.deleteResponse('resp_1', b.id)).to.equal(false);
      expect(await store.deleteResponse('resp_1', a.id)).to.equal(true);
      expect(await store.findResponse('resp_1', a.id, now)).to.equal(undefined);
      expect(await store.findResponseOfItem('msg_1', a.id, now)).to.equal(undefined);
      // A response Junction keeps itself (a translated route's) carries its items, found by theirs.
      const kept = { ...record, id: 'resp_kept', body: JSON.stringify({ input: [{ id: 'msg_in', role: 'user', content: 'hi' }], response: { id: 'resp_kept', output: [] } }) };
      await store.saveResponse(kept, ['msg_in']);
      expect(await store.findResponse('resp_kept', a.id, now)).to.deep.equal(kept);
      expect(await store.findResponseOfItem('msg_in', a.id, now)).to.deep.equal(kept);
    });

    it('reconciles holds of dead instances, charging their input estimate, and leaves live ones alone', async () => {
      const key = await store.createKey(newKey('k', usd(1)));
      await store.registerInstance({ id: 'dead', host: 'h', pid: 1 });
      await store.registerInstance({ id: 'live', host: 'h', pid: 2 });
      const hold = (id: string, instanceId: string) =>
        store.reserve({ requestId: id, keyId: key.id, amount: usd(0.3), inputCost: usd(0.01), model: 'm', provider: 'p', instanceId });
      await hold('from-dead', 'dead');
      await hold('from-live', 'live');
      await hold('from-unknown', 'never-registered');
      const reconciled = await store.reconcile((i) => i.id === 'live', new Date(0));
      expect(reconciled).to.equal(2);
      const row = await store.generation('from-dead', key.id);
      expect(row).to.deep.include({ outcome: 'interrupted', estimated: true, charged: usd(0.01) });
      // Two holds settled at $0.01 each; the live one still holds $0.30.
      expect(await store.findKey(key.sha256)).to.deep.include({ held: usd(0.3), balance: usd(0.98) });
      expect(await store.reconcile(() => true, new Date(0))).to.equal(0);
    });

    it('never overspends under many concurrent holds: exactly what the balance covers is held', async () => {
      const key = await store.createKey(newKey('busy', usd(10)));
      const holds = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          store.reserve({ requestId: `c${i}`, keyId: key.id, amount: usd(1), inputCost: usd(0.1), model: 'm', provider: 'p', instanceId: 'i' }),
        ),
      );
      expect(holds.filter((h) => h.ok)).to.have.length(10);
      expect(await store.findKey(key.sha256)).to.deep.include({ held: usd(10), balance: usd(10) });
      // Settled concurrently too, each for less than it held: the balance moves by the ledger's sum.
      const ok = holds.map((h, i) => (h.ok ? i : -1)).filter((i) => i >= 0);
      await Promise.all(ok.map((i) => store.settle(entry(`c${i}`, key.id, usd(0.25)))));
      await Promise.all(ok.map((i) => store.settle(entry(`c${i}`, key.id, usd(0.25))))); // retried: no change
      const after = await store.findKey(key.sha256);
      expect(after).to.deep.include({ held: 0n, balance: usd(7.5), spent: usd(2.5), requests: 10 });
      const rows = await store.usage({ keyId: key.id, limit: 100 });
      expect(rows.reduce((sum, r) => sum + r.charged, 0n)).to.equal(usd(2.5));
    });

    it('lists registered instances with whether each is alive (process there, heartbeat fresh)', async () => {
      await store.registerInstance({ id: 'up', host: 'h', pid: 1 });
      await store.registerInstance({ id: 'gone', host: 'h', pid: 2 });
      const states = await store.instances((i) => i.pid === 1, new Date(Date.now() - 60_000));
      expect([...states].sort()).to.deep.equal([['gone', false], ['up', true]]);
      expect([...(await store.instances(() => true, new Date(Date.now() + 60_000))).values()]).to.deep.equal([false, false]); // stale
    });

    it('registers an instance again at its heartbeat after another removed it as silent (review)', async () => {
      await store.registerInstance({ id: 'A', host: 'h1', pid: 1 });
      // A's heartbeats failed past the stale line (a database outage): another instance removes A.
      await store.reconcile(() => true, new Date(Date.now() + 60_000));
      expect((await store.instances(() => true, new Date(0))).has('A')).to.equal(false);
      await store.heartbeat({ id: 'A', host: 'h1', pid: 1 });
      expect(await store.instances(() => true, new Date(Date.now() - 60_000))).to.deep.equal(new Map([['A', true]]));
    });

    it('keeps money exact beyond 2^53 pico-dollars', async () => {
      const big = 9_007_199_254_740_993n; // 2^53 + 1 pico-dollars, about $9,007
      const key = await store.createKey(newKey('rich', big));
      expect((await store.findKey(key.sha256))?.balance).to.equal(big);
      await store.settle(entry('r-big', key.id, 1n));
      expect((await store.findKey(key.sha256))?.balance).to.equal(big - 1n);
    });

    it('writes audit rows and lists the latest first, amounts exact (issue #16)', async () => {
      const by = { actor: 'admin', channel: 'api', client: '127.0.0.1' } as const;
      await store.recordAudit({ ...by, action: 'key.create', keyName: 'a', amount: usd(5), detail: 'models=demo' });
      await store.recordAudit({ actor: 'ops', channel: 'cli', client: 'host-1', action: 'key.topup', keyName: 'a', amount: 9_007_199_254_740_993n, detail: null });
      await store.recordAudit({ ...by, channel: 'dashboard', action: 'session.login', keyName: null, amount: null, detail: null });
      const rows = await store.auditLog(2);
      expect(rows.map((r) => r.action)).to.deep.equal(['session.login', 'key.topup']);
      expect(rows[1]).to.deep.include({ actor: 'ops', channel: 'cli', client: 'host-1', keyName: 'a', amount: 9_007_199_254_740_993n, detail: null });
      expect(rows[0]?.at).to.be.instanceOf(Date);
      expect(Math.abs((rows[0]?.at.getTime() ?? 0) - Date.now())).to.be.below(60_000);
      expect((await store.auditLog(10))[2]).to.deep.include({ ...by, action: 'key.create', keyName: 'a', amount: usd(5), detail: 'models=demo' });
    });

    it('sums the ledger per time bucket and per model, key or provider, counting failures (issue #16)', async () => {
      const a = await store.createKey(newKey('a', null));
      const b = await store.createKey(newKey('b', null));
      const at = (time: string) => ({ startedAtMs: Date.parse(`2026-11-22T${time}Z`) });
      await store.settle(entry('s0', a.id, usd(9), at('08:59:59'))); // before `since`
      await store.settle(entry('s1', a.id, usd(1), { ...at('10:05:00'), model: 'x' }));
      await store.settle(entry('s2', a.id, usd(2), { ...at('10:55:00'), model: 'x', status: 502, outcome: 'GW_ERR_UPSTREAM_UNREACHABLE' }));
      await store.settle(entry('s3', b.id, usd(4), { ...at('11:00:00'), model: 'x', outcome: 'GW_ERR_UPSTREAM_INTERRUPTED' }));
      await store.settle(entry('s4', b.id, usd(8), { ...at('11:30:00'), model: 'y', provider: 'q', outcome: 'client_disconnected' }));
      await store.settle(entry('s5', b.id, 0n, { ...at('11:31:00'), model: 'y', provider: 'q', status: 429, outcome: 'GW_ERR_RATE_LIMITED' }));
      const since = new Date('2026-11-22T09:00:00Z');
      const byModel = await store.usageSeries({ since, bucketSeconds: 3600, by: 'model' });
      expect(byModel.map((p) => [p.bucket.toISOString().slice(11, 16), p.group, p.requests, p.failed, p.charged, p.tokens])).to.deep.equal([
        ['10:00', 'x', 2, 1, usd(3), 30],
        ['11:00', 'x', 1, 1, usd(4), 15],
        ['11:00', 'y', 2, 0, usd(8), 30],
      ]);
      const byKey = await store.usageSeries({ since, bucketSeconds: 86400, by: 'key' });
      expect(byKey.map((p) => [p.bucket.toISOString(), p.group, p.requests, p.charged])).to.deep.equal([
        ['2026-11-22T00:00:00.000Z', 'a', 2, usd(3)],
        ['2026-11-22T00:00:00.000Z', 'b', 3, usd(12)],
      ]);
      const byProvider = await store.usageSeries({ since, bucketSeconds: 86400, by: 'provider' });
      expect(byProvider.map((p) => [p.group, p.requests, p.failed])).to.deep.equal([['p', 3, 2], ['q', 2, 0]]);
    });

    it('finds one request by its id, whichever key made it (the dashboard search)', async () => {
      const a = await store.createKey(newKey('a', null));
      const b = await store.createKey(newKey('b', null));
      await store.settle(entry('r-a', a.id, 1n));
      await store.settle(entry('r-b', b.id, 2n));
      expect((await store.usage({ requestId: 'r-b', limit: 10 })).map((r) => [r.requestId, r.keyName])).to.deep.equal([['r-b', 'b']]);
      expect(await store.usage({ requestId: 'r-none', limit: 10 })).to.deep.equal([]);
    });
  });
}

/** A new SQLite file migrated up to `version` only, as an older Junction left it, still open. */
function fileAtVersion(version: number): { file: string; old: ReturnType<typeof openDatabase> } {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'junction-store-')), 'ledger.db');
  const old = openDatabase(file);
  old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
  for (const migration of MIGRATIONS.filter((m) => m.version <= version)) {
    old.exec(migration.sql);
    old.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(migration.version, new Date().toISOString());
  }
  return { file, old };
}

describe('store (SQLite file)', () => {
  it('migrates a version-2 file to version 3, keeping its keys and rpm and adding tpm and concurrency', async () => {
    const { file, old } = fileAtVersion(2);
    old.prepare(
      `INSERT INTO keys (name, sha256, prefix, source, balance, models, rpm, disabled, created_at, updated_at)
       VALUES ('legacy', ?, 'sk-jct-ab', 'store', NULL, NULL, 30, 0, 'x', 'x')`,
    ).run('c'.repeat(64));
    old.close();
    const store = new SqliteStore(file);
    await store.migrate();
    expect((await store.findKey('c'.repeat(64)))?.limits).to.deep.equal({ rpm: 30, tpm: null, concurrency: null });
    await store.close();
  });

  it('migrates a version-8 file to version 9, moving each key\'s balance, held, spent and requests to key_counters (issue #17)', async () => {
    const { file, old } = fileAtVersion(8);
    const add = old.prepare(
      `INSERT INTO keys (name, sha256, prefix, source, balance, held, spent, requests, created_at, updated_at)
       VALUES (?, ?, 'sk-jct-ab', 'store', ?, ?, ?, ?, 'x', 'x')`,
    );
    add.run('funded', 'd'.repeat(64), 5_000_000n, 1_000_000n, 250n, 7);
    add.run('unlimited', 'e'.repeat(64), null, 0n, 9n, 2);
    // A request in flight when the old version stopped: its hold must still settle against the key.
    old.prepare("INSERT INTO holds (request_id, key_id, amount, input_cost, model, provider, instance, created_at) VALUES ('r-old', 1, 1000000, 0, 'm', 'p', 'gone', 'x')").run();
    old.close();
    const store = new SqliteStore(file);
    await store.migrate();
    const funded = await store.findKey('d'.repeat(64));
    expect([funded?.balance, funded?.held, funded?.spent, funded?.requests]).to.deep.equal([5_000_000n, 1_000_000n, 250n, 7]);
    const unlimited = await store.findKey('e'.repeat(64));
    expect([unlimited?.balance, unlimited?.held, unlimited?.spent, unlimited?.requests]).to.deep.equal([null, 0n, 9n, 2]);
    // Nothing can read the old columns by their names any more.
    const raw = openDatabase(file);
    expect(() => raw.prepare('SELECT balance FROM keys').get()).to.throw(/no such column/);
    raw.close();
    await store.settle(entry('r-old', 1, 400n));
    const after = await store.findKey('d'.repeat(64));
    expect([after?.balance, after?.held, after?.spent, after?.requests]).to.deep.equal([4_999_600n, 0n, 650n, 8]);
    await store.close();
  });

  it('lets six processes open and migrate one new file at the same instant (serve --workers; review)', async function () {
    this.timeout(30_000);
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'junction-store-')), 'ledger.db');
    const script = fileURLToPath(new URL('../support/open-store.ts', import.meta.url));
    const at = Date.now() + 2500; // after all six have loaded
    const runs = Array.from({ length: 6 }, () =>
      new Promise<string>((resolve) => {
        const child = spawn(process.execPath, ['--import', 'tsx/esm', script, file, String(at)]);
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.on('exit', () => resolve(out.trim()));
      }),
    );
    expect(await Promise.all(runs)).to.deep.equal(['ok', 'ok', 'ok', 'ok', 'ok', 'ok']);
  });

  it('keeps what was committed across a reopen', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'junction-store-')), 'nested', 'ledger.db');
    const first = new SqliteStore(file);
    await first.migrate();
    const key = await first.createKey(newKey('k', usd(2)));
    await first.settle(entry('r', key.id, usd(0.5)));
    await first.close();
    const second = new SqliteStore(file);
    await second.migrate();
    expect(await second.findKey(key.sha256)).to.deep.include({ balance: usd(1.5), spent: usd(0.5) });
    await second.close();
  });
});
