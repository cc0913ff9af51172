import type { ServerResponse } from 'node:http';
import type { Surface } from '../errors.ts';
import { SYSTEM_TIMERS, type Timers } from '../util/clock.ts';
import { keepaliveFrame, SSE_HEADERS } from './encode.ts';

/**
 * Writes SSE frames to a client with backpressure: when the socket's buffer is full, `write`
 * waits for 'drain' (or the client leaving), so a slow reader never makes us buffer a whole stream.
 *
 * Frames written in the same turn of the event loop leave in one write (see `write`).
 *
 * A stream that falls silent (a translated upstream thinking, whose pings conversion drops) gets
 * a keepalive after `keepaliveMs`, so idle intermediaries do not cut it (issue #5). The timer is
 * one per stream, re-armed lazily: a write only records the time. While the socket waits to drain,
 * the timer looks again a whole interval later: a client that reads nothing is not idle, and
 * looking every millisecond spun the timer for as long as the client stalled (issue #17 review).
 */
export class SseWriter {
  readonly #res: ServerResponse;
  readonly #keepalive: string | (() => string);
  readonly #keepaliveMs: number;
  #lastWrite = 0;
  /** The socket's, read once: through the response's and the socket's getters at every frame, it cost more than the check. */
  readonly #highWaterMark: number;
  readonly #timers: Timers;
  #timer: unknown;
  /** Frames written this turn, sent as one string when the turn ends. */
  #pending = '';
  #scheduled = false;
  readonly #flushTurn = (): void => {
    this.#scheduled = false;
    this.#flush();
  };
  readonly #flush = (): void => {
    if (this.#pending === '' || this.closed) return;
    const text = this.#pending;
    this.#pending = '';
    // The time of the write that reaches the socket, not of each frame: one clock read a turn
    // rather than one an event (issue #17). A frame's flush comes later in the same turn of the
    // loop; a tick in between (a frame written by another timer) at worst adds a keepalive beside it.
    this.#lastWrite = this.#timers.now();
    this.#res.write(text);
  };

  readonly #onWait: ((waiting: boolean) => void) | undefined;

  /**
   * `onWait` hears when a write starts and stops waiting on a slow client (the upstream idle timer
   * pauses). `keepalive` makes the frame when the format's keepalive is an event of the stream (a
   * Responses stream's, which carries a sequence number). `timers`: the system's, but for unit
   * tests that drive time by hand.
   */
  constructor(res: ServerResponse, surface: Surface, keepaliveMs: number, onWait?: (waiting: boolean) => void, keepalive?: () => string, timers: Timers = SYSTEM_TIMERS) {
    this.#res = res;
    this.#timers = timers;
    this.#highWaterMark = res.writableHighWaterMark;
    this.#onWait = onWait;
    this.#keepalive = keepalive ?? keepaliveFrame(surface);
    this.#keepaliveMs = keepaliveMs;
  }

  readonly #tick = (): void => {
    if (this.closed) return;
    // A socket waiting to drain is not idle, and a keepalive behind it would only queue: none then,
    // so a keepalive made now never overtakes events made before it. Looked at again a whole
    // interval on: the rest of an interval already over is nothing, which re-armed every 1 ms.
    let next = this.#keepaliveMs;
    if (!this.#res.writableNeedDrain) {
      const idle = this.#timers.now() - this.#lastWrite;
      if (idle >= this.#keepaliveMs - 1) void this.write(typeof this.#keepalive === 'string' ? this.#keepalive : this.#keepalive());
      else next = this.#keepaliveMs - idle;
    }
    this.#timer = this.#timers.set(this.#tick, next);
  };

  /** True once the client has gone away or the stream was ended. */
  get closed(): boolean {
    return this.#res.destroyed || this.#res.writableEnded;
  }

  /**
   * Sets the status and headers, unless keepalives already sent them (routing/stream-prelude.ts).
   * They leave with the first frames, written in the same turn by the caller: sent alone, they
   * cost a write of their own per stream (issue #6 profile).
   */
  start(): void {
    if (!this.#res.headersSent) this.#res.writeHead(200, SSE_HEADERS);
    this.#lastWrite = this.#timers.now();
    this.#timer = this.#timers.set(this.#tick, this.#keepaliveMs);
    this.#res.once('close', () => this.#timers.clear(this.#timer));
  }

  /**
   * Queues a frame. Frames written in one turn of the event loop (all the events decoded from one
   * upstream network chunk) leave as one string in one write, at the turn's end: written one by
   * one, each was encoded and handed to the socket apart, a tenth of a translated stream's cost
   * (issue #3), and corking them still encoded each (issue #6). Resolves at once, or, when the
   * client's buffer is full, once it drains: a slow reader never makes us buffer a whole stream.
   * Returns nothing when there is nothing to wait for: a caller awaits only backpressure, not a
   * promise per event (issue #17).
   */
  write(frame: string): Promise<void> | undefined {
    if (this.closed) return undefined;
    this.#pending += frame;
    // A producer with no I/O between events (an in-process plugin, one huge upstream chunk) would
    // fill `#pending` without bound in one turn: past the socket's high-water mark it goes now, so
    // the socket's backpressure below applies (review of issue #6).
    if (this.#pending.length >= this.#highWaterMark) this.#flush();
    if (!this.#scheduled && this.#pending !== '') {
      this.#scheduled = true;
      setImmediate(this.#flushTurn);
    }
    // The socket's own flag, not the last write's answer: a 'drain' that already came is not waited for.
    return this.#res.writableNeedDrain ? this.#waitForDrain() : undefined;
  }

  async #waitForDrain(): Promise<void> {
    this.#onWait?.(true);
    await drained(this.#res);
    this.#onWait?.(false);
  }

  end(frame?: string): void {
    this.#timers.clear(this.#timer);
    if (this.closed) return;
    const text = this.#pending + (frame ?? '');
    this.#pending = '';
    if (text === '') this.#res.end();
    else this.#res.end(text);
  }
}

/** Resolves when a full response buffer drains, or the response closes (whichever comes first). */
export function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
