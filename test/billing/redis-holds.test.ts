import { GatewayError } from '../../src/errors.ts';
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { usdToPico } from '../../src/billing/money.ts';
import { RedisHolds } from '../../src/billing/redis-holds.ts';
import { Settlements } from '../../src/billing/settlements.ts';
import { createLogger } from '../../src/log.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { HoldSpec, LedgerEntry } from '../../src/store/store.ts';
import { LogCapture } from '../support/gateway.ts';
import { deleteRedisKeys, REDIS_URL, saySkipped } from '../support/services.ts';

const usd = usdToPico;
const NO_LIMITS = { rpm: null, tpm: null, concurrency: null };
const entry = (requestId: string, keyId: number, cost: bigint): LedgerEntry => ({
  requestId, keyId, endpoint: 'messages', model: 'm', provider: 'p', upstreamModel: 'm', route: 'native',
  usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, reasoning: 0 }, cost, status: 200, outcome: 'ok',
  estimated: false, startedAtMs: Date.now(), firstByteMs: 1, durationMs: 2,
});

// Balance holds in Redis, the ledger in the store (issue #7). Two RedisHolds on two connections
// stand for two instances; the store is the one ledger they share.
(REDIS_URL ? describe : describe.skip)('balance holds in Redis', () => {
  let prefix: string;
  let store: SqliteStore;
  let instances: Map<string, boolean>;
  const connections: Redis[] = [];
  const holdsFor = (): RedisHolds => {
    const redis = new Redis(REDIS_URL as string);
    connections.push(redis);
    return new RedisHolds(redis, store, { prefix, log: createLogger('silent', new LogCapture()), instances: async () => instances });
  };
  const hold = (keyId: number, requestId: string, amount: bigint, instanceId = 'live'): HoldSpec => ({
    requestId, keyId, amount, inputCost: usd(0.01), model: 'm', provider: 'p', instanceId,
  });
  const newKey = (name: string, balance: bigint | null) =>
    store.createKey({ name, sha256: name.padEnd(64, '0'), prefix: 'sk-jct-ab', balance, models: null, limits: NO_LIMITS });

  beforeEach(async () => {
    prefix = `junction-test:${randomUUID()}:`;
    store = new SqliteStore(path.join(mkdtempSync(path.join(tmpdir(), 'junction-holds-')), 'ledger.db'));
    await store.migrate();
    instances = new Map([['live', true]]);
  });
  afterEach(async () => {
    await store.close();
    if (connections[0]) await deleteRedisKeys(connections[0], prefix);
    await Promise.all(connections.splice(0).map((c) => c.quit()));
  });

  it('admits exactly what the balance covers from 200 concurrent holds on two instances', async () => {
    const [a, b] = [holdsFor(), holdsFor()];
    const key = await newKey('k', usd(10));
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? a : b).reserve(hold(key.id, `r${i}`, usd(1)))));
    expect(results.filter((r) => r.ok)).to.have.length(10);
    expect(results.find((r) => !r.ok)).to.deep.equal({ ok: false, available: 0n });
  });

  it('releases a hold when its settlement is written, and lowers what the key may spend by the charge', async () => {
    const holds = holdsFor();
    const settlements = new Settlements(store, createLogger('silent', new LogCapture()), holds);
    const key = await newKey('k', usd(1));
    expect((await holds.reserve(hold(key.id, 'a', usd(0.6)))).ok).to.equal(true);
    expect(await holds.reserve(hold(key.id, 'b', usd(0.6)))).to.deep.equal({ ok: false, available: usd(0.4) });
    await settlements.settle(entry('a', key.id, usd(0.25)));
    // $1 − $0.25 charged, nothing held: $0.75 free.
    expect(await holds.reserve(hold(key.id, 'c', usd(0.8)))).to.deep.equal({ ok: false, available: usd(0.75) });
    expect((await holds.reserve(hold(key.id, 'd', usd(0.75)))).ok).to.equal(true);
    expect((await store.findKey(key.sha256))?.balance).to.equal(usd(0.75));
  });

  it('reports what a large balance still allows exactly (Lua keeps 14 digits in tostring; review)', async () => {
    const holds = holdsFor();
    const key = await newKey('rich', usd(200_000));
    expect(await holds.reserve(hold(key.id, 'too-much', usd(300_000)))).to.deep.equal({ ok: false, available: usd(200_000) });
  });

  it('learns a top-up at the next reconciliation, and unlimited keys always fit', async () => {
    const holds = holdsFor();
    const key = await newKey('k', usd(1));
    expect((await holds.reserve(hold(key.id, 'a', usd(2)))).ok).to.equal(false);
    await store.topUp('k', usd(5));
    await holds.reconcile();
    expect((await holds.reserve(hold(key.id, 'b', usd(2)))).ok).to.equal(true);
    const free = await newKey('free', null);
    expect((await holds.reserve(hold(free.id, 'c', usd(1_000_000)))).ok).to.equal(true);
  });

  it('settles the hold of a dead instance as interrupted, charging its input estimate, and releases it', async () => {
    const holds = holdsFor();
    const key = await newKey('k', usd(1));
    instances.set('dead', true);
    expect((await holds.reserve(hold(key.id, 'x', usd(0.5), 'dead')))).to.deep.equal({ ok: true });
    instances.set('dead', false);
    expect(await holds.reconcile()).to.equal(1);
    expect(await store.generation('x', key.id)).to.deep.include({ outcome: 'interrupted', estimated: true, charged: usd(0.01) });
    // Released: $1 − $0.01 is free again.
    expect(await holds.reserve(hold(key.id, 'y', usd(1)))).to.deep.equal({ ok: false, available: usd(0.99) });
    expect(await holds.reconcile()).to.equal(0); // once
  });

  it('leaves a young hold of an unregistered instance alone, and an old one it settles', async () => {
    const holds = holdsFor();
    const key = await newKey('k', usd(1));
    expect((await holds.reserve(hold(key.id, 'new', usd(0.5), 'just-started'))).ok).to.equal(true);
    expect(await holds.reconcile()).to.equal(0); // it may have registered after the list was read
    const redis = connections[0] as Redis;
    const record = await redis.hget(`${prefix}hh:{${key.id}}`, 'new');
    await redis.hset(`${prefix}hh:{${key.id}}`, 'new', record!.replace(/\|(\d+)\|m\|/, `|${Date.now() - 11_000}|m|`));
    expect(await holds.reconcile()).to.equal(1);
    expect((await store.generation('new', key.id))?.outcome).to.equal('interrupted');
  });

  it('releases a live instance’s hold whose release was lost, against the ledger’s charge', async () => {
    const holds = holdsFor();
    const key = await newKey('k', usd(1));
    expect((await holds.reserve(hold(key.id, 'lost', usd(0.5)))).ok).to.equal(true);
    await store.settle(entry('lost', key.id, usd(0.2))); // written, but Redis never heard of it
    const redis = connections[0] as Redis;
    const record = await redis.hget(`${prefix}hh:{${key.id}}`, 'lost');
    await redis.hset(`${prefix}hh:{${key.id}}`, 'lost', record!.replace(/\|(\d+)\|m\|/, `|${Date.now() - 61_000}|m|`));
    expect(await holds.reconcile()).to.equal(1);
    expect(await holds.reserve(hold(key.id, 'next', usd(0.9)))).to.deep.equal({ ok: false, available: usd(0.8) });
  });
});

describe('balance holds in Redis when Redis is down', () => {
  it('refuse the request (fail closed): money is never assumed', async () => {
    const redis = new Redis('redis://127.0.0.1:1', { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    redis.on('error', () => undefined);
    const store = new SqliteStore(':memory:');
    await store.migrate();
    const holds = new RedisHolds(redis, store, { prefix: 'x:', log: createLogger('silent', new LogCapture()), instances: async () => new Map() });
    let failure: unknown;
    await holds.reserve({ requestId: 'r', keyId: 1, amount: 1n, inputCost: 0n, model: 'm', provider: 'p', instanceId: 'i' }).catch((err: unknown) => (failure = err));
    // 503 with retry-after, in the caller's format: Redis is down, not the request wrong (issue #12).
    expect(failure).to.be.instanceOf(GatewayError);
    expect(failure).to.deep.include({ status: 503, code: 'GW_ERR_HOLD_UNAVAILABLE', headers: { 'retry-after': '1' } });
    redis.disconnect();
    await store.close();
  });
});

if (!REDIS_URL) saySkipped('Redis', 'the Redis balance-holds suite');
