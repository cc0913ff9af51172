/**
 * The requests being served, each with the controller that aborts its upstream work: at the end
 * of the shutdown grace the gateway aborts them all with one reason (issue #5).
 */
export class InFlight {
  readonly #controllers = new Set<AbortController>();

  get size(): number {
    return this.#controllers.size;
  }

  /** Tracks a request until the returned function is called. */
  add(controller: AbortController): () => void {
    this.#controllers.add(controller);
    return () => this.#controllers.delete(controller);
  }

  abortAll(reason: Error): void {
    for (const controller of this.#controllers) controller.abort(reason);
  }
}
