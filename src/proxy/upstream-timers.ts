import type { ClientRequest, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Timeouts } from '../config/types.ts';
import type { Timers } from '../util/clock.ts';
import { LISTED_TIMERS } from '../util/timer-lists.ts';

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
 * reads as the cause.
 *
 * The four are deadlines kept as numbers, watched by one system timer at a time (issue #17: three
 * timers set and cleared per attempt were a visible share of the hot path). The timer is armed
 * for the earliest deadline; when it fires it checks which one has passed, and if none has (a
 * chunk moved the idle deadline on) it is armed again for the earliest. One that has passed is
 * checked once more after the loop's next poll for I/O before it fires (#onDue). A deadline that
 * moves later never re-arms it; one that moves earlier does.
 */
export class UpstreamTimers {
  readonly #timeouts: Timeouts;
  readonly #t: Timers;
  #request: ClientRequest | undefined;
  #response: IncomingMessage | undefined;
  /** Deadlines on the timers' clock; Infinity when not running. */
  #connectDue = Infinity;
  #firstByteDue = Infinity;
  #totalDue = Infinity;
  /** When the last body chunk came: a chunk only notes the time (issue #5: refreshing a timer per chunk cost more). */
  #lastChunk = 0;
  /** The idle deadline runs once the answer has come, except while the client holds reading back. */
  #idling = false;
  #timer: unknown;
  /** When the armed timer is due; Infinity when none is armed. */
  #armedFor = Infinity;
  /** The timer that fired, if one did. */
  fired: UpstreamTimeout | undefined;

  /** `timers`: the process's timer lists (util/timer-lists.ts), but for unit tests that drive time by hand. */
  constructor(timeouts: Timeouts, timers: Timers = LISTED_TIMERS) {
    this.#timeouts = timeouts;
    this.#t = timers;
  }

  /** Starts the connect, first-byte and total deadlines on a request that was just created. */
  watch(request: ClientRequest): void {
    this.#request = request;
    const { connectMs, firstByteMs, totalMs } = this.#timeouts;
    const now = this.#t.now();
    this.#firstByteDue = now + firstByteMs;
    if (totalMs !== null) this.#totalDue = now + totalMs;
    const onSocket = (socket: Socket): void => {
      if (!socket.connecting) return; // a pooled keep-alive connection
      this.#connectDue = this.#t.now() + connectMs;
      this.#schedule();
      socket.once('connect', () => (this.#connectDue = Infinity));
    };
    // on(), not once(): these events come once in a request's life, and once() wraps each listener
    // in a bound function, three per request here (issue #17).
    if (request.socket) onSocket(request.socket);
    else request.on('socket', onSocket);
    request.on('close', () => {
      // No answer will come: nothing left to time.
      if (!this.#response) this.clear();
    });
    // Armed no later than the idle deadline of an answer that began now: when the answer comes,
    // its idle deadline is later still, so the timer set here serves the whole request. Armed for
    // the first-byte deadline alone, it was re-armed for the idle one on every answer, a second
    // timer per request (issue #17). A first byte slower than idle_ms costs one early look, which
    // arms again for the real deadline (#onDue).
    this.#schedule(now + this.#timeouts.idleMs);
  }

  /**
   * The response headers came: the idle deadline now runs between body chunks. Whoever reads the
   * body calls touch() per chunk (a 'data' listener here would switch an iterated body to flowing).
   */
  responded(response: IncomingMessage): void {
    this.#response = response;
    this.#connectDue = Infinity;
    this.#firstByteDue = Infinity;
    this.#lastChunk = this.#t.now();
    this.#idling = true;
    this.#schedule();
    response.on('close', () => this.clear());
  }

  /** A body chunk arrived (per chunk: a timestamp, not a timer refresh, which cost more). */
  touch(): void {
    this.#lastChunk = this.#t.now();
  }

  /**
   * The gateway stopped reading because the client is slow (backpressure): that silence is ours,
   * not the upstream's, so the idle deadline waits until reading resumes.
   */
  hold(): void {
    this.#idling = false;
  }

  resume(): void {
    if (this.#idling || this.fired !== undefined || !this.#response || this.#response.destroyed) return;
    this.#lastChunk = this.#t.now();
    this.#idling = true;
    this.#schedule();
  }

  clear(): void {
    this.#connectDue = this.#firstByteDue = this.#totalDue = Infinity;
    this.#idling = false;
    this.#disarm();
  }

  #idleDue(): number {
    return this.#idling ? this.#lastChunk + this.#timeouts.idleMs : Infinity;
  }

  /** Arms the timer for the earliest deadline (or `early`, a time to look again), unless it is armed sooner. */
  #schedule(early = Infinity): void {
    const due = Math.min(this.#connectDue, this.#firstByteDue, this.#totalDue, this.#idleDue(), early);
    if (due >= this.#armedFor) return; // the armed timer fires first and looks again
    this.#disarm();
    if (due === Infinity) return;
    this.#armedFor = due;
    this.#timer = this.#t.set(this.#onDue, Math.max(0, due - this.#t.now()));
  }

  #disarm(): void {
    if (this.#armedFor === Infinity) return;
    this.#t.clear(this.#timer);
    this.#armedFor = Infinity;
  }

  readonly #onDue = (): void => {
    this.#armedFor = Infinity;
    if (this.#passed() === undefined) this.#schedule();
    // A deadline has passed by the clock, but the loop may have been stalled (a long GC pause, a
    // starved CPU, another request's synchronous work) with the chunk or the answer that meets it
    // already waiting in the socket: after a stall, timers run before the poll phase that would
    // read it. So it is judged again once that phase has run, and a stalled gateway does not blame
    // a healthy upstream (issue #17: a Responses stream cut by its idle timeout at 1,536 of 4,000
    // events in a loaded CI run; an 800 ms stall in a poll- or check-phase callback did it every time).
    else this.#t.afterIo(this.#confirm);
  };

  readonly #confirm = (): void => {
    const passed = this.#passed();
    if (passed === undefined) this.#schedule();
    else this.#fire(passed);
  };

  /** The timeout whose deadline has passed, if one has. */
  #passed(): TimeoutKind | undefined {
    const now = this.#t.now();
    // Timer callbacks may run a little before their due time by this clock: 1 ms of slack, as before.
    if (now >= this.#connectDue - 1) return 'connect';
    if (now >= this.#firstByteDue - 1) return 'first_byte';
    if (now >= this.#totalDue - 1) return 'total';
    if (now >= this.#idleDue() - 1) return 'idle';
    return undefined;
  }

  #fire(kind: TimeoutKind): void {
    if (this.fired) return;
    const { connectMs, firstByteMs, idleMs, totalMs } = this.#timeouts;
    const ms = kind === 'connect' ? connectMs : kind === 'first_byte' ? firstByteMs : kind === 'idle' ? idleMs : (totalMs ?? 0);
    const timeout = new UpstreamTimeout(kind, ms);
    this.fired = timeout;
    this.clear();
    if (this.#response) this.#response.destroy(timeout);
    else this.#request?.destroy(timeout);
  }
}
