import { Redis } from 'ioredis';
import type { GatewayConfig } from '../config/types.ts';
import type { Logger } from '../log.ts';
import type { RateLimiter } from './limiter.ts';
import { MemoryRateLimiter } from './memory-limiter.ts';
import { RedisRateLimiter } from './redis-limiter.ts';

export interface OpenedLimiter {
  readonly limiter: RateLimiter;
  /** The connection, when `redis` is configured: balance holds share it (billing/redis-holds.ts). */
  readonly redis: Redis | null;
  close(): Promise<void>;
}

/** Milliseconds a Redis command may take before the limiter treats Redis as down (and admits). */
const COMMAND_TIMEOUT_MS = 1_000;

/**
 * The rate limiter a config asks for: shared through Redis when `redis.url` is set (issue #7),
 * else in this process's memory. Redis must answer at start-up: a gateway that would silently run
 * without its shared limits is refused with the YAML path. Later outages admit without limits
 * (redis-limiter.ts).
 */
export async function openLimiter(config: GatewayConfig, log: Logger): Promise<OpenedLimiter> {
  if (config.redis === null) return { limiter: new MemoryRateLimiter(), redis: null, close: async () => undefined };
  // No offline queue: while Redis is away a command fails at once instead of waiting in memory.
  const redis = new Redis(config.redis.url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: COMMAND_TIMEOUT_MS,
  });
  redis.on('error', () => undefined); // reported by the limiter's own calls, rate-limited
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    redis.disconnect();
    throw new Error(`redis.url: cannot reach Redis (${err instanceof Error ? err.message : String(err)})`);
  }
  const limiter = new RedisRateLimiter(redis, { prefix: config.redis.prefix, log });
  return {
    limiter,
    redis,
    close: async () => {
      limiter.close();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
