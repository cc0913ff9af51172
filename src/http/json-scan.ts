/**
 * One pass over a JSON body's bytes, before JSON.parse:
 *  - rejects nesting deeper than a limit: a deeply nested body blocks the event loop for seconds in
 *    JSON.parse and overflows recursive walkers (engineering-notes.md, "Costs measured");
 *  - finds the byte ranges of chosen top-level values (`model`, `stream_options`) and of the final
 *    brace, so the few changes a native route allows are byte splices that leave every other byte
 *    as the client sent it (issues #2 and #4).
 * Strings are skipped with Buffer#indexOf (memchr), so the scan costs little next to the parse.
 * It does not validate JSON; JSON.parse does that afterwards.
 */
import { BodyBytes } from './body-bytes.ts';
import { plainObjectOf, sameBytes } from './plain-json.ts';

export interface ValueRange {
  readonly start: number;
  readonly end: number;
}

/** A value found in a body: where its bytes are, and what they parse to. */
export interface FoundValue {
  readonly range: ValueRange;
  readonly value: unknown;
}

export interface JsonScan {
  /** True when nesting exceeded the limit; the other fields are then meaningless. */
  readonly tooDeep: boolean;
  /** The last occurrence of each chosen top-level key's value, by key. */
  readonly fields: ReadonlyMap<string, ValueRange>;
  /** Index of the top-level object's closing brace, or -1. */
  readonly end: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** The top-level values a request body's scan records; `tools` for the token estimate (input-tokens.ts). */
const REQUEST_KEYS: readonly Buffer[] = ['model', 'stream_options', 'tools'].map((k) => Buffer.from(k));

export function scanJson(buf: Buffer, maxDepth: number, keys: readonly Buffer[] = REQUEST_KEYS): JsonScan {
  const fields = new Map<string, ValueRange>();
  let depth = 0;
  let topIsObject = false;
  let expectKey = false; // at depth 1 of the top object, the next string is a key
  let key: string | null = null; // a chosen key whose value comes next
  let valueKey: string | null = null; // the chosen key whose value is being read
  let valueStart = -1;
  let end = -1;
  const n = buf.length;
  const closeValue = (at: number): void => {
    if (valueKey !== null) fields.set(valueKey, { start: valueStart, end: at });
    valueKey = null;
  };
  let i = 0;
  while (i < n) {
    const c = buf[i] as number;
    if (c === QUOTE) {
      const close = closingQuote(buf, i + 1);
      if (close === -1) break; // unterminated: JSON.parse reports it
      if (depth === 1 && topIsObject) {
        if (expectKey) {
          key = chosenKey(buf, i + 1, close, keys);
          expectKey = false;
        } else if (key !== null) {
          fields.set(key, { start: i, end: close + 1 });
          key = null;
        }
      }
      i = close + 1;
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (depth === 1 && key !== null) {
        valueKey = key;
        valueStart = i;
        key = null;
      }
      depth++;
      if (depth > maxDepth) return { tooDeep: true, fields: new Map(), end: -1 };
      if (depth === 1) {
        topIsObject = c === OPEN_OBJECT;
        expectKey = topIsObject;
      }
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
      if (depth === 1) closeValue(i + 1);
      if (depth === 0 && topIsObject) end = i;
    } else if (depth === 1) {
      if (c === COMMA) {
        expectKey = topIsObject;
        key = null;
      } else if (c !== COLON && c > 0x20 && key !== null) {
        // A number, true, false or null: it runs to the next comma or brace.
        let j = i;
        while (j < n && buf[j] !== COMMA && buf[j] !== CLOSE_OBJECT && (buf[j] as number) > 0x20) j++;
        fields.set(key, { start: i, end: j });
        key = null;
        i = j;
        continue;
      }
    }
    i++;
  }
  return { tooDeep: false, fields, end };
}

function chosenKey(buf: Buffer, from: number, to: number, keys: readonly Buffer[]): string | null {
  for (const candidate of keys) {
    if (to - from === candidate.length && sameBytes(buf, from, candidate)) return candidate.toString();
  }
  return null;
}

/** Bytes of a string looked through here before Buffer#indexOf takes over: most strings in JSON are short. */
const SHORT_STRING = 32;

/** Index of the quote that closes a string whose contents start at `from`, or -1. */
function closingQuote(buf: Buffer, from: number): number {
  // Short strings (keys, ids, types, finish reasons) end before a call into C++ would pay off.
  const near = Math.min(buf.length, from + SHORT_STRING);
  for (let j = nextQuote(buf, from, near); j !== -1; j = nextQuote(buf, j + 1, near)) if (!escaped(buf, j, from)) return j;
  return -1;
}

/** Whether the quote at `at` is escaped: an odd run of backslashes before it, counted down to `floor`. */
function escaped(buf: Buffer, at: number, floor: number): boolean {
  let backslashes = 0;
  for (let k = at - 1; k >= floor && buf[k] === BACKSLASH; k--) backslashes++;
  return backslashes % 2 === 1;
}

/** The next quote at or after `at`: looked for here up to `near`, then by Buffer#indexOf. */
function nextQuote(buf: Buffer, at: number, near: number): number {
  for (let j = at; j < near; j++) if (buf[j] === QUOTE) return j;
  return buf.indexOf(QUOTE, Math.max(at, near));
}

/**
 * An answer's top-level `usage` value, parsed alone, with its byte range, and whether the answer's
 * top-level object was closed; undefined when the key cannot be placed (none, or one written with
 * escapes), the value does not parse, or the answer nests deeper than `maxDepth`. The usage tap and
 * `usage.cost` read whole answers this way rather than parsing them whole (issue #17).
 *
 * Read from the end first: answers put `usage` last or nearly (OpenAI, and every compatible server
 * seen), so only the bytes after it are walked. The whole forward scan cost a 256-byte Chat answer
 * 8,600 instructions a request under callgrind, most of a small answer's reading (issue #17,
 * eighteenth session). Only for an answer known `whole` (it ended, by its HTTP framing): a cut one
 * can end with an inner object's brace, whose own `usage` key the walk would take for the
 * answer's. A cut answer, or one whose end is not a top-level object's, gets the forward scan.
 * Read from the end, `maxDepth` bounds only the bytes walked, so nesting too deep before `usage`
 * no longer refuses it (the value is the one JSON.parse of the whole answer gives); and a whole
 * answer that lacks its own final brace (a broken upstream) is read by the brace it ends with.
 */
export function usageValueOf(body: Buffer, maxDepth: number, whole = false): (FoundValue & { closed: boolean }) | undefined {
  const fromEnd = whole ? lastTopLevelValue(body, USAGE_BYTES, maxDepth) : NOT_AN_OBJECT;
  let range: ValueRange | undefined;
  let closed = true;
  if (fromEnd === TOO_DEEP) return undefined;
  if (fromEnd !== NOT_AN_OBJECT) range = fromEnd ?? undefined;
  else {
    const scan = scanJson(body, maxDepth, USAGE_KEY);
    if (scan.tooDeep) return undefined;
    range = scan.fields.get('usage');
    closed = scan.end >= 0;
  }
  if (range === undefined) return undefined;
  try {
    // A plain usage object is read from its bytes; anything else is parsed (plain-json.ts).
    return { range, value: plainObjectOf(body, range.start, range.end) ?? (JSON.parse(body.toString('utf8', range.start, range.end)) as unknown), closed };
  } catch {
    return undefined;
  }
}
const USAGE_BYTES = Buffer.from('usage');
const USAGE_KEY: readonly Buffer[] = [USAGE_BYTES];
const NOT_AN_OBJECT = -1;
const TOO_DEEP = -2;

/**
 * The range of the last value of top-level key `key` in a body that ends with its top-level
 * object's closing brace, walked backwards from that brace: null when the object has no such key
 * (found once the walk reaches the opening brace), NOT_AN_OBJECT when the body does not end with a
 * closing brace or its walk does not end at an opening brace, TOO_DEEP past `maxDepth`. On a JSON
 * object nesting no deeper than `maxDepth`, the range scanJson gives (the key's last occurrence),
 * from the bytes after the key only.
 *
 * Backwards, a string is met at its closing quote, and opens at the first quote before it that no
 * odd run of backslashes escapes (inside a string every quote is escaped; before its opening quote
 * only structure or whitespace can stand, never a backslash).
 */
function lastTopLevelValue(buf: Buffer, key: Buffer, maxDepth: number): ValueRange | null | typeof NOT_AN_OBJECT | typeof TOO_DEEP {
  let i = buf.length - 1;
  while (i >= 0 && (buf[i] as number) <= 0x20) i--;
  if (buf[i] !== CLOSE_OBJECT) return NOT_AN_OBJECT;
  // The end of the top-level value being walked: the closing brace, then each comma at depth 1.
  let valueEnd = i;
  let depth = 1;
  i--;
  while (i >= 0) {
    const c = buf[i] as number;
    if (c === QUOTE) {
      const open = openingQuote(buf, i);
      if (open === -1) return NOT_AN_OBJECT;
      if (depth === 1 && i - open - 1 === key.length && sameBytes(buf, open + 1, key)) {
        // A key only if a colon follows it; the value starts after that colon's whitespace.
        let at = i + 1;
        while (at < valueEnd && (buf[at] as number) <= 0x20) at++;
        if (buf[at] === COLON) {
          at++;
          while (at < valueEnd && (buf[at] as number) <= 0x20) at++;
          let end = valueEnd;
          while (end > at && (buf[end - 1] as number) <= 0x20) end--;
          return end > at ? { start: at, end } : NOT_AN_OBJECT;
        }
      }
      i = open - 1;
      continue;
    }
    if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (++depth > maxDepth) return TOO_DEEP;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth--;
      if (depth === 0) return c === OPEN_OBJECT && onlySpaceBefore(buf, i) ? null : NOT_AN_OBJECT;
    } else if (c === COMMA && depth === 1) valueEnd = i;
    i--;
  }
  return NOT_AN_OBJECT;
}

