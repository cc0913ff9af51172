import type { Redis } from 'ioredis';
import { deadline } from '../store/redis-connection.ts';
import type { Logger } from '../log.ts';
import { bucketState, type Admission, type LimitName, type RateLimiter, type RateLimits } from './limiter.ts';

/**
 * The same token buckets as memory-limiter.ts, kept in Redis so every instance shares them
 * (issue #7). Each decision is one Lua script, which Redis runs atomically: no two instances can
 * both take the last request of a bucket. Time is Redis's own (`TIME`), so instances on machines
 * with skewed clocks agree.
 *
 * Concurrency slots are a sorted set per key, one member per request in flight, scored by a lease
 * expiry. This process renews its slots' leases while their requests run; a process that dies
 * stops renewing, so its slots lapse within one lease (LEASE_MS) and never hold a key shut.
 *
 * If Redis cannot be reached, requests are admitted without limits and the failure is logged:
 * limits protect upstreams, they do not move money (balances are the ledger's, and never fail open).
 */
const LEASE_MS = 60_000;
const RENEW_MS = 15_000;
/** How often a Redis failure is logged while it lasts. */
const LOG_EVERY_MS = 10_000;
const BLOCKED: readonly (LimitName | null)[] = [null, 'rpm', 'tpm', 'concurrency'];

// Shared by both scripts: the clock and the lazy refill. -1 stands for "no limit".
const PRELUDE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function refilled(level, was, cap, elapsed)
  if cap < 0 then return 0 end
  if was == nil or was < 0 or level == nil then return cap end
  return math.min(cap, math.min(level, cap) + elapsed * cap / 60000)
end
local function load(rpm, tpm)
  local h = redis.call('HMGET', KEYS[1], 'r', 't', 'at', 'rpm', 'tpm')
  local at = tonumber(h[3]) or now
  local elapsed = math.max(0, now - at)
  return refilled(tonumber(h[1]), tonumber(h[4]), rpm, elapsed), refilled(tonumber(h[2]), tonumber(h[5]), tpm, elapsed)
end
local function save(r, tk, rpm, tpm)
  redis.call('HSET', KEYS[1], 'r', tostring(r), 't', tostring(tk), 'at', now, 'rpm', rpm, 'tpm', tpm)
  -- Kept until every bucket would be full again: after that a fresh state says the same.
  local full = 1000
  if rpm > 0 then full = math.max(full, (rpm - r) * 60000 / rpm) end
  if tpm > 0 then full = math.max(full, (tpm - tk) * 60000 / tpm) end
  redis.call('PEXPIRE', KEYS[1], math.ceil(full) + 1000)
end
`;

const ADMIT = `${PRELUDE}
local rpm, tpm, conc, input = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local r, tk = load(rpm, tpm)
local blocked, wait = 0, 0
if rpm >= 0 and r < 1 then blocked, wait = 1, (1 - r) * 60000 / rpm end
if tpm >= 0 then
  local needed = math.max(0, math.min(input, tpm))
  if tk < needed then
    local w = (needed - tk) * 60000 / tpm
    if w > wait then blocked, wait = 2, w end
  end
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if conc >= 0 and redis.call('ZCARD', KEYS[2]) >= conc and 1000 > wait then blocked, wait = 3, 1000 end
if blocked == 0 then
  if rpm >= 0 then r = r - 1 end
  if tpm >= 0 then tk = tk - input end
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[6]), ARGV[5])
  redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[6]) * 2)
end
save(r, tk, rpm, tpm)
return { blocked, tostring(wait), tostring(r), tostring(tk) }
`;

const RELEASE = `${PRELUDE}
local rpm, tpm, delta = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREM', KEYS[2], ARGV[4])
if tpm >= 0 then
  local r, tk = load(rpm, tpm)
  save(r, math.min(tpm, tk - delta), rpm, tpm)
