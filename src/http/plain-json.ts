/**
 * A JSON object of the plain kind a usage value is (`{"prompt_tokens":12,"completion_tokens":9,…}`
 * and its nested details), or an event that carries one (`message_start`, `message_delta`, a Chat
 * stream's usage chunk), read from its bytes without JSON.parse: undefined for anything else, and
 * the caller parses it as before. In the server, a whole answer's usage value cost about 4 µs of a
 * small request's CPU in JSON.parse, which takes 0.3 µs on it in a loop: the largest piece of
 * Junction's own code in a cpu-profile against the floor (issue #17, thirty-fourth session).
 *
 * Plain: objects and arrays, keys of printable ASCII without escapes, integers of up to 15 digits,
 * `true`, `false`, `null`, and strings of printable ASCII without escapes, separated by JSON's four
 * whitespace bytes. Fractions, exponents, escapes, non-ASCII and a `__proto__` key are left to
 * JSON.parse, and so is anything nested deeper than MAX_DEPTH. What this returns equals
 * JSON.parse's result, key order included (property-tested in test/http/plain-json.test.ts); what
 * JSON.parse would refuse, it refuses.
 */
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
/** Digits a double holds exactly whatever they are (2^53 has 16). */
const MAX_DIGITS = 15;
/** Deeper than any usage value; a deeper object goes to JSON.parse. */
const MAX_DEPTH = 8;
const NOT_PLAIN = Symbol('not plain');
type Plain = Record<string, unknown>;

export function plainObjectOf(buf: Buffer, start: number, end: number): Plain | undefined {
  const reader = new PlainReader(buf, end);
  reader.at = reader.skipSpace(start);
  const value = reader.object(0);
  if (value === NOT_PLAIN || reader.skipSpace(reader.at) !== end) return undefined;
  return value;
}

class PlainReader {
  at = 0;
  constructor(
    readonly buf: Buffer,
    readonly end: number,
  ) {}

  skipSpace(from: number): number {
    const { buf, end } = this;
    let i = from;
    while (i < end) {
      const c = buf[i] as number;
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      i++;
    }
    return i;
  }

  /** An object starting at `at` (past any space); `at` ends after its closing brace. */
  object(depth: number): Plain | typeof NOT_PLAIN {
    const { buf } = this;
    if (depth > MAX_DEPTH || buf[this.at] !== OPEN_OBJECT) return NOT_PLAIN;
    const result: Plain = {};
    let i = this.skipSpace(this.at + 1);
    if (buf[i] === CLOSE_OBJECT) {
      this.at = i + 1;
      return result;
    }
    for (;;) {
      if (buf[i] !== QUOTE) return NOT_PLAIN;
      const keyEnd = this.stringEnd(i + 1);
      if (keyEnd === -1) return NOT_PLAIN;
      const key = keyOf(buf, i + 1, keyEnd);
      if (key === '__proto__') return NOT_PLAIN;
      i = this.skipSpace(keyEnd + 1);
      if (buf[i] !== COLON) return NOT_PLAIN;
      this.at = this.skipSpace(i + 1);
      const value = this.value(depth);
      if (value === NOT_PLAIN) return NOT_PLAIN;
      result[key] = value;
      i = this.skipSpace(this.at);
      const c = buf[i];
      if (c === CLOSE_OBJECT) {
        this.at = i + 1;
        return result;
      }
      if (c !== COMMA) return NOT_PLAIN;
      i = this.skipSpace(i + 1);
    }
  }

  /** An array starting at `at`; `at` ends after its closing bracket. */
  array(depth: number): unknown[] | typeof NOT_PLAIN {
    if (depth > MAX_DEPTH) return NOT_PLAIN;
    const { buf } = this;
    const result: unknown[] = [];
    let i = this.skipSpace(this.at + 1);
    if (buf[i] === CLOSE_ARRAY) {
      this.at = i + 1;
      return result;
    }
    for (;;) {
      this.at = i;
      const value = this.value(depth);
      if (value === NOT_PLAIN) return NOT_PLAIN;
      result.push(value);
      i = this.skipSpace(this.at);
      const c = buf[i];
      if (c === CLOSE_ARRAY) {
        this.at = i + 1;
        return result;
      }
      if (c !== COMMA) return NOT_PLAIN;
      i = this.skipSpace(i + 1);
    }
  }

