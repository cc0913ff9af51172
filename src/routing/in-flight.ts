import { LinkedList, type Linked } from '../util/linked-list.ts';
import type { Cancellation } from './cancellation.ts';

/** A request's place among those in flight, until InFlight.remove. */
export interface Tracked extends Linked<Tracked> {
  readonly controller: Cancellation;
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
  readonly #list = new LinkedList<Tracked>();
  /** Set once everything was aborted: a request reaching dispatch later is aborted at once. */
  #reason: Error | undefined;

  get size(): number {
    return this.#list.size;
  }

  /** Tracks a request until `remove` is given what this returns. */
  add(controller: Cancellation): Tracked {
    if (this.#reason) controller.abort(this.#reason);
    return this.#list.add({ controller, prev: undefined, next: undefined });
  }

  /** Stops tracking; a second call for the same request does nothing. */
  remove(tracked: Tracked): void {
    this.#list.remove(tracked);
  }

  abortAll(reason: Error): void {
    this.#reason = reason;
    // Aborting runs handlers, which may end requests and remove them: walk a snapshot.
    const controllers: Cancellation[] = [];
    for (let at = this.#list.head; at !== undefined; at = at.next) controllers.push(at.controller);
    for (const controller of controllers) controller.abort(reason);
  }
}
