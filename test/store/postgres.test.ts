import { expect } from 'chai';
import { usdToPico } from '../../src/billing/money.ts';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { freshPostgresSchema, POSTGRES_URL, saySkipped } from '../support/services.ts';

const usd = usdToPico;
const NO_LIMITS = { rpm: null, tpm: null, concurrency: null };

// Several gateways on one database (issue #7): here two stores with their own connection pools,
// as two processes have. The multi-process end-to-end test is test/e2e/multi-instance.test.ts.
(POSTGRES_URL ? describe : describe.skip)('store (PostgreSQL, shared by two instances)', () => {
  let schema: { url: string; drop: () => Promise<void> };
  let a: PostgresStore;
  let b: PostgresStore;
  beforeEach(async () => {
    schema = await freshPostgresSchema(POSTGRES_URL as string);
    a = new PostgresStore(schema.url);
    b = new PostgresStore(schema.url);
  });
  afterEach(async () => {
    await Promise.all([a.close(), b.close()]);
    await schema.drop();
  });

  it('migrates once when both start together, and both see one schema', async () => {
    await Promise.all([a.migrate(), b.migrate(), a.migrate()]);
    await a.createKey({ name: 'k', sha256: 'a'.repeat(64), prefix: 'sk-jct-ab', balance: null, models: null, limits: NO_LIMITS });
    expect((await b.listKeys()).map((k) => k.name)).to.deep.equal(['k']);
  });

  it('syncs the same YAML keys from both at once without duplicates', async () => {
    await Promise.all([a.migrate(), b.migrate()]);
    const keys = [{ name: 'yaml', sha256: 'b'.repeat(64), balance: usd(5), models: null, limits: NO_LIMITS }];
    await Promise.all([a.syncConfigKeys(keys), b.syncConfigKeys(keys)]);
    expect((await a.listKeys()).map((k) => [k.name, k.balance])).to.deep.equal([['yaml', usd(5)]]);
  });

  it('holds 1,000 concurrent requests from both against one balance: exactly the funded ten pass', async () => {
    await a.migrate();
    const key = await a.createKey({ name: 'k', sha256: 'c'.repeat(64), prefix: 'sk-jct-ab', balance: usd(10), models: null, limits: NO_LIMITS });
    const hold = (store: PostgresStore, i: number) =>
      store.reserve({ requestId: `r${i}`, keyId: key.id, amount: usd(1), inputCost: 0n, model: 'm', provider: 'p', instanceId: 'i' });
    const results = await Promise.all(Array.from({ length: 1000 }, (_, i) => hold(i % 2 === 0 ? a : b, i)));
    expect(results.filter((r) => r.ok)).to.have.length(10);
    expect(await b.findKey(key.sha256)).to.deep.include({ held: usd(10), balance: usd(10) });
  });
});

if (!POSTGRES_URL) saySkipped('PostgreSQL', 'the shared-store suite');
