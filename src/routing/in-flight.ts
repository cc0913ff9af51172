import type { Cancellation } from './cancellation.ts';

/**
 * The requests being served, each with the controller that aborts its upstream work: at the end
 * of the shutdown grace the gateway aborts them all with one reason (issue #5).
 */
export class InFlight {
  readonly #controllers = new Set<Cancellation>();
  /** Set once everything was aborted: a request reaching dispatch later is aborted at once. */
  #reason: Error | undefined;

  get size(): number {
    return this.#controllers.size;
  }

  /** Tracks a request until the returned function is called. */
  add(controller: Cancellation): () => void {
    if (this.#reason) controller.abort(this.#reason);
    this.#controllers.add(controller);
    return () => this.#controllers.delete(controller);
  }

  abortAll(reason: Error): void {
    this.#reason = reason;
    for (const controller of this.#controllers) controller.abort(reason);
  }
}
