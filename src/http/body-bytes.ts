/**
 * A request body as it arrived: the chunks the HTTP parser handed over, never joined into one
 * Buffer for the life of the request (issue #17). They are sent upstream as they are, and what
 * reads the body on the way (the checks, the estimate, a parse) reads it synchronously through
 * `view`, which joins a body of several chunks into one scratch Buffer reused by every request.
 *
 * Why not join them once per request, as before: each join was a new Buffer, memory outside V8's
 * heap, and V8 starts a full collection whenever that memory has grown 64 MB since the last one.
 * A 76 KB request brought about 150 KB of it (the parser's chunks and their join); at that rate
 * the trigger can come before a scavenge frees them, and then every collection is a full one: on
 * Node 24 the 76 KB request cost up to twice its CPU, depending on which came first
 * (bench/RESULTS.md, issue #17's eighth and ninth sessions). Without the join, half as much.
 */
export class BodyBytes {
  /** The bytes, in order; none empty unless the body is. Shared, never written to. */
  readonly chunks: readonly Buffer[];
  readonly length: number;

  constructor(chunks: readonly Buffer[], length = total(chunks)) {
    this.chunks = chunks.length === 0 ? [EMPTY] : chunks;
    this.length = length;
  }

  static of(bytes: Buffer): BodyBytes {
    return new BodyBytes([bytes], bytes.length);
  }

  /**
   * Bytes [start, end) to read now, before anything else runs: a slice of a chunk where they lie
   * in one, else the shared scratch Buffer, which the next view overwrites. Never kept, never
   * written, never passed to anything asynchronous (an upstream write, a promise).
   */
  view(start = 0, end = this.length): Buffer {
    let at = 0;
    for (const chunk of this.chunks) {
      if (start >= at && end <= at + chunk.length) return start === at && end - start === chunk.length ? chunk : chunk.subarray(start - at, end - at);
      at += chunk.length;
      if (at > start) break;
    }
    return joined(this.slice(start, end), end - start);
  }

  /** A copy of bytes [start, end) of its own, to keep. */
  copy(start: number, end: number): Buffer {
    return Buffer.from(this.view(start, end));
  }

  /** Whether bytes [start, end) are `other`, compared in place. */
  equals(start: number, end: number, other: Buffer): boolean {
    if (end - start !== other.length) return false;
    let at = 0;
    let done = 0; // bytes of `other` matched so far
    for (const chunk of this.chunks) {
      const from = Math.max(start, at);
      const to = Math.min(end, at + chunk.length);
      if (from < to) {
        if (chunk.compare(other, done, done + (to - from), from - at, to - at) !== 0) return false;
        done += to - from;
      }
      at += chunk.length;
      if (at >= end) break;
    }
    return done === other.length;
  }

  /** Bytes [start, end) as chunks of their own (slices, not copies): for an upstream write. */
  slice(start: number, end: number): Buffer[] {
    const out: Buffer[] = [];
    let at = 0;
    for (const chunk of this.chunks) {
      const from = Math.max(start, at);
      const to = Math.min(end, at + chunk.length);
      if (from < to) out.push(chunk.subarray(from - at, to - at));
      at += chunk.length;
      if (at >= end) break;
    }
    return out;
  }
}

const EMPTY = Buffer.alloc(0);
/**
 * Past this size a body is joined into a Buffer of its own, as before: the scratch stays at most
 * this large for the life of the process, and bodies this large are rare.
 */
const SCRATCH_MAX = 4 * 1024 * 1024;
let scratch = Buffer.allocUnsafe(0);

function joined(pieces: readonly Buffer[], length: number): Buffer {
  let into: Buffer;
  if (length > SCRATCH_MAX) into = Buffer.allocUnsafe(length);
  else {
    if (scratch.length < length) scratch = Buffer.allocUnsafe(Math.min(SCRATCH_MAX, Math.max(64 * 1024, 2 ** Math.ceil(Math.log2(length)))));
    into = scratch;
  }
  let written = 0;
  for (const piece of pieces) written += piece.copy(into, written);
  return into.subarray(0, length);
}

function total(chunks: readonly Buffer[]): number {
  let n = 0;
  for (const chunk of chunks) n += chunk.length;
  return n;
}
