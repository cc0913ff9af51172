import { SYSTEM_CLOCK, type Clock } from '../util/clock.ts';

/**
 * A circuit breaker per route (issue #5; Envoy's outlier detection, reliability.md §1.1). After
 * `failures` consecutive failures the route is skipped for `cooldownMs`; then one request is let
 * through as a probe (half-open). Its success closes the breaker; its failure opens it again.
 */
export class CircuitBreaker {
  readonly #failures: number;
  readonly #cooldownMs: number;
  readonly #clock: Clock;
  #consecutive = 0;
  /** While open: when the next probe may go. 0 when closed. */
  #openUntil = 0;
  #probing = false;

  constructor(failures: number, cooldownMs: number, clock: Clock = SYSTEM_CLOCK) {
    this.#failures = failures;
    this.#cooldownMs = cooldownMs;
    this.#clock = clock;
  }

  get state(): 'closed' | 'open' | 'half-open' {
    if (this.#openUntil === 0) return 'closed';
    return this.#probing || this.#clock.now() < this.#openUntil ? 'open' : 'half-open';
  }

  /** May a request use the route now? In the half-open state this takes the single probe slot. */
  tryPass(now = this.#clock.now()): boolean {
    if (this.#openUntil === 0) return true;
    if (this.#probing || now < this.#openUntil) return false;
    this.#probing = true;
    return true;
  }

  /** Milliseconds until the route takes a probe again (0 when it would now). */
  msUntilRetry(now = this.#clock.now()): number {
    return this.#openUntil === 0 ? 0 : Math.max(0, this.#openUntil - now);
  }

  success(): void {
    this.#consecutive = 0;
    this.#openUntil = 0;
    this.#probing = false;
  }

  failure(now = this.#clock.now()): void {
    this.#consecutive++;
    if (this.#probing || this.#consecutive >= this.#failures) {
      this.#openUntil = now + this.#cooldownMs;
      this.#probing = false;
    }
  }

  /** A request that took the probe slot ended without judging the route (the client left, a 400). */
  release(): void {
    this.#probing = false;
  }
}

/** The breakers of one gateway, one per provider and upstream model. */
export class Breakers {
  /**
   * By provider, then upstream model: both names are the catalogue's own strings, whose hashes V8
   * keeps, where one key joining them was a new string to hash on every request (issue #17).
   */
  readonly #byProvider = new Map<string, Map<string, CircuitBreaker>>();
  readonly #failures: number;
  readonly #cooldownMs: number;
  readonly #clock: Clock;

  constructor(failures: number, cooldownMs: number, clock: Clock = SYSTEM_CLOCK) {
    this.#failures = failures;
    this.#cooldownMs = cooldownMs;
    this.#clock = clock;
  }

  /** Breakers not closed, by provider: what the metrics show (issue #16). */
  openByProvider(): Map<string, number> {
    const open = new Map<string, number>();
    for (const [provider, models] of this.#byProvider) {
      let count = 0;
      for (const breaker of models.values()) count += breaker.state === 'closed' ? 0 : 1;
      open.set(provider, count);
    }
    return open;
  }

  /** Each route that has had a request, and its breaker's state: the dashboard's health page (issue #16). */
  routes(): { provider: string; upstreamModel: string; state: CircuitBreaker['state']; retryInMs: number }[] {
    return [...this.#byProvider].flatMap(([provider, models]) =>
      [...models].map(([upstreamModel, breaker]) => ({ provider, upstreamModel, state: breaker.state, retryInMs: breaker.msUntilRetry() })),
    );
  }

  for(provider: string, upstreamModel: string): CircuitBreaker {
    let models = this.#byProvider.get(provider);
    if (models === undefined) this.#byProvider.set(provider, (models = new Map()));
    let breaker = models.get(upstreamModel);
    if (breaker === undefined) {
      breaker = new CircuitBreaker(this.#failures, this.#cooldownMs, this.#clock);
      models.set(upstreamModel, breaker);
    }
    return breaker;
  }
}
