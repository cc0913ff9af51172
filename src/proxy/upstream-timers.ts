import type { ClientRequest, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Timeouts } from '../config/types.ts';
import { SYSTEM_TIMERS, type Timers } from '../util/clock.ts';

export type TimeoutKind = 'connect' | 'first_byte' | 'idle' | 'total';

/** What an upstream request or response is destroyed with when one of its timers fires. */
export class UpstreamTimeout extends Error {
  readonly kind: TimeoutKind;
  readonly ms: number;
  constructor(kind: TimeoutKind, ms: number) {
    super(`upstream ${kind.replace('_', ' ')} timeout after ${ms} ms`);
    this.name = 'UpstreamTimeout';
    this.kind = kind;
    this.ms = ms;
  }
}

/**
 * The four upstream timers of issue #5 on one node:http exchange, native and translated alike:
 * - connect: a new connection must be up within connect_ms (a pooled one is already up);
 * - first byte: the response headers must come within first_byte_ms of sending;
 * - idle: no gap between response body chunks longer than idle_ms (nginx's proxy_read_timeout
 *   model: between reads, not the whole response, so a 10-minute stream that keeps talking lives);
 * - total: only when configured.
 * A firing timer destroys the request or response with an UpstreamTimeout, which the caller
 * reads as the cause. Timers are refreshed, not re-created, per chunk.
 */
export class UpstreamTimers {
  readonly #timeouts: Timeouts;
  readonly #t: Timers;
  #request: ClientRequest | undefined;
  #response: IncomingMessage | undefined;
  #connect: unknown;
  #firstByte: unknown;
  #idle: unknown;
  #total: unknown;
  /** The timer that fired, if one did. */
  fired: UpstreamTimeout | undefined;

  /** `timers`: the system's, but for unit tests that drive time by hand. */
  constructor(timeouts: Timeouts, timers: Timers = SYSTEM_TIMERS) {
    this.#timeouts = timeouts;
    this.#t = timers;
  }

  /** Arms the connect, first-byte and total timers on a request that was just created. */
  watch(request: ClientRequest): void {
    this.#request = request;
    const { connectMs, firstByteMs, totalMs } = this.#timeouts;
    this.#firstByte = this.#t.set(() => this.#fire(new UpstreamTimeout('first_byte', firstByteMs)), firstByteMs);
    if (totalMs !== null) this.#total = this.#t.set(() => this.#fire(new UpstreamTimeout('total', totalMs)), totalMs);
    const onSocket = (socket: Socket): void => {
      if (!socket.connecting) return; // a pooled keep-alive connection
      this.#connect = this.#t.set(() => this.#fire(new UpstreamTimeout('connect', connectMs)), connectMs);
      socket.once('connect', () => this.#t.clear(this.#connect));
    };
    if (request.socket) onSocket(request.socket);
    else request.once('socket', onSocket);
    request.once('close', () => {
      this.#t.clear(this.#connect);
      this.#t.clear(this.#firstByte);
      if (!this.#response) this.#t.clear(this.#total);
    });
  }

  /**
   * The response headers came: the idle timer now runs between body chunks. Whoever reads the
   * body calls touch() per chunk (a 'data' listener here would switch an iterated body to flowing).
   */
  responded(response: IncomingMessage): void {
    this.#response = response;
    this.#t.clear(this.#firstByte);
    this.#t.clear(this.#connect);
    this.#armIdle();
    response.once('close', () => this.clear());
  }

  /** When the last body chunk came: a chunk only notes the time; the timer checks it when due. */
  #lastChunk = 0;

  #armIdle(): void {
    this.#lastChunk = this.#t.now();
    this.#idle = this.#t.set(this.#onIdle, this.#timeouts.idleMs);
  }

  readonly #onIdle = (): void => {
    const { idleMs } = this.#timeouts;
    const quiet = this.#t.now() - this.#lastChunk;
    if (quiet >= idleMs - 1) this.#fire(new UpstreamTimeout('idle', idleMs));
    else this.#idle = this.#t.set(this.#onIdle, idleMs - quiet);
  };

  /** A body chunk arrived (per chunk: a timestamp, not a timer refresh, which cost more). */
  touch(): void {
    this.#lastChunk = this.#t.now();
  }

  #held = false;

  /**
   * The gateway stopped reading because the client is slow (backpressure): that silence is ours,
   * not the upstream's, so the idle timer waits until reading resumes.
   */
  hold(): void {
    this.#held = true;
    this.#t.clear(this.#idle);
  }

  resume(): void {
    if (!this.#held) return;
    this.#held = false;
    // A cleared timer cannot be refreshed back to life: arm a new one.
    if (this.fired === undefined && this.#response && !this.#response.destroyed) this.#armIdle();
  }

  clear(): void {
    this.#t.clear(this.#connect);
    this.#t.clear(this.#firstByte);
    this.#t.clear(this.#idle);
    this.#t.clear(this.#total);
  }

  #fire(timeout: UpstreamTimeout): void {
    if (this.fired) return;
    this.fired = timeout;
    this.clear();
    if (this.#response) this.#response.destroy(timeout);
    else this.#request?.destroy(timeout);
  }
}
