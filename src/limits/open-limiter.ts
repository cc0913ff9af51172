import type { Redis } from 'ioredis';
import { closeRedis, connectRedis } from '../store/redis-connection.ts';
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

/**
 * The rate limiter a config asks for: shared through Redis when `redis.url` is set (issue #7),
 * else in this process's memory. Redis must answer at start-up: a gateway that would silently run
 * without its shared limits is refused with the YAML path. Later outages admit without limits
 * (redis-limiter.ts).
 */
export async function openLimiter(config: GatewayConfig, log: Logger): Promise<OpenedLimiter> {
  if (config.redis === null) return { limiter: new MemoryRateLimiter(), redis: null, close: async () => undefined };
  const redis = await connectRedis(config.redis.url);
  const limiter = new RedisRateLimiter(redis, { prefix: config.redis.prefix, log });
  return {
    limiter,
    redis,
    close: async () => {
      limiter.close();
      await closeRedis(redis);
    },
  };
}