end
return 1
`;

// The set's own expiry is pushed out too: it was set at admission only, and a long stream on a key
// whose other requests are refused would outlive it, taking its slot with it (review of issue #7).
const RENEW = `${PRELUDE}
local renewed = redis.call('ZADD', KEYS[2], 'XX', 'CH', now + tonumber(ARGV[2]), ARGV[1])
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[2]) * 2) end
return renewed
`;

interface LimiterCommands {
  jctLimitAdmit(bucket: string, slots: string, ...args: (string | number)[]): Promise<[number, string, string, string]>;
  jctLimitRelease(bucket: string, slots: string, ...args: (string | number)[]): Promise<number>;
  jctLimitRenew(bucket: string, slots: string, ...args: (string | number)[]): Promise<number>;
}

export class RedisRateLimiter implements RateLimiter {
  readonly #redis: Redis & LimiterCommands;
  readonly #prefix: string;
  readonly #log: Logger;
  /** This process's slots in flight, for lease renewal: slot → key id. */
  readonly #slots = new Map<string, number>();
  readonly #renewal: NodeJS.Timeout;
  readonly #leaseMs: number;
  #loggedAt = -Infinity;

  constructor(redis: Redis, options: { readonly prefix: string; readonly log: Logger; readonly leaseMs?: number }) {
    redis.defineCommand('jctLimitAdmit', { numberOfKeys: 2, lua: ADMIT });
    redis.defineCommand('jctLimitRelease', { numberOfKeys: 2, lua: RELEASE });
    redis.defineCommand('jctLimitRenew', { numberOfKeys: 2, lua: RENEW });
    this.#redis = redis as Redis & LimiterCommands;
    this.#prefix = options.prefix;
    this.#log = options.log;
    this.#leaseMs = options.leaseMs ?? LEASE_MS;
    this.#renewal = setInterval(() => void this.#renew(), Math.min(RENEW_MS, this.#leaseMs / 4));
    this.#renewal.unref();
  }

  async admit(key: number, limits: RateLimits, inputTokens: number, slot: string): Promise<Admission> {
    const [bucket, slots] = this.#keys(key);
    let answer: [number, string, string, string];
    try {
      answer = await deadline(this.#redis.jctLimitAdmit(bucket, slots, n(limits.rpm), n(limits.tpm), n(limits.concurrency), inputTokens, slot, this.#leaseMs));
    } catch (err) {
      this.#failed(err, 'admit');
      return { ok: true, blocked: null, retryAfterS: 0, requests: null, tokens: null };
    }
    const blocked = BLOCKED[answer[0]] ?? null;
    if (blocked === null) this.#slots.set(slot, key);
    const [waitMs, requests, tokens] = [Number(answer[1]), Number(answer[2]), Number(answer[3])];
    return {
      ok: blocked === null,
      blocked,
      retryAfterS: blocked === null ? 0 : Math.max(1, Math.ceil(waitMs / 1000)),
      requests: limits.rpm === null ? null : bucketState(requests, limits.rpm),
      tokens: limits.tpm === null ? null : bucketState(tokens, limits.tpm),
    };
  }

  async release(key: number, limits: RateLimits, inputTokens: number, usedTokens: number, slot: string): Promise<void> {
    this.#slots.delete(slot);
    const [bucket, slots] = this.#keys(key);
    try {
      await deadline(this.#redis.jctLimitRelease(bucket, slots, n(limits.rpm), n(limits.tpm), usedTokens - inputTokens, slot));
    } catch (err) {
      this.#failed(err, 'release'); // the slot lapses with its lease
    }
  }

  /** Stops renewing leases; the connection is the caller's to close. */
  close(): void {
    clearInterval(this.#renewal);
  }

  async #renew(): Promise<void> {
    if (this.#slots.size === 0) return;
    const pipeline = this.#redis.pipeline() as unknown as LimiterCommands & { exec(): Promise<unknown> };
    for (const [slot, key] of this.#slots) {
      const [bucket, slots] = this.#keys(key);
      void pipeline.jctLimitRenew(bucket, slots, slot, this.#leaseMs);
    }
    await deadline(pipeline.exec()).catch((err: unknown) => this.#failed(err, 'renew'));
  }

  #keys(key: number): [string, string] {
    // One hash tag per key: both live in one Redis Cluster slot, as a script's keys must.
    return [`${this.#prefix}rl:{${key}}`, `${this.#prefix}rl:{${key}}:flight`];
  }

  #failed(err: unknown, what: string): void {
    const now = performance.now();
    if (now - this.#loggedAt < LOG_EVERY_MS) return;
    this.#loggedAt = now;
    this.#log.error({ err: err instanceof Error ? err.message : String(err), op: what }, 'redis rate limiter unavailable: admitting without limits');
  }
}

const n = (limit: number | null): number => limit ?? -1;
