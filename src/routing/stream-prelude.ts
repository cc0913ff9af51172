import type { ServerResponse } from 'node:http';
import type { Surface } from '../errors.ts';
import { keepaliveFrame, SSE_HEADERS } from '../sse/encode.ts';
import type { Timers } from '../util/clock.ts';
import { LISTED_TIMERS } from '../util/timer-lists.ts';

/**
 * Keepalives for a streaming client while no upstream byte has come yet (issue #5): a reasoning
 * model may think for minutes before its headers, retries wait out backoffs, and an idle
 * load balancer or proxy cuts a silent connection (PostHog/code#3092, reliability.md §2.2).
 *
 * How this meets failover: nothing is sent for the first interval, so a quick failure still gets
 * its real HTTP status and `retry-after`. After that the response is committed to 200 with SSE
 * headers and a keepalive every interval. Keepalives are the gateway's, not upstream content, so
 * retries and fallbacks go on behind them; but a final failure can then only be reported in-band
 * (`event: error` / `data: {"error":…}`), and the upstream's own response headers are not sent.
 *
 * Every stream request arms the first keepalive and nearly all clear it milliseconds later, when
 * the upstream answers: on the timer lists, as the upstream timers are (util/timer-lists.ts), not a
 * setTimeout and clearTimeout per request (issue #17, twenty-first session).
 */
export class StreamPrelude {
  readonly #res: ServerResponse;
  readonly #frame: string;
  readonly #intervalMs: number;
  readonly #onCommit: () => void;
  readonly #timers: Timers;
  #timer: unknown;
  #committed = false;
  #stopped = false;
  #sent = 0;

  /** `timers`: the process's timer lists, but for unit tests that drive time by hand. */
  constructor(res: ServerResponse, surface: Surface, intervalMs: number, onCommit: () => void, timers: Timers = LISTED_TIMERS) {
    this.#res = res;
    this.#timers = timers;
    this.#frame = keepaliveFrame(surface);
    this.#intervalMs = intervalMs;
    this.#onCommit = onCommit;
  }

  /** True once keepalives were sent: the status is 200 and the headers are gone. */
  get committed(): boolean {
    return this.#committed;
  }

  /** Keepalives sent so far. */
  get sent(): number {
    return this.#sent;
  }

  start(): void {
    if (this.#stopped || this.#timer !== undefined) return;
    this.#timer = this.#timers.set(this.#tick, this.#intervalMs);
  }

  /** The upstream's answer is about to be written: no keepalive may interleave with it. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#timers.clear(this.#timer);
    this.#timer = undefined;
  }

  readonly #tick = (): void => {
    const res = this.#res;
    if (this.#stopped || res.destroyed || res.writableEnded) return;
    if (!this.#committed) {
      this.#committed = true;
      this.#onCommit();
      res.writeHead(200, SSE_HEADERS);
    }
    res.write(this.#frame);
    this.#sent++;
    this.#timer = this.#timers.set(this.#tick, this.#intervalMs);
  };
}
