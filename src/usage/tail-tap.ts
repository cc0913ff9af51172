import type { TokenUsage } from '../formats/wire.ts';
import { applyChatUsage, applyImagesUsage, emptyUsage } from './normalize.ts';
import type { UsageTap } from './tap.ts';
import { MarkerCounter } from '../util/marker-counter.ts';

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
  /** Image keys counted, or null where the answer has no images. */
  readonly #images: MarkerCounter | null;
  #size = 0;
  #tail: Buffer[] = [];
  #tailSize = 0;

  constructor(apply: (usage: TokenUsage, raw: unknown) => void, keys: readonly Buffer[]) {
    this.#apply = apply;
    this.#images = keys.length > 0 ? new MarkerCounter(keys) : null;
  }

  push(chunk: Buffer): void {
    this.#size += chunk.length;
    this.#images?.push(chunk);
    this.#tail.push(chunk);
    this.#tailSize += chunk.length;
    while (this.#tail.length > 1 && this.#tailSize - (this.#tail[0]?.length ?? 0) >= TAIL) this.#tailSize -= this.#tail.shift()?.length ?? 0;
  }

  /** A cut answer is unreadable, and its bytes are data, not output tokens: nothing is estimated. */
  outputEstimate(): number {
    return 0;
  }

  finish(): TokenUsage | undefined {
    if (this.#size === 0) return undefined;
    const usage = emptyUsage();
    if (this.#images) usage.images = this.#images.count;
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
    return found || this.#images ? usage : undefined;
  }
}

/** An Images answer: images counted, usage in the Images shape. */
export const imagesUsageTap = (): TailUsageTap => new TailUsageTap(applyImagesUsage, IMAGE_KEYS);
/** An embeddings answer: `usage.prompt_tokens`. */
export const embeddingsUsageTap = (): TailUsageTap => new TailUsageTap(applyChatUsage, []);
