import { Worker } from 'node:worker_threads';

/**
 * One worker thread counting tokens for texts too long to count on the event loop (issue #4).
 * Batches are answered in arrival order. If the thread dies, what it held fails (the caller counts
 * those inline) and the next batch starts a new thread.
 */
export class TokenizerThread {
  #worker: Worker | undefined;
  readonly #pending = new Map<number, { resolve: (counts: number[]) => void; reject: (err: Error) => void }>();
  #next = 0;

  count(texts: readonly string[]): Promise<number[]> {
    const worker = (this.#worker ??= this.#start());
    return new Promise((resolve, reject) => {
      const id = this.#next++;
      this.#pending.set(id, { resolve, reject });
      worker.postMessage({ id, texts });
    });
  }

  /**
   * Starts the thread and has it load the tokenizer, in the background: the first long request
   * would otherwise wait about 400 ms for both.
   */
  warm(): void {
    this.count(['']).catch(() => undefined);
  }

  #start(): Worker {
    const worker = new Worker(new URL('./tokenizer-worker.mjs', import.meta.url));
    worker.on('message', ({ id, counts }: { id: number; counts: number[] }) => {
      this.#pending.get(id)?.resolve(counts);
      this.#pending.delete(id);
    });
    // A dead worker fails what it held, rather than leave those requests waiting forever.
    const fail = (err: Error): void => {
      for (const waiting of this.#pending.values()) waiting.reject(err);
      this.#pending.clear();
      if (this.#worker === worker) this.#worker = undefined;
    };
    worker.on('error', fail);
    worker.on('exit', () => fail(new Error('the tokenizer worker stopped')));
    // Last: adding a 'message' listener refs the worker's port again, which would keep the
    // process alive after the gateway stopped.
    worker.unref();
    return worker;
  }
}
