import { Transform, type TransformCallback } from 'node:stream';
import zlib from 'node:zlib';
import { Decompress } from 'fzstd';

/** The content codings a request body may arrive in (RFC 9110 §8.4.1), lower-case. */
export const REQUEST_ENCODINGS = ['gzip', 'x-gzip', 'deflate', 'br', 'zstd'] as const;

/**
 * The largest zstd window accepted: 2^23 (8 MB), the window zstd's own encoder uses up to level 19
 * and the limit it recommends decoders enforce (RFC 8878 §3.1.1.1.2). A frame that asks for more
 * is refused rather than allocated.
 */
const ZSTD_WINDOW_LOG_MAX = 23;

/**
 * A decoder for a request body's `content-encoding`, or null for none (`identity`), or undefined
 * for a coding Junction does not read (415). Codex CLI compresses its request bodies with zstd
 * (issue #14; responses-api.md §9). Node's zlib reads zstd from 22.15; on Node 20 the pure-JS
 * `fzstd` does, so no native module has to be built for each Node version.
 */
export function bodyDecoder(encoding: string): Transform | null | undefined {
  switch (encoding) {
    case '':
    case 'identity':
      return null;
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    case 'zstd':
      return nativeZstd?.() ?? new ZstdDecoder();
    default:
      return undefined;
  }
}

type ZlibWithZstd = typeof zlib & {
  createZstdDecompress?: (options: { params: Record<number, number> }) => Transform;
  constants: typeof zlib.constants & { ZSTD_d_windowLogMax?: number };
};
const z = zlib as ZlibWithZstd;
const nativeZstd =
  z.createZstdDecompress && z.constants.ZSTD_d_windowLogMax !== undefined
    ? (): Transform => (z.createZstdDecompress as NonNullable<ZlibWithZstd['createZstdDecompress']>)({ params: { [z.constants.ZSTD_d_windowLogMax as number]: ZSTD_WINDOW_LOG_MAX } })
    : undefined;

const ZSTD_MAGIC = 0xfd2fb528;

/**
 * fzstd's streaming decoder as a Transform. The first frame's window is checked before fzstd
 * allocates it (fzstd accepts windows up to 2 GB); output is bounded by the body limit the reader
 * counts, so a later frame's window is reserved but never filled past it.
 */
class ZstdDecoder extends Transform {
  readonly #decoder = new Decompress((chunk) => {
    if (chunk.length > 0) this.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
  });
  #checked = false;
  #head = Buffer.alloc(0);

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    try {
      if (!this.#checked) {
        this.#head = Buffer.concat([this.#head, chunk]);
        if (this.#head.length < 6) return done();
        this.#checked = true;
        checkFrameWindow(this.#head);
        chunk = this.#head;
        this.#head = Buffer.alloc(0);
      }
      this.#decoder.push(chunk);
      done();
    } catch (err) {
      done(err instanceof Error ? err : new Error(String(err)));
    }
  }

  override _flush(done: TransformCallback): void {
    try {
      if (!this.#checked && this.#head.length > 0) checkFrameWindow(this.#head);
      this.#decoder.push(this.#checked ? new Uint8Array(0) : this.#head, true);
      done();
    } catch (err) {
      done(err instanceof Error ? err : new Error(String(err)));
    }
  }
}

/** A zstd frame header's window (RFC 8878 §3.1.1.1.2), refused above 2^ZSTD_WINDOW_LOG_MAX. */
function checkFrameWindow(head: Buffer): void {
  if (head.length < 6 || head.readUInt32LE(0) !== ZSTD_MAGIC) return; // fzstd reports what it cannot read
  const descriptor = head[4] ?? 0;
  if ((descriptor >> 5) & 1) return; // single segment: the window is the content size, bounded by the body limit
  const windowLog = 10 + ((head[5] ?? 0) >> 3);
  if (windowLog > ZSTD_WINDOW_LOG_MAX) throw new Error(`a zstd window of 2^${windowLog} bytes is larger than the 2^${ZSTD_WINDOW_LOG_MAX} accepted`);
}
