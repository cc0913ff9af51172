/**
 * Per-key rate limits (issue #5): the interface the gateway talks to, so the in-memory limiter
 * (memory-limiter.ts, one process) can be replaced by a shared one (redis-limiter.ts, issue #7)
 * without touching the middleware. Every method is async for that reason.
 */

/** A key's limits; null means that limit does not apply. */
export interface RateLimits {
  /** Requests per minute: a token bucket of this capacity, refilled at rpm/60 per second. */
  readonly rpm: number | null;
  /** Tokens per minute (input + output + cache): a bucket refilled at tpm/60 per second. */
  readonly tpm: number | null;
  /** Requests in flight at once. */
  readonly concurrency: number | null;
}

export const NO_LIMITS: RateLimits = Object.freeze({ rpm: null, tpm: null, concurrency: null });

/** Which limit refused a request. */
export type LimitName = 'rpm' | 'tpm' | 'concurrency';

/** The state of one bucket, for the rate-limit headers. */
export interface BucketState {
  readonly limit: number;
  /** Whole units left (never negative, even when the bucket is in debt). */
  readonly remaining: number;
  /** Milliseconds until the bucket is full again. */
  readonly resetMs: number;
}

/** What the limiter says about a request, with its buckets' state after the decision. */
export interface Admission {
  readonly ok: boolean;
  /** The limit that refused the request (the one with the longest wait); null when admitted. */
  readonly blocked: LimitName | null;
  /** Whole seconds until the blocking limit would admit the request (at least 1); 0 when admitted. */
  readonly retryAfterS: number;
  /** Present when rpm applies. */
  readonly requests: BucketState | null;
  /** Present when tpm applies. */
  readonly tokens: BucketState | null;
}

export interface RateLimiter {
  /**
   * Admits a request for `key` or refuses it. Admitted, it takes one request from the rpm bucket,
   * `inputTokens` from the tpm bucket and one concurrency slot, named `slot` (unique per request
   * and instance: a shared limiter tracks whose slots are still alive). Refused, it takes nothing.
   */
  admit(key: number, limits: RateLimits, inputTokens: number, slot: string): Promise<Admission>;
  /**
   * Ends an admitted request: frees its concurrency slot and settles its tokens, debiting
   * `usedTokens - inputTokens` (a credit when negative). Called once per admission, with the same
   * `limits` and `inputTokens`. Never rejects: a networked limiter logs its own failures, since
   * the request has already been served.
   */
  release(key: number, limits: RateLimits, inputTokens: number, usedTokens: number, slot: string): Promise<void>;
}

/** A bucket's state for the rate-limit headers, from its fractional level. */
export function bucketState(level: number, capacity: number): BucketState {
  return {
    limit: capacity,
    remaining: Math.max(0, Math.floor(level)),
    resetMs: Math.ceil(((capacity - level) * 60_000) / capacity),
  };
}
