/**
 * A request's cancellation: the client left, or the shutdown grace ended (issue #5). Lighter than
 * an AbortController on the native hot path, which needs only a callback (measured: the
 * controller and its EventTarget listeners cost ~10 µs per request); a real AbortSignal is made
 * only for a plugin that reads one (translated routes abort node:http by hand, issue #17).
 */
/** An object told of the abort by a method: no closure per listener (the native path, issue #17). */
export interface AbortListener {
  aborted(reason: Error): void;
}
type Handler = ((reason: Error) => void) | AbortListener;

export class Cancellation {
  #reason: Error | undefined;
  #handlers: Handler[] | undefined;
  #controller: AbortController | undefined;

  get aborted(): boolean {
    return this.#reason !== undefined;
  }

  get reason(): Error | undefined {
    return this.#reason;
  }

  abort(reason: Error): void {
    if (this.#reason !== undefined) return;
    this.#reason = reason;
    this.#controller?.abort(reason);
    const handlers = this.#handlers;
    this.#handlers = undefined;
    if (handlers === undefined) return;
    for (const handler of handlers) {
      if (typeof handler === 'function') handler(reason);
      else handler.aborted(reason);
    }
  }

  /** Runs `handler` once on abort (at once if already aborted); returns what removes it. */
  onAbort(handler: (reason: Error) => void): () => void {
    if (this.#reason !== undefined) {
      handler(this.#reason);
      return noop;
    }
    (this.#handlers ??= []).push(handler);
    return () => this.#remove(handler);
  }

  /** Tells `listener` once on abort (at once if already aborted), until `unlisten`. */
  listen(listener: AbortListener): void {
    if (this.#reason !== undefined) listener.aborted(this.#reason);
    else (this.#handlers ??= []).push(listener);
  }

  unlisten(listener: AbortListener): void {
    this.#remove(listener);
  }

  #remove(handler: Handler): void {
    const at = this.#handlers?.indexOf(handler) ?? -1;
    if (at !== -1) this.#handlers?.splice(at, 1);
  }

  /** An AbortSignal that follows this cancellation, made on first use. */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#reason !== undefined) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }
}

const noop = (): void => undefined;
