import type { ValueRange } from './json-scan.ts';

/**
 * A JSON validator over bytes, for the request checks that stand in for `JSON.parse` and zod on the
 * model endpoints (request-check.ts; issue #17). It accepts exactly RFC 8259 JSON, as `JSON.parse`
 * does, builds nothing, and lets a caller look at chosen values as it passes them. Strings, which
 * are most of a request's bytes, are crossed with String#indexOf on the body read as latin1: their
 * escapes are found the same way, and control characters by sticky regular-expression runs over
 * the parts walked (#clean). A value the same key sent before at the same place is stepped over
 * (skipKnown).
 *
 * Anything the walker cannot vouch for ends the walk with NOT_CHECKED; the caller then parses
 * the body as before, and JSON.parse and zod give their exact answer. So the walker may refuse
 * more than it must (a key written with escapes, say), never less.
 */
export const NOT_CHECKED = Symbol('not checked');

const QUOTE = 0x22;
const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');
const NULL = Buffer.from('null');
/**
 * Bytes JSON forbids unescaped in a string; outside one only tab, LF and CR are allowed (as space).
 * Matched as the run of bytes that are none of them, from a sticky position: a search for the class
 * itself tries a match at every position and cost twice as much (46 against 23 µs on 75 KB).
 */
const NO_CONTROL = /[^\x00-\x1f]*/y;

/** What a value turned out to be, for the caller's type checks. */
export type Kind = 'string' | 'number' | 'true' | 'false' | 'null' | 'array' | 'object';

export class JsonWalk {
  readonly buf: Buffer;
  /**
   * The body read as latin1: one character per byte, so offsets are byte offsets. It costs half a
   * known request's check (bench/request-check.ts), and Buffer#indexOf with a byte proved as quick
   * as String#indexOf (11.6 against 11.4 ns). Walking the bytes instead was tried (issue #17, eighth
   * session) and is not in: on Node 24 it made the 76 KB request dearer, not cheaper (513 against
   * 397 µs), because with less young-generation garbage the body Buffers' external memory reaches
   * V8's external-memory trigger before a scavenge frees them, and full collections take over.
   */
  readonly text: string;
  readonly #maxDepth: number;
  /** Where the next byte is read. */
  at = 0;
  #depth = 0;
  /**
   * Positions of control characters in the body, ascending, then END; made only once a control
   * character is found (a pretty-printed body's line breaks). Until then, strings are checked by
   * windows scanned as the walk reaches them, so an element skipped as known is never scanned.
   */
  #controls: number[] | null = null;
  #nextControl = 0;
  /** Until #controls is made: [#cleanFrom, #cleanTo) is known to hold no control character. */
  #cleanFrom = 0;
  #cleanTo = 0;
  /** How far #clean's next window reaches: FIRST_WINDOW where a scan starts afresh, doubling up to WINDOW. */
  #window = FIRST_WINDOW;
  /** The first backslash at or after the position last asked about (-1: none left). */
  #backslash = -2;
  /** Whether the last string read held an escape (its bytes are not its text). */
  escaped = false;
  /** Where the last string read started (its opening quote); it ends where `at` was left. */
  start = 0;
  /** The member key being read in object(): where it starts (its quote) and ends (past its quote). */
  keyStart = 0;
  keyEnd = 0;

  constructor(buf: Buffer, maxDepth: number) {
    this.buf = buf;
    this.text = buf.toString('latin1');
    this.#maxDepth = maxDepth;
  }

  fail(): never {
    throw NOT_CHECKED;
  }

  /** Skips JSON whitespace; returns the next byte, or -1 at the end. */
  space(): number {
    const text = this.text;
    let i = this.at;
    let c = text.charCodeAt(i);
    while (c === SPACE || c === LF || c === CR || c === TAB) c = text.charCodeAt(++i);
    this.at = i;
    return Number.isNaN(c) ? -1 : c;
  }

  /** Consumes `byte` after optional whitespace, or fails. */
  expect(byte: number): void {
    if (this.space() !== byte) this.fail();
    this.at++;
  }

  /** Consumes `byte` if it comes next (after whitespace). */
  take(byte: number): boolean {
    if (this.space() !== byte) return false;
    this.at++;
    return true;
  }

