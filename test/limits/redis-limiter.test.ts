import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { createLogger } from '../../src/log.ts';
import { RedisRateLimiter } from '../../src/limits/redis-limiter.ts';
import { LogCapture, startGateway } from '../support/gateway.ts';
import { deleteRedisKeys, REDIS_URL, saySkipped } from '../support/services.ts';

const limits = (rpm: number | null, tpm: number | null, concurrency: number | null) => ({ rpm, tpm, concurrency });

// Two limiters on two connections stand for two gateway instances sharing one Redis (issue #7).
(REDIS_URL ? describe : describe.skip)('Redis rate limiter (shared by two instances)', () => {
  const prefix = `junction-test:${randomUUID()}:`;
  const connections: Redis[] = [];
  const limiters: RedisRateLimiter[] = [];
  const logs = new LogCapture();
  const open = (leaseMs?: number): RedisRateLimiter => {
    const redis = new Redis(REDIS_URL as string, { enableOfflineQueue: true });
    connections.push(redis);
    const limiter = new RedisRateLimiter(redis, { prefix, log: createLogger('info', logs), ...(leaseMs !== undefined && { leaseMs }) });
    limiters.push(limiter);
    return limiter;
  };
  let key = 0;
  beforeEach(() => {
    key++; // each test its own buckets
  });
  after(async () => {
    for (const limiter of limiters) limiter.close();
    if (connections[0]) await deleteRedisKeys(connections[0], prefix);
    await Promise.all(connections.map((c) => c.quit()));
  });

  it('holds an rpm limit across both: the sixth request of five per minute is refused, wherever it lands', async () => {
    const [a, b] = [open(), open()];
    const rpm5 = limits(5, null, null);
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await (i % 2 === 0 ? a : b).admit(key, rpm5, 0, `s${i}`));
    expect(answers.map((x) => x.ok)).to.deep.equal([true, true, true, true, true, false]);
    expect(answers[5]).to.deep.include({ blocked: 'rpm', retryAfterS: 12 });
    expect(answers[4]?.requests).to.deep.include({ limit: 5, remaining: 0 });
  });

  it('admits exactly the limit from many concurrent requests on both', async () => {
    const [a, b] = [open(), open()];
    const rpm10 = limits(10, null, null);
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? a : b).admit(key, rpm10, 0, `c${i}`)));
    expect(answers.filter((x) => x.ok)).to.have.length(10);
  });

  it('shares concurrency slots, and a released slot admits the next request', async () => {
    const [a, b] = [open(), open()];
    const two = limits(null, null, 2);
    expect((await a.admit(key, two, 0, 'x1')).ok).to.equal(true);
    expect((await b.admit(key, two, 0, 'x2')).ok).to.equal(true);
    expect(await a.admit(key, two, 0, 'x3')).to.deep.include({ ok: false, blocked: 'concurrency', retryAfterS: 1 });
    await b.release(key, two, 0, 0, 'x2');
    expect((await a.admit(key, two, 0, 'x3')).ok).to.equal(true);
  });

  it('lets a dead instance’s slots lapse with their lease, while a live one keeps renewing its own', async () => {
    const live = open(400);
    const dying = open(400);
    const one = limits(null, null, 2);
    expect((await live.admit(key, one, 0, 'live')).ok).to.equal(true);
    expect((await dying.admit(key, one, 0, 'dead')).ok).to.equal(true);
    dying.close(); // stops renewing, as a killed process would
    await new Promise((r) => setTimeout(r, 700));
    // The dead slot lapsed; the live one, renewed every 100 ms, still counts: one slot is free.
    expect((await live.admit(key, one, 0, 'next')).ok).to.equal(true);
    expect((await live.admit(key, one, 0, 'more')).ok).to.equal(false);
  });

  it('keeps a long request’s slot past twice the lease while every other request is refused (review)', async () => {
    const limiter = open(400);
    const one = limits(null, null, 1);
    expect((await limiter.admit(key, one, 0, 'long')).ok).to.equal(true); // renewed every 100 ms
    for (let i = 0; i < 10; i++) {
      expect((await limiter.admit(key, one, 0, `refused${i}`)).ok).to.equal(false); // a refusal extends nothing
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await limiter.admit(key, one, 0, 'second')).ok).to.equal(false); // 1 s later, past 2 × 400 ms
  });

  it('debits the input estimate and settles to the tokens used, across both', async () => {
    const [a, b] = [open(), open()];
    const tpm = limits(null, 1000, null);
    expect((await a.admit(key, tpm, 600, 't1')).tokens).to.deep.include({ limit: 1000, remaining: 400 });
    expect(await b.admit(key, tpm, 600, 't2')).to.deep.include({ ok: false, blocked: 'tpm' });
    await a.release(key, tpm, 600, 100, 't1'); // used 100 of the 600 held: 500 come back
    const again = await b.admit(key, tpm, 600, 't3');
    expect(again.ok).to.equal(true);
    expect(again.tokens?.remaining).to.be.within(299, 301); // 900 left, less 600; a little refill
  });
});

describe('Redis rate limiter when Redis is down', () => {
  it('keeps a gateway whose redis.url does not answer from starting, naming the setting', async () => {
    const error = await startGateway('redis: { url: "redis://127.0.0.1:1" }').then(
      () => null,
      (err: unknown) => err,
    );
    expect(String(error)).to.match(/redis\.url: cannot reach Redis/);
  });

  it('admits without limits and says so in the log, once for a burst of failures', async () => {
    const redis = new Redis('redis://127.0.0.1:1', { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    redis.on('error', () => undefined);
    const logs = new LogCapture();
    const limiter = new RedisRateLimiter(redis, { prefix: 'x:', log: createLogger('info', logs) });
    try {
      for (let i = 0; i < 3; i++) expect((await limiter.admit(1, limits(1, null, 1), 0, `d${i}`)).ok).to.equal(true);
      await limiter.release(1, limits(1, null, 1), 0, 0, 'd0');
      const errors = logs.lines.filter((l) => l['msg'] === 'redis rate limiter unavailable: admitting without limits');
      expect(errors).to.have.length(1);
    } finally {
      limiter.close();
      redis.disconnect();
    }
  });
});

if (!REDIS_URL) saySkipped('Redis', 'the shared rate-limiter suite');
