/**
 * Time as the gateway's deliberate waits see it: retry back-offs, `retry-after`, circuit-breaker
 * cool-downs. The system clock in production. Tests inject one whose sleeps resolve at once and
 * move its time on, so that a `retry-after: 7` costs nothing and the wait asked for can be asserted
 * exactly (issue #12: `npm test` spent minutes waiting on real timers). Upstream timeouts stay on
 * real timers: they race real sockets.
 */
export interface Clock {
  /** Milliseconds on a monotonic scale. */
  now(): number;
  /** Resolves after `ms`, or at once when `cancel` aborts. */
  sleep(ms: number, cancel?: Cancellable): Promise<void>;
}

/** What a sleep or a translated upstream request can be cut short by (routing/cancellation.ts). */
export interface Cancellable {
  readonly aborted: boolean;
  onAbort(handler: () => void): () => void;
}

export const SYSTEM_CLOCK: Clock = {
  now: () => performance.now(),
  sleep: (ms, cancel) =>
    new Promise((resolve) => {
      if (cancel?.aborted) {
        resolve();
        return;
      }
      const timer = setTimeout(() => {
        stop?.();
        resolve();
      }, ms);
      const stop = cancel?.onAbort(() => {
        clearTimeout(timer);
        resolve();
      });
    }),
};

/**
 * One-shot timers and the time they run on: the upstream timeouts' (proxy/upstream-timers.ts), the
 * stream prelude's keepalives (routing/stream-prelude.ts) and a stream's later keepalives
 * (sse/writer.ts). In the gateway, the system's: kept in lists by duration (util/timer-lists.ts)
 * for the first two, whose durations are fixed, and SYSTEM_TIMERS below for the writer's, whose
 * vary. They race real sockets; unit tests drive them by hand, so that "80 ms of silence" is exact
 * whatever else the machine is doing (issue #12).
 */
export interface Timers {
  now(): number;
  set(fire: () => void, ms: number): unknown;
  clear(handle: unknown): void;
  /**
   * Runs `fire` once the event loop has next looked for I/O (setImmediate): a timer that finds its
   * deadline passed may be looking before the poll phase that reads what would have met it.
   */
  afterIo(fire: () => void): void;
}

/**
 * The system's own timers, ref'd, for a timer whose duration varies from one arming to the next
 * (sse/writer.ts re-arms for the rest of an interval): timer lists group timers by duration.
 */
export const SYSTEM_TIMERS: Timers = {
  now: () => performance.now(),
  set: (fire, ms) => setTimeout(fire, ms),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout | undefined),
  afterIo: (fire) => void setImmediate(fire),
};
