import type { Redis } from 'ioredis';

/** Redis did not answer when it had to; the message names the YAML path. */
export class RedisUnreachableError extends Error {
  override readonly name = 'RedisUnreachableError';
}

/** Milliseconds a Redis command may take before its caller treats Redis as down. */
const COMMAND_TIMEOUT_MS = 1_000;

/**
 * Connects to `redis.url` (issue #7). No offline queue: while Redis is away a command fails at
 * once instead of waiting in memory. Redis must answer now: a deployment configured to share its
 * state does not go on without it, and the message names the YAML path.
 */
export async function connectRedis(url: string): Promise<Redis> {
  // Imported on use: the command line loads this file for its error class alone.
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: COMMAND_TIMEOUT_MS,
  });
  redis.on('error', () => undefined); // reported by each caller's own commands
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    redis.disconnect();
    throw new RedisUnreachableError(`redis.url: cannot reach Redis (${err instanceof Error ? err.message : String(err)})`);
  }
  return redis;
}

/** Closes a connection politely, or at once if Redis is gone. */
export async function closeRedis(redis: Redis): Promise<void> {
  await redis.quit().catch(() => redis.disconnect());
}
