import { bucketState, type Admission, type LimitName, type RateLimiter, type RateLimits } from './limiter.ts';

/** One minute: rpm and tpm buckets refill their whole capacity over this long. */
const MINUTE_MS = 60_000;
/** How often idle keys are looked for; their state is dropped once it says nothing a new one would not. */
const SWEEP_MS = 60_000;
/** A refused concurrency slot frees when some request ends, which cannot be known: ask again in a second. */
const CONCURRENCY_RETRY_MS = 1_000;

/** Buckets of one key. Levels are fractional: the buckets refill continuously. */
interface KeyState {
  requests: number;
  tokens: number;
  inFlight: number;
  /** Clock time of the last refill. */
  at: number;
  /** The capacities the levels were last computed for; a changed limit is picked up at the next refill. */
  rpm: number | null;
  tpm: number | null;
}

export interface MemoryRateLimiterOptions {
  /** Monotonic milliseconds; injectable for tests. */
  readonly now?: () => number;
}

/**
 * Token buckets in this process's memory (issue #5), the way Anthropic describes its own limits:
 * a bucket of capacity rpm (or tpm) refilled continuously at rpm/60 per second, so a burst of up to
 * the whole minute's allowance is admitted, then one request per 60/rpm seconds. Levels are
 * computed lazily from the elapsed time: nothing runs between requests. State is per process; a
 * gateway run as several processes shares limits through redis-limiter.ts.
 */
export class MemoryRateLimiter implements RateLimiter {
  readonly #now: () => number;
  readonly #keys = new Map<number, KeyState>();
  #sweptAt: number;

  constructor(options: MemoryRateLimiterOptions = {}) {
    this.#now = options.now ?? (() => performance.now());
    this.#sweptAt = this.#now();
  }

  /** Keys with state held: for tests of the pruning. */
  get size(): number {
    return this.#keys.size;
  }

  async admit(key: number, limits: RateLimits, inputTokens: number): Promise<Admission> {
    const now = this.#now();
    if (now - this.#sweptAt >= SWEEP_MS) this.#sweep(now);
    let state = this.#keys.get(key);
    if (state === undefined) {
      // A new key starts with full buckets.
      state = { requests: limits.rpm ?? 0, tokens: limits.tpm ?? 0, inFlight: 0, at: now, rpm: limits.rpm, tpm: limits.tpm };
      this.#keys.set(key, state);
    } else {
      refill(state, limits, now);
    }

    // Every limit is checked so retry-after covers the longest wait: retrying when only the first
    // blocking limit has cleared would be refused again.
    let blocked: LimitName | null = null;
    let waitMs = 0;
    if (limits.rpm !== null && state.requests < 1) {
      blocked = 'rpm';
      waitMs = ((1 - state.requests) * MINUTE_MS) / limits.rpm;
    }
    if (limits.tpm !== null) {
      // A prompt larger than the whole bucket waits only for a full bucket, or it could never run.
      // A bucket in debt admits nothing until it is back to zero (needed is never negative).
      const needed = Math.max(0, Math.min(inputTokens, limits.tpm));
      if (state.tokens < needed) {
        const wait = ((needed - state.tokens) * MINUTE_MS) / limits.tpm;
        if (wait > waitMs) [blocked, waitMs] = ['tpm', wait];
      }
    }
    if (limits.concurrency !== null && state.inFlight >= limits.concurrency && CONCURRENCY_RETRY_MS > waitMs) {
      [blocked, waitMs] = ['concurrency', CONCURRENCY_RETRY_MS];
    }

    if (blocked === null) {
      if (limits.rpm !== null) state.requests -= 1;
      // Debited whole, even past zero: the bucket's debt delays the key's next requests.
      if (limits.tpm !== null) state.tokens -= inputTokens;
      // Counted whatever the limits: the sweep must never drop a key with a request in flight,
      // or that request's tpm settlement would be lost.
      state.inFlight += 1;
    }
    return {
      ok: blocked === null,
      blocked,
      retryAfterS: blocked === null ? 0 : Math.max(1, Math.ceil(waitMs / 1000)),
      requests: limits.rpm === null ? null : bucketState(state.requests, limits.rpm),
      tokens: limits.tpm === null ? null : bucketState(state.tokens, limits.tpm),
    };
  }

  async release(key: number, limits: RateLimits, inputTokens: number, usedTokens: number): Promise<void> {
    const state = this.#keys.get(key);
    // Never pruned while a request is in flight; gone only if it held nothing to give back.
    if (state === undefined) return;
    if (state.inFlight > 0) state.inFlight -= 1;
    if (limits.tpm !== null) {
      refill(state, limits, this.#now());
      // The estimate was debited at admission; settle the difference. A credit cannot overfill.
      state.tokens = Math.min(limits.tpm, state.tokens - (usedTokens - inputTokens));
    }
  }

  /** Drops keys whose buckets have refilled and hold no request: a fresh state would be the same. */
  #sweep(now: number): void {
    this.#sweptAt = now;
    for (const [key, state] of this.#keys) {
      if (state.inFlight === 0 && isFull(state.requests, state.rpm, now - state.at) && isFull(state.tokens, state.tpm, now - state.at)) {
        this.#keys.delete(key);
      }
    }
  }
}

function refill(state: KeyState, limits: RateLimits, now: number): void {
  const elapsed = Math.max(0, now - state.at);
  state.at = now;
  state.requests = refilled(state.requests, state.rpm, limits.rpm, elapsed);
  state.rpm = limits.rpm;
  state.tokens = refilled(state.tokens, state.tpm, limits.tpm, elapsed);
  state.tpm = limits.tpm;
}

function refilled(level: number, was: number | null, capacity: number | null, elapsed: number): number {
  if (capacity === null) return 0;
  // A limit that was just set starts full; one that shrank keeps no more than its new capacity.
  if (was === null) return capacity;
  return Math.min(capacity, Math.min(level, capacity) + (elapsed * capacity) / MINUTE_MS);
}

function isFull(level: number, capacity: number | null, elapsed: number): boolean {
  return capacity === null || level + (elapsed * capacity) / MINUTE_MS >= capacity;
}
