/**
 * Counts occurrences of byte markers in a stream of chunks, a marker split across chunks (however
 * small they are) counted once, without joining the chunks: only the last few bytes are kept.
 * Used where a whole body is too large to hold (issue #13: images, embeddings, image streams).
 */
export class MarkerCounter {
  count = 0;
  readonly #markers: readonly Buffer[];
  readonly #keep: number;
  /** The last bytes before the current chunk. */
  #edge = Buffer.alloc(0);

  constructor(markers: readonly Buffer[]) {
    this.#markers = markers;
    this.#keep = Math.max(0, ...markers.map((m) => m.length - 1));
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    if (this.#edge.length > 0) {
      // Only matches that start in the edge and end in this chunk; the rest are counted below.
      const joined = Buffer.concat([this.#edge, chunk.subarray(0, this.#keep)]);
      for (const marker of this.#markers) {
        for (let at = joined.indexOf(marker); at !== -1 && at < this.#edge.length; at = joined.indexOf(marker, at + 1)) {
          if (at + marker.length > this.#edge.length) this.count++;
        }
      }
    }
    for (const marker of this.#markers) for (let at = chunk.indexOf(marker); at !== -1; at = chunk.indexOf(marker, at + marker.length)) this.count++;
    this.#edge =
      chunk.length >= this.#keep
        ? Buffer.from(chunk.subarray(chunk.length - this.#keep))
        : Buffer.concat([this.#edge, chunk]).subarray(Math.max(0, this.#edge.length + chunk.length - this.#keep));
  }
}