/** Index of the quote that opens the string whose closing quote is at `close`, or -1. */
function openingQuote(buf: Buffer, close: number): number {
  const near = Math.max(0, close - SHORT_STRING);
  for (let j = previousQuote(buf, close - 1, near); j !== -1; j = previousQuote(buf, j - 1, near)) if (!escaped(buf, j, 0)) return j;
  return -1;
}

/** The last quote at or before `at`: looked for here down to `near`, then by Buffer#lastIndexOf. */
function previousQuote(buf: Buffer, at: number, near: number): number {
  for (let j = at; j >= near; j--) if (buf[j] === QUOTE) return j;
  // A negative offset would count from the end.
  const before = Math.min(at, near - 1);
  return before < 0 ? -1 : buf.lastIndexOf(QUOTE, before);
}

function onlySpaceBefore(buf: Buffer, at: number): boolean {
  for (let k = 0; k < at; k++) if ((buf[k] as number) > 0x20) return false;
  return true;
}

/**
 * Returns the body with top-level values replaced (or added before the final brace when absent),
 * touching no other byte: the body's own chunks around the new values, nothing copied (issue #17).
 * Falls back to re-serialising `whole()` only when the scan could not place a value (a key written
 * with escapes, say). `body` has at least the edited keys' values, as parsed.
 */
