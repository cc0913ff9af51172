import type { Redis } from 'ioredis';

/** Redis did not answer when it had to; the message names the YAML path. */
export class RedisUnreachableError extends Error {
  override readonly name = 'RedisUnreachableError';
}

/**
 * Milliseconds a Redis command may take before its caller treats Redis as down (`deadline`).
 * ioredis's own timeout is only a backstop that clears its queue if Redis stops answering: it
 * fires when the event loop gets to it, so under load (1,000 concurrent requests on two busy cores)
 * it failed commands whose answers had already arrived (issue #12: holds refused with 500).
 */
export const REDIS_DEADLINE_MS = 1_000;
const BACKSTOP_TIMEOUT_MS = 30_000;

/** Redis did not answer within the deadline. */
export class RedisTimeoutError extends Error {
  override readonly name = 'RedisTimeoutError';
}

/**
 * `command`, failed with RedisTimeoutError if Redis has not answered after `ms`. Lag-tolerant: when
 * the timer fires, answers that already arrived are read first (one turn of the event loop), so a
 * busy event loop never reads as a slow Redis.
 */
export function deadline<T>(command: Promise<T>, ms = REDIS_DEADLINE_MS): Promise<T> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(
      () =>
        // setImmediate runs after this turn's poll phase, where a waiting answer is read.
        setImmediate(() => {
          if (settled) return;
          settled = true;
          reject(new RedisTimeoutError(`Redis did not answer within ${ms} ms`));
        }),
      ms,
    );
    command.then(
      (value) => {
        clearTimeout(timer);
        if (settled) return;
        settled = true;
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        if (settled) return;
        settled = true;
        reject(err);
      },
    );
  });
}

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
    commandTimeout: BACKSTOP_TIMEOUT_MS,
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
