import { FormFault } from './form-fault.ts';
import { parsePartHeaders, type PartHeaders } from './part-headers.ts';

/** One part of a form, as far as it has been read. Offsets are absolute in the request body. */
export interface FormPart extends PartHeaders {
  /** Where the part's content starts and ends (`end` is set once the part is over). */
  readonly start: number;
  end: number | undefined;
  size: number;
  /** A file's first bytes, for sniffing its format (an image's magic, a WAV header). */
  head: Buffer;
}

/** How many of a file's first bytes are kept: enough for a WAV header's chunks before `data`. */
export const HEAD_BYTES = 4096;
/** Part headers longer than this are refused (busboy's default is 80 KB for all parts together). */
const MAX_HEADER_BYTES = 16 * 1024;
/** A text field longer than this is refused: busboy's `fieldSize` default (media.md §8.2). */
export const MAX_FIELD_BYTES = 1024 * 1024;

const CRLF = Buffer.from('\r\n');
const HEADERS_END = Buffer.from('\r\n\r\n');
const DASH = 0x2d;
const CR = 0x0d;

type State = 'body' | 'delimiter' | 'headers' | 'end';

/**
 * A streaming multipart/form-data scanner (RFC 7578, RFC 2046 §5.1.1). It is fed the body's
 * chunks as they arrive and records the parts it finds: their headers, offsets and sizes, the
 * values of text fields, the first bytes of files. It never copies file content: it only looks for
 * the delimiter with Buffer#indexOf, so the bytes can be passed on untouched (issue #13).
 *
 * The body is read as if it began with CRLF, so the first delimiter is found like the others
 * (the preamble before it is ignored, as RFC 2046 asks).
 */
export class FormScanner {
  readonly parts: FormPart[] = [];
  /** Text fields by name, in order; a repeated name (`include[]`) has several values. */
  readonly fields = new Map<string, string[]>();
  readonly #delimiter: Buffer;
  #state: State = 'body';
  #carry: Buffer | null = CRLF;
  /** Absolute offset of the next byte pushed. */
  #offset = 0;
  #current: FormPart | undefined;
  #fieldChunks: Buffer[] = [];

  constructor(boundary: string) {
    this.#delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  }

  /** The closing delimiter has been read: every part is whole. */
  get ended(): boolean {
    return this.#state === 'end';
  }

  /** Bytes read so far. */
  get offset(): number {
    return this.#offset;
  }

  /** Reads one chunk of the body; throws a FormFault when the form is malformed. */
  push(chunk: Buffer): void {
    const base = this.#offset - (this.#carry?.length ?? 0);
    const buf = this.#carry === null ? chunk : Buffer.concat([this.#carry, chunk]);
    this.#carry = null;
    this.#offset += chunk.length;
    let at = 0;
    while (at < buf.length) {
      switch (this.#state) {
        case 'end':
          return; // the epilogue is ignored
        case 'body': {
          const hit = buf.indexOf(this.#delimiter, at);
          if (hit === -1) {
            const keep = partialDelimiterAt(buf, at, this.#delimiter);
            this.#content(buf, at, buf.length - keep);
            if (keep > 0) this.#carry = Buffer.from(buf.subarray(buf.length - keep));
            return;
          }
          this.#content(buf, at, hit);
          this.#endPart(base + hit);
          at = hit + this.#delimiter.length;
          this.#state = 'delimiter';
          break;
        }
        case 'delimiter': {
          if (buf.length - at < 2) {
            this.#carry = Buffer.from(buf.subarray(at));
            return;
          }
          if (buf[at] === DASH && buf[at + 1] === DASH) {
            this.#state = 'end';
            return;
          }
          if (buf[at] !== CR || buf[at + 1] !== 0x0a) throw new FormFault('a multipart delimiter is not followed by CRLF');
          at += 2;
          this.#state = 'headers';
          break;
        }
        case 'headers': {
          const hit = buf.indexOf(HEADERS_END, at);
          if (hit === -1) {
            if (buf.length - at > MAX_HEADER_BYTES) throw new FormFault(`a part's headers exceed ${MAX_HEADER_BYTES} bytes`);
            this.#carry = Buffer.from(buf.subarray(at));
            return;
          }
          const headers = parsePartHeaders(buf.toString('latin1', at, hit));
          at = hit + HEADERS_END.length;
          this.#current = { ...headers, start: base + at, end: undefined, size: 0, head: Buffer.alloc(0) };
          this.parts.push(this.#current);
          this.#state = 'body';
          break;
        }
      }
    }
  }

  /** The body ended: a form without its closing delimiter was cut short. */
  finish(): void {
    if (this.#state !== 'end') throw new FormFault('the multipart body ends before its closing boundary');
  }

  #content(buf: Buffer, from: number, to: number): void {
    const part = this.#current;
    if (part === undefined || to <= from) return; // the preamble, or nothing
    part.size += to - from;
    if (part.filename !== undefined) {
      if (part.head.length < HEAD_BYTES) part.head = Buffer.concat([part.head, buf.subarray(from, Math.min(to, from + HEAD_BYTES - part.head.length))]);
      return;
    }
    if (part.size > MAX_FIELD_BYTES) throw new FormFault(`form field "${part.name}" exceeds ${MAX_FIELD_BYTES} bytes`);
    this.#fieldChunks.push(Buffer.from(buf.subarray(from, to)));
  }

  #endPart(end: number): void {
    const part = this.#current;
    if (part === undefined) return;
    part.end = end;
    this.#current = undefined;
    if (part.filename !== undefined) return;
    const value = Buffer.concat(this.#fieldChunks).toString('utf8');
    this.#fieldChunks = [];
    const values = this.fields.get(part.name);
    if (values) values.push(value);
    else this.fields.set(part.name, [value]);
  }
}

/** How many bytes at the end of `buf` (from `at`) could be the start of a delimiter split across chunks. */
function partialDelimiterAt(buf: Buffer, at: number, delimiter: Buffer): number {
  for (let p = Math.max(at, buf.length - delimiter.length + 1); p < buf.length; p++) {
    p = buf.indexOf(CR, p);
    if (p === -1) return 0;
    if (buf.compare(delimiter, 0, buf.length - p, p, buf.length) === 0) return buf.length - p;
  }
  return 0;
}
