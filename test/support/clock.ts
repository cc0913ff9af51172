import type { Cancellable, Clock } from '../../src/util/clock.ts';

/**
 * A clock for tests (issue #12). Its time stands still unless moved: a sleep records what was
 * asked, moves the time on by it and resolves on the next turn of the event loop, so a gateway's
 * retry waits cost nothing and can be asserted exactly; `advance` moves it for breaker cool-downs.
 * Upstream timeouts are not on it (they race real sockets); the test config keeps those short.
 */
export class TestClock implements Clock {
  /** Every sleep asked for, in ms, in order. */
  readonly sleeps: number[] = [];
  /** Any start will do; not 0, which a breaker reads as "never opened". */
  #now = 1_000_000;

  now(): number {
    return this.#now;
  }

  sleep(ms: number, cancel?: Cancellable): Promise<void> {
    this.sleeps.push(ms);
    if (!cancel?.aborted) this.#now += ms;
    return new Promise((resolve) => setImmediate(resolve));
  }

  advance(ms: number): void {
    this.#now += ms;
  }

  /** Forgets the sleeps recorded so far (between tests sharing a gateway). */
  reset(): void {
    this.sleeps.length = 0;
  }
}
