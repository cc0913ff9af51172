import type { TokenUsage } from '../formats/wire.ts';
import { applyChatUsage, applyImagesUsage, emptyUsage } from './normalize.ts';
import type { UsageTap } from './tap.ts';

/**
 * An image entry's key with a string value, compact or with one space: a key whose value is null
 * (compatible servers send every field, `"url":null` beside `"b64_json":"…"`) is not an image.
 */
const IMAGE_KEYS = ['"b64_json":"', '"b64_json": "', '"url":"', '"url": "'].map((k) => Buffer.from(k));
const USAGE = Buffer.from('"usage"');
/** `usage` is the last field of these answers, after megabytes of data: only the tail is kept. */
const TAIL = 64 * 1024;

/**
 * Reads a large JSON answer as it passes without holding it whole (issue #13; media.md §8.3):
 * `usage` is parsed from the last 64 KB and, for Images, images are counted by their keys (inside
 * a JSON string a quote is escaped, so those bytes occur only as keys). Embeddings answers run to
 * tens of megabytes as well, beyond what the generic tap keeps.
 */
export class TailUsageTap implements UsageTap {
  readonly #apply: (usage: TokenUsage, raw: unknown) => void;
  readonly #keys: readonly Buffer[];
  readonly #longest: number;
  #images = 0;
  #size = 0;
  /** The last bytes before this chunk, for a key split across chunks. */
  #edge = Buffer.alloc(0);
  #tail: Buffer[] = [];
  #tailSize = 0;

  constructor(apply: (usage: TokenUsage, raw: unknown) => void, keys: readonly Buffer[]) {
    this.#apply = apply;
    this.#keys = keys;
    this.#longest = Math.max(0, ...keys.map((k) => k.length));
  }

  push(chunk: Buffer): void {
    this.#size += chunk.length;
    if (this.#keys.length > 0) this.#count(chunk);
    this.#tail.push(chunk);
    this.#tailSize += chunk.length;
    while (this.#tail.length > 1 && this.#tailSize - (this.#tail[0]?.length ?? 0) >= TAIL) this.#tailSize -= this.#tail.shift()?.length ?? 0;
  }

  #count(chunk: Buffer): void {
    const keep = this.#longest - 1;
    if (this.#edge.length > 0) {
      // Only matches that start in the edge and end in this chunk; the rest are counted below.
      const joined = Buffer.concat([this.#edge, chunk.subarray(0, keep)]);
      for (const key of this.#keys) {
        for (let at = joined.indexOf(key); at !== -1 && at < this.#edge.length; at = joined.indexOf(key, at + 1)) {
          if (at + key.length > this.#edge.length) this.#images++;
        }
      }
    }
    for (const key of this.#keys) for (let at = chunk.indexOf(key); at !== -1; at = chunk.indexOf(key, at + key.length)) this.#images++;
    // The last bytes seen, however small the chunks: a key can span several of them.
    this.#edge =
      chunk.length >= keep
        ? Buffer.from(chunk.subarray(chunk.length - keep))
        : Buffer.concat([this.#edge, chunk]).subarray(Math.max(0, this.#edge.length + chunk.length - keep));
  }

  /** A cut answer is unreadable, and its bytes are data, not output tokens: nothing is estimated. */
  outputEstimate(): number {
    return 0;
  }

  finish(): TokenUsage | undefined {
    if (this.#size === 0) return undefined;
    const usage = emptyUsage();
    if (this.#keys.length > 0) usage.images = this.#images;
    let found = false;
    const tail = Buffer.concat(this.#tail);
    const at = tail.lastIndexOf(USAGE);
    const open = at === -1 ? -1 : tail.indexOf('{', at);
    if (open !== -1) {
      // Usage holds numbers and nested objects of numbers: its braces balance without strings in the way.
      let depth = 0;
      for (let i = open; i < tail.length; i++) {
        if (tail[i] === 0x7b) depth++;
        else if (tail[i] === 0x7d && --depth === 0) {
          try {
            this.#apply(usage, JSON.parse(tail.toString('utf8', open, i + 1)));
            found = true;
          } catch {
            // not usage after all
          }
          break;
        }
      }
    }
    return found || this.#keys.length > 0 ? usage : undefined;
  }
}

/** An Images answer: images counted, usage in the Images shape. */
export const imagesUsageTap = (): TailUsageTap => new TailUsageTap(applyImagesUsage, IMAGE_KEYS);
/** An embeddings answer: `usage.prompt_tokens`. */
export const embeddingsUsageTap = (): TailUsageTap => new TailUsageTap(applyChatUsage, []);
