import type { Cancellable, Clock, Timers } from '../../src/util/clock.ts';

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

/**
 * Timers driven by hand (issue #12): time moves only in `advance`, which runs every timer that
 * falls due on the way, in order, including those set meanwhile. A test of "80 ms of silence"
 * then means exactly that, however busy the machine is. What a timer leaves to run after the next
 * poll for I/O (`afterIo`) runs right after it: nothing arrives while time moves by hand, unless
 * the test says what does (`advance`'s `io`).
 */
export class ManualTimers implements Timers {
  #now = 0;
  #next = 0;
  readonly #due = new Map<number, { at: number; fire: () => void }>();
  readonly #afterIo: (() => void)[] = [];

  now(): number {
    return this.#now;
  }

  set(fire: () => void, ms: number): unknown {
    const id = this.#next++;
    this.#due.set(id, { at: this.#now + Math.max(1, ms), fire });
    return id;
  }

  clear(handle: unknown): void {
    if (typeof handle === 'number') this.#due.delete(handle);
  }

  /** Timers set and neither fired nor cleared. */
  get pending(): number {
    return this.#due.size;
  }

  afterIo(fire: () => void): void {
    this.#afterIo.push(fire);
  }

  /** `io`: what the poll phase after a timer that fired brings (a chunk, an answer), before what it left for after I/O runs. */
  advance(ms: number, io?: () => void): void {
    const until = this.#now + ms;
    for (;;) {
      let soonest: [number, { at: number; fire: () => void }] | undefined;
      for (const entry of this.#due) if (entry[1].at <= until && (!soonest || entry[1].at < soonest[1].at)) soonest = entry;
      if (!soonest) break;
      this.#due.delete(soonest[0]);
      this.#now = soonest[1].at;
      soonest[1].fire();
      if (this.#afterIo.length > 0) {
        io?.();
        for (const fire of this.#afterIo.splice(0)) fire();
      }
    }
    this.#now = until;
  }
}
