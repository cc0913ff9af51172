import type { ServerResponse } from 'node:http';
import type { Surface } from '../errors.ts';
import { keepaliveFrame, SSE_HEADERS } from './encode.ts';

/**
 * Writes SSE frames to a client with backpressure: when the socket's buffer is full, `write`
 * waits for 'drain' (or the client leaving), so a slow reader never makes us buffer a whole stream.
 *
 * Frames written in the same turn of the event loop (all the events decoded from one upstream
 * network chunk) leave in one write: the response is corked on the first and uncorked by
 * setImmediate, after the microtasks that produce the rest. One syscall per event cost a tenth of
 * a translated stream's throughput (measured with --cpu-prof, issue #3).
 *
 * A stream that falls silent (a translated upstream thinking, whose pings conversion drops) gets
 * a keepalive after `keepaliveMs`, so idle intermediaries do not cut it (issue #5). The timer is
 * one per stream, re-armed lazily: a write only records the time.
 */
export class SseWriter {
  readonly #res: ServerResponse;
  readonly #keepalive: string;
  readonly #keepaliveMs: number;
  #lastWrite = 0;
  #timer: NodeJS.Timeout | undefined;
  #corked = false;
  readonly #uncork = (): void => {
    this.#corked = false;
    if (!this.#res.destroyed) this.#res.uncork();
  };

  readonly #onWait: ((waiting: boolean) => void) | undefined;

  /** `onWait` hears when a write starts and stops waiting on a slow client (the upstream idle timer pauses). */
  constructor(res: ServerResponse, surface: Surface, keepaliveMs: number, onWait?: (waiting: boolean) => void) {
    this.#res = res;
    this.#onWait = onWait;
    this.#keepalive = keepaliveFrame(surface);
    this.#keepaliveMs = keepaliveMs;
  }

  readonly #tick = (): void => {
    if (this.closed) return;
    const idle = performance.now() - this.#lastWrite;
    if (idle >= this.#keepaliveMs - 1) {
      this.#res.write(this.#keepalive);
      this.#lastWrite = performance.now();
      this.#timer = setTimeout(this.#tick, this.#keepaliveMs);
    } else {
      this.#timer = setTimeout(this.#tick, this.#keepaliveMs - idle);
    }
  };

  /** True once the client has gone away or the stream was ended. */
  get closed(): boolean {
    return this.#res.destroyed || this.#res.writableEnded;
  }

  /**
   * Sets the status and headers, unless keepalives already sent them (routing/stream-prelude.ts).
   * They leave with the first frame, written in the same turn by the caller: sent alone, they
   * cost a write of their own per stream (issue #6 profile).
   */
  start(): void {
    if (!this.#res.headersSent) this.#res.writeHead(200, SSE_HEADERS);
    this.#lastWrite = performance.now();
    this.#timer = setTimeout(this.#tick, this.#keepaliveMs);
    this.#res.once('close', () => clearTimeout(this.#timer));
  }

  async write(frame: string): Promise<void> {
    if (this.closed) return;
    this.#lastWrite = performance.now();
    if (!this.#corked) {
      this.#corked = true;
      this.#res.cork();
      setImmediate(this.#uncork);
    }
    // While corked, a full buffer still reports false; 'drain' follows the scheduled uncork.
    if (!this.#res.write(frame)) {
      this.#onWait?.(true);
      await drained(this.#res);
      this.#onWait?.(false);
    }
  }

  end(frame?: string): void {
    clearTimeout(this.#timer);
    if (this.closed) return;
    if (frame === undefined) this.#res.end();
    else this.#res.end(frame);
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
