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

  #warm: Promise<void> | undefined;
  #ready = false;

  /** True once the thread runs (it may still be loading). */
  get started(): boolean {
    return this.#worker !== undefined;
  }

  /** True once the thread has loaded the tokenizer and answered. */
  get ready(): boolean {
    return this.#ready;
  }

  /**
   * Starts the thread and has it load the tokenizer (about 0.8 s of CPU); resolves when it is
   * ready. If it fails, the next call tries again.
   */
  warm(): Promise<void> {
    this.#warm ??= this.count(['']).then(
      () => void (this.#ready = true),
      () => void (this.#warm = undefined),
    );
    return this.#warm;
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
      if (this.#worker === worker) {
        this.#worker = undefined;
        this.#ready = false;
      }
    };
    worker.on('error', fail);
    worker.on('exit', () => fail(new Error('the tokenizer worker stopped')));
    // Last: adding a 'message' listener refs the worker's port again, which would keep the
    // process alive after the gateway stopped.
    worker.unref();
    return worker;
  }
}