export function spliceFields(raw: BodyBytes, scan: JsonScan, body: Record<string, unknown>, edits: Record<string, unknown>, whole: () => Record<string, unknown> = () => body): BodyBytes {
  const cuts: { start: number; end: number; text: string }[] = [];
  for (const [name, value] of Object.entries(edits)) {
    const range = scan.fields.get(name);
    if (range && sameValue(raw, range, body[name])) cuts.push({ start: range.start, end: range.end, text: JSON.stringify(value) });
    else if (!range && !(name in body) && scan.end > 0) cuts.push({ start: scan.end, end: scan.end, text: `,${JSON.stringify(name)}:${JSON.stringify(value)}` });
    else return BodyBytes.of(Buffer.from(JSON.stringify({ ...whole(), ...edits })));
  }
  cuts.sort((a, b) => a.start - b.start);
  const chunks: Buffer[] = [];
  let at = 0;
  for (const cut of cuts) {
    chunks.push(...raw.slice(at, cut.start), Buffer.from(cut.text));
    at = cut.end;
  }
  chunks.push(...raw.slice(at, raw.length));
  return new BodyBytes(chunks);
}

function sameValue(raw: BodyBytes, range: ValueRange, expected: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(raw.view(range.start, range.end).toString('utf8'))) === JSON.stringify(expected);
  } catch {
    return false;
  }
}
