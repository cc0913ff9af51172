import { Worker } from 'node:worker_threads';
import type { Json } from '../formats/convert/json.ts';
import { chatRequestText, messagesRequestText } from './request-text.ts';

/**
 * The one input-token estimator (issue #4): it answers count_tokens where no upstream can count,
 * sizes every hold, and stands in for usage a cut stream never reported. The request's text goes
 * through a real tokenizer (gpt-tokenizer, o200k_base), images and PDFs at fixed rates (README,
 * "count_tokens"). Up to INLINE_LIMIT characters are counted inline (about 0.3 ms for 20 KB on
 * this machine kind, 0.03 ms for 500 bytes); longer texts go to a worker thread, since 150 KB
 * takes about 6 ms, which must not stall every other request's stream.
 */
const INLINE_LIMIT = 20_000;

type CountTokens = (text: string) => number;
let inline: Promise<CountTokens> | undefined;
let worker: TokenizerWorker | undefined;

export function countInputTokens(format: 'messages' | 'chat', request: Json): Promise<number> {
  const { text, fixed } = format === 'messages' ? messagesRequestText(request) : chatRequestText(request);
  return countText(text, fixed);
}

/** Loads the tokenizer's tables (about 200 ms) so the first request does not wait for them. */
export async function loadTokenizer(): Promise<void> {
  await inlineCounter();
}

const inlineCounter = (): Promise<CountTokens> => (inline ??= import('gpt-tokenizer/encoding/o200k_base').then((m) => m.countTokens));

async function countText(text: string, fixed: number): Promise<number> {
  if (text.length <= INLINE_LIMIT) return fixed + (await inlineCounter())(text);
  worker ??= new TokenizerWorker();
  try {
    return fixed + (await worker.count(text));
  } catch {
    // The worker died (it is restarted on the next call): count this one inline rather than fail
    // the request; a stall once beats a 500.
    return fixed + (await inlineCounter())(text);
  }
}

/** Stops the worker thread, if one was started. */
export async function stopTokenizer(): Promise<void> {
  await worker?.stop();
  worker = undefined;
}

/** One worker thread, started on first use, counting one text at a time in arrival order. */
class TokenizerWorker {
  readonly #worker = new Worker(new URL('./tokenizer-worker.mjs', import.meta.url));
  readonly #pending = new Map<number, { resolve: (tokens: number) => void; reject: (err: Error) => void }>();
  #next = 0;

  constructor() {
    this.#worker.on('message', ({ id, tokens }: { id: number; tokens: number }) => {
      this.#pending.get(id)?.resolve(tokens);
      this.#pending.delete(id);
    });
    // A dead worker fails what it held, rather than leave those requests waiting forever.
    const fail = (err: Error): void => {
      for (const waiting of this.#pending.values()) waiting.reject(err);
      this.#pending.clear();
      if (worker === this) worker = undefined;
    };
    this.#worker.on('error', fail);
    this.#worker.on('exit', () => fail(new Error('the tokenizer worker stopped')));
    // Last: adding a 'message' listener refs the worker's port again, which would keep the
    // process alive after the gateway stopped.
    this.#worker.unref();
  }

  count(text: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const id = this.#next++;
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ id, text });
    });
  }

  async stop(): Promise<void> {
    await this.#worker.terminate();
  }
}