  /** A value starting at `at`; `at` ends after it. */
  value(depth: number): unknown {
    const { buf } = this;
    const i = this.at;
    const c = buf[i] as number;
    if (c === OPEN_OBJECT) return this.object(depth + 1);
    if (c === OPEN_ARRAY) return this.array(depth + 1);
    if (c === QUOTE) {
      const close = this.stringEnd(i + 1);
      if (close === -1) return NOT_PLAIN;
      this.at = close + 1;
      return buf.toString('latin1', i + 1, close);
    }
    if (c === MINUS || (c >= ZERO && c <= NINE)) return this.integer();
    for (const [word, value] of WORDS) {
      if (this.word(i, word)) {
        this.at = i + word.length;
        return value;
      }
    }
    return NOT_PLAIN;
  }

  /** `-?(0|[1-9][0-9]*)` of up to MAX_DIGITS digits, not followed by a fraction or an exponent. */
  integer(): number | typeof NOT_PLAIN {
    const { buf, end } = this;
    let i = this.at;
    const negative = buf[i] === MINUS;
    if (negative) i++;
    const first = i;
    let n = 0;
    while (i < end) {
      const c = buf[i] as number;
      if (c < ZERO || c > NINE) break;
      n = n * 10 + (c - ZERO);
      i++;
    }
    const digits = i - first;
    if (digits === 0 || digits > MAX_DIGITS || (digits > 1 && buf[first] === ZERO)) return NOT_PLAIN;
    const next = buf[i];
    if (next === 0x2e || next === 0x65 || next === 0x45) return NOT_PLAIN; // `.`, `e`, `E`
    this.at = i;
    return negative ? -n : n;
  }

  /** The closing quote of a string of printable ASCII without escapes whose contents start at `from`, or -1. */
  stringEnd(from: number): number {
    const { buf, end } = this;
    for (let i = from; i < end; i++) {
      const c = buf[i] as number;
      if (c === QUOTE) return i;
      if (c < 0x20 || c > 0x7e || c === BACKSLASH) return -1;
    }
    return -1;
  }

  word(at: number, word: Buffer): boolean {
    return at + word.length <= this.end && sameBytes(this.buf, at, word);
  }
}

/**
 * Keys read before, by length, each with the one string made for it: a key's string made afresh
 * each time was looked up in V8's string table on every property store, 63% of this reader's
 * samples in a cpu-profile of the server (issue #17, thirty-fourth session). A key seen again is
 * found by its bytes and its string reused. The keys are an API's field names; a few per length
 * are kept, then the rest are made afresh as before.
 */
const KNOWN_KEYS: ({ readonly bytes: Buffer; readonly text: string }[] | undefined)[] = [];
const KEYS_PER_LENGTH = 16;
const MAX_KEY_LENGTH = 64;

function keyOf(buf: Buffer, start: number, end: number): string {
  const length = end - start;
  const known = KNOWN_KEYS[length];
  if (known !== undefined) {
    for (const key of known) if (sameBytes(buf, start, key.bytes)) return key.text;
  }
  const text = buf.toString('latin1', start, end);
  if (length <= MAX_KEY_LENGTH) {
    const list = (KNOWN_KEYS[length] ??= []);
    if (list.length < KEYS_PER_LENGTH) list.push({ bytes: Buffer.from(text, 'latin1'), text });
  }
  return text;
}

/**
 * Whether `buf` holds `bytes` at `at`, compared here: keys are a few bytes, and Buffer#compare is a
 * call into C++ for each top-level key of every body and answer scanned (json-scan.ts, issue #17).
 */
export function sameBytes(buf: Buffer, at: number, bytes: Buffer): boolean {
  for (let k = 0; k < bytes.length; k++) if (buf[at + k] !== bytes[k]) return false;
  return true;
}

const WORDS: readonly (readonly [Buffer, unknown])[] = [
  [Buffer.from('null'), null],
  [Buffer.from('true'), true],
  [Buffer.from('false'), false],
];
