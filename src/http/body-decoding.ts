import type { Transform } from 'node:stream';
import zlib from 'node:zlib';

/**
 * The largest zstd window accepted: 2^23 (8 MB), the window zstd's own encoder uses up to level 19
 * and the limit it recommends decoders enforce (RFC 8878 §3.1.1.1.2). A frame that asks for more
 * is refused rather than allocated.
 */
const ZSTD_WINDOW_LOG_MAX = 23;

/**
 * A decoder for a request body's `content-encoding`, or null for none (`identity`), or undefined
 * for a coding Junction does not read (415). Codex CLI compresses its request bodies with zstd
 * (issue #14; responses-api.md §9). Node's zlib reads zstd from 22.15, streaming, with its window
 * bounded. On Node 20 zstd is a 415: the pure-JS decoder tried first (fzstd) decodes a whole chunk
 * at once with no bound on its output or its windows, so a few kilobytes could block the event loop
 * for seconds or take gigabytes (review of issue #14); Node 20 is past its end of life.
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
      return nativeZstd?.();
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

/** Whether this Node reads zstd request bodies (22.15 and later). */
export const ZSTD_SUPPORTED = nativeZstd !== undefined;
