import type { TokenUsage } from '../formats/wire.ts';
import { applyImagesUsage, emptyUsage } from './normalize.ts';
import type { UsageTap } from './tap.ts';

const KEYS = [Buffer.from('"b64_json":'), Buffer.from('"url":')];
const LONGEST = Math.max(...KEYS.map((k) => k.length));
const USAGE = Buffer.from('"usage"');
/** `usage` is the last field of an Images answer, after megabytes of base64: only the tail is kept. */
const TAIL = 64 * 1024;

/**
 * Reads an Images answer as it passes (issue #13; media.md §8.3): a body can be tens of megabytes
 * of base64, so it is never held whole. Images are counted by their `"b64_json":` and `"url":` keys
 * (inside a JSON string a quote is escaped, so those bytes only occur as keys), and `usage` is
 * parsed from the last 64 KB.
 */
export class ImagesUsageTap implements UsageTap {
  #images = 0;
  #size = 0;
  /** The last bytes before this chunk, for a key split across chunks. */
  #edge = Buffer.alloc(0);
  #tail: Buffer[] = [];
  #tailSize = 0;

  push(chunk: Buffer): void {
    this.#size += chunk.length;
    if (this.#edge.length > 0) {
      // Only matches that start in the edge and end in this chunk; the rest are counted below.
      const joined = Buffer.concat([this.#edge, chunk.subarray(0, LONGEST - 1)]);
      for (const key of KEYS) {
        for (let at = joined.indexOf(key); at !== -1 && at < this.#edge.length; at = joined.indexOf(key, at + 1)) {
          if (at + key.length > this.#edge.length) this.#images++;
        }
      }
    }
    for (const key of KEYS) for (let at = chunk.indexOf(key); at !== -1; at = chunk.indexOf(key, at + key.length)) this.#images++;
    // The last bytes seen, however small the chunks: a key can span several of them.
    this.#edge =
      chunk.length >= LONGEST - 1
        ? Buffer.from(chunk.subarray(chunk.length - (LONGEST - 1)))
        : Buffer.concat([this.#edge, chunk]).subarray(Math.max(0, this.#edge.length + chunk.length - (LONGEST - 1)));
    this.#tail.push(chunk);
    this.#tailSize += chunk.length;
    while (this.#tail.length > 1 && this.#tailSize - (this.#tail[0]?.length ?? 0) >= TAIL) this.#tailSize -= this.#tail.shift()?.length ?? 0;
  }

  /** A cut answer is unreadable: what passed is not charged as output (there is none to count). */
  outputEstimate(): number {
    return 0;
  }

  finish(): TokenUsage | undefined {
    if (this.#size === 0) return undefined;
    const usage = emptyUsage();
    usage.images = this.#images;
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
            applyImagesUsage(usage, JSON.parse(tail.toString('utf8', open, i + 1)));
          } catch {
            // not usage after all: the images are still counted
          }
          break;
        }
      }
    }
    return usage;
  }
}
