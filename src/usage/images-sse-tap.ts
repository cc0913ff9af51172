import type { TokenUsage } from '../formats/wire.ts';
import { addUsage, applyImagesUsage, emptyUsage } from './normalize.ts';
import type { UsageTap } from './tap.ts';

const COMPLETED = Buffer.from('.completed"');
const BLANK = Buffer.from('\n\n');
const USAGE = Buffer.from('"usage":');
/** Bytes kept between chunks: enough for a split marker or a usage object in progress. */
const CARRY = 4096;

/**
 * Reads a streamed Images answer as it passes (issue #13; media.md §1.4): every event carries a
 * whole base64 image, so nothing is parsed but the small `usage` objects. Images are counted by
 * their `*.completed` events (partial images are free previews). Each completed event's usage is
 * added up: a stream of n images is charged every image's tokens.
 */
export class ImagesSseUsageTap implements UsageTap {
  #images = 0;
  readonly #sum = emptyUsage();
  #sawUsage = false;
  #carry = Buffer.alloc(0);
  /** A completed event has begun and not yet ended. */
  #pending = false;

  push(chunk: Buffer): void {
    const buf = this.#carry.length === 0 ? chunk : Buffer.concat([this.#carry, chunk]);
    const seenBefore = this.#carry.length;
    // An image counts once its completed event has ended (its blank line): a stream cut inside
    // that multi-megabyte event never delivered it (the SSE guard withholds unfinished events).
    if (this.#pending) {
      const end = buf.indexOf(BLANK, Math.max(0, seenBefore - 1));
      if (end !== -1) {
        this.#images++;
        this.#pending = false;
      }
    }
    // Markers that end inside the new bytes (those wholly in the carry were seen already).
    for (let at = buf.indexOf(COMPLETED); at !== -1; at = buf.indexOf(COMPLETED, at + 1)) {
      if (at + COMPLETED.length <= seenBefore) continue;
      if (buf.indexOf(BLANK, at) !== -1) this.#images++;
      else this.#pending = true;
    }
    let keepFrom = Math.max(0, buf.length - (COMPLETED.length - 1));
    for (let at = buf.indexOf(USAGE); at !== -1; at = buf.indexOf(USAGE, at + USAGE.length)) {
      const end = objectEnd(buf, at + USAGE.length);
      if (end === NOT_AN_OBJECT) continue; // `"usage": null`
      if (end === -1) {
        keepFrom = Math.min(keepFrom, at); // the object continues in the next chunk
        break;
      }
      if (at + USAGE.length <= seenBefore && end <= seenBefore) continue; // read before
      this.#add(buf.toString('utf8', at + USAGE.length, end));
    }
    this.#carry = buf.length - keepFrom > CARRY ? Buffer.alloc(0) : Buffer.from(buf.subarray(keepFrom));
  }

  #add(json: string): void {
    try {
      const one = emptyUsage();
      applyImagesUsage(one, JSON.parse(json));
      this.#sawUsage = true;
      addUsage(this.#sum, one);
    } catch {
      // not a usage object after all
    }
  }

  outputEstimate(): number {
    return 0;
  }

  finish(): TokenUsage | undefined {
    if (this.#images === 0 && !this.#sawUsage) return undefined;
    return { ...this.#sum, images: this.#images };
  }
}

const NOT_AN_OBJECT = -2;

/** The index just past the JSON object starting at `from` (after spaces); -1 if it is not all here yet. */
function objectEnd(buf: Buffer, from: number): number {
  let at = from;
  while (buf[at] === 0x20) at++;
  if (at >= buf.length) return -1;
  if (buf[at] !== 0x7b) return NOT_AN_OBJECT;
  let depth = 0;
  for (let i = at; i < buf.length; i++) {
    if (buf[i] === 0x7b) depth++;
    else if (buf[i] === 0x7d && --depth === 0) return i + 1;
  }
  return -1;
}
