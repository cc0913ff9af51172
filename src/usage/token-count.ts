import { Worker } from 'node:worker_threads';
import { asArray, asObject, asString, type Json } from '../formats/convert/json.ts';

/**
 * count_tokens where no upstream can count: the request's text through a real tokenizer
 * (gpt-tokenizer, o200k_base), images and PDFs at fixed rates (README, "count_tokens"). Texts
 * above INLINE_LIMIT are counted on a worker thread: 150 KB takes about 6 ms here, which must not
 * stall every other request's stream (issue #4).
 */
const INLINE_LIMIT = 20_000;
const TOKENS_PER_IMAGE = 1600;
const TOKENS_PER_PDF_BYTE = 0.2;

type CountTokens = (text: string) => number;
let inline: Promise<CountTokens> | undefined;
let worker: TokenizerWorker | undefined;

export async function countMessagesTokens(request: Json): Promise<number> {
  const { text, fixed } = collect(request);
  if (text.length <= INLINE_LIMIT) {
    inline ??= import('gpt-tokenizer/encoding/o200k_base').then((m) => m.countTokens);
    return fixed + (await inline)(text);
  }
  worker ??= new TokenizerWorker();
  return fixed + (await worker.count(text));
}

/** Stops the worker thread, if one was started. */
export async function stopTokenizer(): Promise<void> {
  await worker?.stop();
  worker = undefined;
}

/** The text a model reads (system, messages, tool calls and results, tool schemas) and fixed-rate media. */
function collect(request: Json): { text: string; fixed: number } {
  const parts: string[] = [];
  let fixed = 0;
  const block = (raw: unknown): void => {
    if (typeof raw === 'string') {
      parts.push(raw);
      return;
    }
    const b = asObject(raw);
    switch (b['type']) {
      case 'text':
        parts.push(asString(b['text']) ?? '');
        break;
      case 'thinking':
        parts.push(asString(b['thinking']) ?? '');
        break;
      case 'image':
        fixed += TOKENS_PER_IMAGE;
        break;
      case 'document': {
        const source = asObject(b['source']);
        if (source['type'] === 'base64') fixed += Math.ceil((asString(source['data']) ?? '').length * 0.75 * TOKENS_PER_PDF_BYTE);
        else parts.push(asString(source['data']) ?? '');
        break;
      }
      case 'tool_use':
        parts.push(asString(b['name']) ?? '', JSON.stringify(b['input'] ?? {}));
        break;
      case 'tool_result':
        if (typeof b['content'] === 'string') parts.push(b['content']);
        else asArray(b['content']).forEach(block);
        break;
      default:
        parts.push(JSON.stringify(b));
    }
  };
  const system = request['system'];
  if (typeof system === 'string') parts.push(system);
  else asArray(system).forEach(block);
  for (const message of asArray(request['messages'])) {
    const content = asObject(message)['content'];
    if (typeof content === 'string') parts.push(content);
    else asArray(content).forEach(block);
  }
  for (const tool of asArray(request['tools'])) parts.push(JSON.stringify(tool));
  return { text: parts.join('\n'), fixed };
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
