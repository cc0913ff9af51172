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
/** All text fields together, and the number of parts: OpenAI's forms have a few dozen at most. */
export const MAX_FIELDS_BYTES = 2 * 1024 * 1024;
export const MAX_PARTS = 256;
/** What a preamble or an epilogue may hold: anything else could hide a form from the scanner. */
const BLANK = /^[\r\n\t ]*$/;

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
 * (a preamble and an epilogue may only be blank: what a parser ignores must not hide a form).
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
  #fieldBytes = 0;

  constructor(boundary: string) {
    this.#delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  }

  /** The closing delimiter has been read: every part is whole. */
  get ended(): boolean {
    return this.#state === 'end';
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
          // An epilogue is ignored by every parser, so it must say nothing: a second form after the
          // closing delimiter would reach a lenient upstream parser unchecked (review of #13).
          if (!BLANK.test(buf.toString('latin1', at))) throw new FormFault('there is data after the closing boundary');
          return;
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
            at += 2;
            break;
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
          if (this.parts.length >= MAX_PARTS) throw new FormFault(`the form has more than ${MAX_PARTS} parts`);
          if (headers.filename === undefined && !headers.name.endsWith('[]') && this.parts.some((p) => p.name === headers.name && p.filename === undefined)) {
            // Which of two values counts differs between parsers: neither may be the one checked.
            throw new FormFault(`field "${headers.name}" is sent more than once`);
          }
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
    if (to <= from) return;
    if (part === undefined) {
      if (!BLANK.test(buf.toString('latin1', from, to))) throw new FormFault('there is data before the first boundary');
      return;
    }
    part.size += to - from;
    if (part.filename !== undefined) {
      if (part.head.length < HEAD_BYTES) part.head = Buffer.concat([part.head, buf.subarray(from, Math.min(to, from + HEAD_BYTES - part.head.length))]);
      return;
    }
    if (part.size > MAX_FIELD_BYTES) throw new FormFault(`form field "${part.name}" exceeds ${MAX_FIELD_BYTES} bytes`);
    this.#fieldBytes += to - from;
    if (this.#fieldBytes > MAX_FIELDS_BYTES) throw new FormFault(`the form's text fields exceed ${MAX_FIELDS_BYTES} bytes together`);
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
