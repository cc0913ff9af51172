import type { Cancellation } from './cancellation.ts';

/** A request's place among those in flight, until InFlight.remove. */
export interface Tracked {
  readonly controller: Cancellation;
  /** @internal the list's links */
  prev: Tracked | undefined;
  /** @internal */
  next: Tracked | undefined;
}

/**
 * The requests being served, each with the controller that aborts its upstream work: at the end
 * of the shutdown grace the gateway aborts them all with one reason (issue #5).
 *
 * A linked list, not a Set: adding each request's new controller to a Set hashed it and the
 * table rehashed as entries came and went, with a closure to remove it; about 0.9 µs a request
 * in a cpu-profile of the server (issue #17, thirty-fourth session). Here a node is made and
 * linked in and out.
 */
export class InFlight {
  #head: Tracked | undefined;
  #size = 0;
  /** Set once everything was aborted: a request reaching dispatch later is aborted at once. */
  #reason: Error | undefined;

  get size(): number {
    return this.#size;
  }

  /** Tracks a request until `remove` is given what this returns. */
  add(controller: Cancellation): Tracked {
    if (this.#reason) controller.abort(this.#reason);
    const head = this.#head;
    const tracked: Tracked = { controller, prev: undefined, next: head };
    if (head !== undefined) head.prev = tracked;
    this.#head = tracked;
    this.#size++;
    return tracked;
  }

  /** Stops tracking; a second call for the same request does nothing. */
  remove(tracked: Tracked): void {
    const { prev, next } = tracked;
    if (prev === undefined && this.#head !== tracked) return; // already removed
    if (prev === undefined) this.#head = next;
    else prev.next = next;
    if (next !== undefined) next.prev = prev;
    tracked.prev = undefined;
    tracked.next = undefined;
    this.#size--;
  }

  abortAll(reason: Error): void {
    this.#reason = reason;
    // Aborting runs handlers, which may end requests and remove them: walk a snapshot.
    const controllers: Cancellation[] = [];
    for (let at = this.#head; at !== undefined; at = at.next) controllers.push(at.controller);
    for (const controller of controllers) controller.abort(reason);
  }
}