  enter(): void {
    if (++this.#depth > this.#maxDepth) this.fail();
  }

  leave(): void {
    this.#depth--;
  }

  /** A string at `at` (after whitespace): sets `start`, `escaped` and `at` past its closing quote. */
  string(): void {
    if (this.space() !== QUOTE) this.fail();
    const text = this.text;
    const open = this.at;
    let from = open + 1;
    let escaped = false;
    let close = text.indexOf('"', from);
    for (;;) {
      if (close === -1) this.fail();
      const slash = this.#backslashFrom(from);
      if (slash === -1 || slash > close) break;
      escaped = true;
      from = slash + escapeLength(text, slash);
      // The quote found is still the first one past this escape unless the escape took it (`\"`).
      // Searching again from every escape crossed a long prompt once per line break in it.
      if (from > close) close = text.indexOf('"', from);
    }
    // A control character between the quotes: JSON.parse refuses the body.
    if (this.#controls === null ? !this.#clean(open + 1, close) : this.#controlBetween(open, close)) this.fail();
    this.start = open;
    this.escaped = escaped;
    this.at = close + 1;
  }

  /**
   * Whether [from, to) holds no control character, scanning forward by windows from where the
   * known clean span ends. The first control character found, anywhere, switches the walk to the
   * list of them all (#controlBetween): a body that has some usually has many (line breaks).
   */
  #clean(from: number, to: number): boolean {
    if (from >= this.#cleanFrom && to <= this.#cleanTo) return true;
    const extend = from >= this.#cleanFrom && from <= this.#cleanTo;
    let at = extend ? this.#cleanTo : from;
    if (!extend) this.#window = FIRST_WINDOW;
    const text = this.text;
    while (at < to) {
      // A window as a substring (a slice of the body's string, not a copy): a bounded repeat in
      // the expression itself ran four times slower than the unbounded one.
      const window = text.substring(at, at + this.#window);
      this.#window = Math.min(this.#window * 2, WINDOW);
      NO_CONTROL.lastIndex = 0;
      NO_CONTROL.test(window);
      if (NO_CONTROL.lastIndex < window.length) {
        this.#controls = controlsIn(text);
        return !this.#controlBetween(from - 1, to);
      }
      at += window.length;
    }
    if (!extend) this.#cleanFrom = from;
    this.#cleanTo = at;
    return true;
  }

  /** Whether a control character lies strictly between a string's quotes, by the list of them all. */
  #controlBetween(open: number, close: number): boolean {
    // Strings come in order, so the list is walked once in all.
    const controls = this.#controls as number[];
    while ((controls[this.#nextControl] as number) <= open) this.#nextControl++;
    return (controls[this.#nextControl] as number) < close;
  }

  /**
   * Steps over the value at `at` (after whitespace) when its bytes are exactly `known`: a value the
   * same checks accepted before, at the same place of a request (usage/checked-text.ts remembers
   * them). A JSON value's extent is fixed by its own bytes, so these bytes are that value again,
   * and its verdict, depth included, is the same.
   */
  skipKnown(known: Buffer): boolean {
    this.space();
    const at = this.at;
    const length = known.length;
    if (at + length > this.buf.length || this.buf.compare(known, 0, length, at, at + length) !== 0) return false;
    this.at = at + length;
    return true;
  }

  #backslashFrom(from: number): number {
    if (this.#backslash === -1) return -1;
    if (this.#backslash < from) this.#backslash = this.text.indexOf('\\', from);
    return this.#backslash;
  }

  /** Whether the string just read is exactly `text` as written (no escapes). */
  stringIs(text: Buffer): boolean {
    return !this.escaped && this.#equals(text, this.start, this.at);
  }

  /** Whether the member key being read (never escaped: object() refuses those) is `text`. */
  keyIs(text: Buffer): boolean {
    return this.#equals(text, this.keyStart, this.keyEnd);
  }

  #equals(text: Buffer, open: number, end: number): boolean {
    // Byte by byte here: the keys are short, and Buffer#compare costs a call into C++ each time.
    const length = end - open - 2;
    if (length !== text.length) return false;
    const body = this.text;
    for (let i = 0; i < length; i++) if (body.charCodeAt(open + 1 + i) !== text[i]) return false;
    return true;
  }

  /** The string just read is not empty (any escape is at least one character). */
  stringFilled(): boolean {
    return this.at - this.start > 2;
  }

  /** The text of the string just read. */
  stringText(): string {
    return this.textOf(this.start, this.at, this.escaped);
  }

  /** The text of a string read earlier, from where it started (its quote), ended, and whether it held an escape. */
  textOf(start: number, end: number, escaped: boolean): string {
    if (!escaped) return this.buf.toString('utf8', start + 1, end - 1);
    return JSON.parse(this.buf.toString('utf8', start, end)) as string;
  }

  /** A number at `at`: its value (a JSON number is what `Number` reads of it). */
  number(): number {
    const text = this.text;
    const begin = this.at;
    let i = begin;
    if (text.charCodeAt(i) === MINUS) i++;
    if (text.charCodeAt(i) === ZERO) i++;
    else if (isDigit(text.charCodeAt(i))) while (isDigit(text.charCodeAt(i))) i++;
    else this.fail();
    if (text.charCodeAt(i) === DOT) {
      i++;
      if (!isDigit(text.charCodeAt(i))) this.fail();
      while (isDigit(text.charCodeAt(i))) i++;
    }
    const e = text.charCodeAt(i);
    if (e === 0x65 || e === 0x45) {
      i++;
      const sign = text.charCodeAt(i);
      if (sign === PLUS || sign === MINUS) i++;
      if (!isDigit(text.charCodeAt(i))) this.fail();
      while (isDigit(text.charCodeAt(i))) i++;
    }
    this.at = i;
    return Number(text.slice(begin, i));
  }

  /** Any value, checked and skipped; returns its kind. */
  value(): Kind {
    const c = this.space();
    switch (c) {
      case QUOTE:
        this.string();
        return 'string';
      case 0x7b: // {
        this.enter();
        this.at++;
        if (!this.take(0x7d)) {
          do {
            this.string();
            this.expect(0x3a);
            this.value();
          } while (this.take(0x2c));
          this.expect(0x7d);
        }
        this.leave();
        return 'object';
      case 0x5b: // [
        this.enter();
        this.at++;
        if (!this.take(0x5d)) {
          do this.value();
          while (this.take(0x2c));
          this.expect(0x5d);
        }
        this.leave();
        return 'array';
      case 0x74: // t
        this.#literal(TRUE);
        return 'true';
      case 0x66: // f
        this.#literal(FALSE);
        return 'false';
      case 0x6e: // n
        this.#literal(NULL);
        return 'null';
      default:
        if (c === MINUS || isDigit(c)) {
          this.number();
          return 'number';
        }
        return this.fail();
    }
  }

  #literal(word: Buffer): void {
    const text = this.text;
    const at = this.at;
    for (let i = 0; i < word.length; i++) if (text.charCodeAt(at + i) !== word[i]) this.fail();
    this.at = at + word.length;
  }

  /**
   * An object's members: `member` is called with the walker on each key (keyIs() tells which; a
   * key written with escapes might be any key, so it is refused) and must consume the value.
   */
  object(member: (walk: JsonWalk) => void): void {
    if (this.space() !== 0x7b) this.fail();
    this.enter();
    this.at++;
    if (!this.take(0x7d)) {
      do {
        this.string();
        if (this.escaped) this.fail();
        this.keyStart = this.start;
        this.keyEnd = this.at;
        this.expect(0x3a);
        member(this);
      } while (this.take(0x2c));
      this.expect(0x7d);
    }
    this.leave();
  }

  /** An array's items, each consumed by `item`; returns how many there were. */
  array(item: (walk: JsonWalk, index: number) => void): number {
    if (this.space() !== 0x5b) this.fail();
    this.enter();
    this.at++;
    let count = 0;
    if (!this.take(0x5d)) {
      do item(this, count++);
      while (this.take(0x2c));
      this.expect(0x5d);
    }
    this.leave();
    return count;
  }

  /** The range of the value consumed by `read`, from its first byte. */
  range(read: () => void): ValueRange {
    this.space();
    const start = this.at;
    read();
    return { start, end: this.at };
  }

  /** The body is one value and nothing after it but whitespace. */
  finish(): void {
    if (this.space() !== -1) this.fail();
  }
}

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}

/** Bytes taken by the escape at `at` (a backslash), or a failure for one JSON does not have. */
function escapeLength(text: string, at: number): number {
  switch (text.charCodeAt(at + 1)) {
    case 0x22:
    case 0x5c:
    case 0x2f:
    case 0x62:
    case 0x66:
    case 0x6e:
    case 0x72:
    case 0x74:
      return 2;
    case 0x75:
      for (let i = at + 2; i < at + 6; i++) {
        const c = text.charCodeAt(i);
        if (!((c >= ZERO && c <= NINE) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66))) throw NOT_CHECKED;
      }
      return 6;
    default:
      throw NOT_CHECKED;
  }
}

/**
 * Bytes scanned for a control character per step of #clean, at most: few enough that a skipped
 * element is not scanned far into, enough that a long string takes few steps.
 */
const WINDOW = 2048;
/**
 * The first step's, where a scan starts afresh: past an element stepped over, the next string is
 * usually a key, and the element after it is often stepped over too. With every step at WINDOW, a
 * known 76 KB Claude Code request had 6.5 KB scanned in 4 windows, nearly all of it inside elements
 * then stepped over (issue #17, sixteenth session); steps double from here, so a body read from
 * its start takes at most four steps more in all.
 */
const FIRST_WINDOW = 128;

/** Past every position: ends the list of control characters. */
const END = Number.MAX_SAFE_INTEGER;

/**
 * Positions of every byte below 0x20, then END. A request from an SDK has none (compact JSON);
 * a pretty-printed one has its line breaks, which the walker's check skips past as they come.
 * One sticky regular-expression run per control character (a loop over the bytes in JavaScript
 * took 100 µs for 76 KB, a search for the character class 46 µs, this 23 µs).
 */
function controlsIn(text: string): number[] {
  const found: number[] = [];
  for (let at = 0; ; at++) {
    NO_CONTROL.lastIndex = at;
    NO_CONTROL.test(text);
    at = NO_CONTROL.lastIndex;
    if (at >= text.length) break;
    found.push(at);
  }
  found.push(END);
  return found;
}
