import { open, unlink, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Bytes kept in memory before the spool moves to a temporary file: a form that sends `model`
 * before its file (the Vercel AI SDK, or a client that follows Together's advice) spools a few
 * hundred bytes; one that sends the file first (the openai SDK's `{file, model}`) spools the file,
 * and must not hold it in memory (media.md §8.2, step 3).
 */
const MEMORY_BYTES = 64 * 1024;
const READ_BYTES = 256 * 1024;

/** A byte range to replace while replaying (the `model` field's value). */
export interface Splice {
  readonly start: number;
  readonly end: number;
  readonly bytes: Buffer;
}

/**
 * The part of a request body read before it was routed, kept to be replayed upstream or read by
 * an in-process plugin: in memory while small, then in a temporary file that is unlinked as soon
 * as it is open, so nothing is left behind if the process dies.
 */
export class Spool {
  readonly #chunks: Buffer[] = [];
  #size = 0;
  #file: FileHandle | undefined;
  readonly #name: string;
  #disposed = false;

  constructor(name: string) {
    this.#name = name;
  }

  get size(): number {
    return this.#size;
  }

  async append(chunk: Buffer): Promise<void> {
    this.#live();
    if (this.#file === undefined && this.#size + chunk.length <= MEMORY_BYTES) {
      this.#chunks.push(chunk);
      this.#size += chunk.length;
      return;
    }
    if (this.#file === undefined) {
      const path = join(tmpdir(), `junction-upload-${this.#name}`);
      this.#file = await open(path, 'wx+', 0o600);
      await unlink(path);
      const held = Buffer.concat(this.#chunks);
      this.#chunks.length = 0;
      await this.#file.write(held, 0, held.length, 0);
    }
    await this.#file.write(chunk, 0, chunk.length, this.#size);
    this.#size += chunk.length;
  }

  /** The bytes in [start, end). */
  async read(start: number, end: number): Promise<Buffer> {
    this.#live();
    if (this.#file === undefined) return Buffer.concat(this.#chunks).subarray(start, end);
    const out = Buffer.alloc(end - start);
    await this.#file.read(out, 0, out.length, start);
    return out;
  }

  /** Everything spooled, in order, with `splice` applied. */
  async *replay(splice: Splice | undefined): AsyncGenerator<Buffer> {
    if (splice === undefined) {
      yield* this.#range(0, this.#size);
      return;
    }
    yield* this.#range(0, splice.start);
    yield splice.bytes;
    yield* this.#range(splice.end, this.#size);
  }

  async *#range(start: number, end: number): AsyncGenerator<Buffer> {
    if (this.#file === undefined) {
      let offset = 0;
      for (const chunk of this.#chunks) {
        const from = Math.max(start - offset, 0);
        const to = Math.min(end - offset, chunk.length);
        if (from < to) yield chunk.subarray(from, to);
        offset += chunk.length;
      }
      return;
    }
    for (let at = start; at < end; at += READ_BYTES) yield await this.read(at, Math.min(at + READ_BYTES, end));
  }

  /** A plugin holding a file's `bytes()` past its request gets an error, not empty bytes. */
  #live(): void {
    if (this.#disposed) throw new Error('the upload was released when its request ended');
  }

  async dispose(): Promise<void> {
    this.#disposed = true;
    const file = this.#file;
    this.#file = undefined;
    this.#chunks.length = 0;
    await file?.close().catch(() => undefined);
  }
}
