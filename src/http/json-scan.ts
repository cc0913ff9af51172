/**
 * One pass over a JSON request body's bytes, before JSON.parse:
 *  - rejects nesting deeper than a limit: a deeply nested body blocks the event loop for seconds in
 *    JSON.parse and overflows recursive walkers (engineering-notes.md, "Costs measured");
 *  - finds the byte range of the top-level `"model"` string, so a route that renames the model can
 *    splice those bytes and leave every other byte as the client sent it (issue #2).
 * Strings are skipped with Buffer#indexOf (memchr), so the scan costs little next to the parse.
 * It does not validate JSON; JSON.parse does that afterwards.
 */

export interface JsonScan {
  /** True when nesting exceeded the limit; the other fields are then meaningless. */
  readonly tooDeep: boolean;
  /** Byte offsets of the last top-level `"model"` value, quotes included, when it is a string. */
  readonly modelStart: number;
  readonly modelEnd: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const MODEL_KEY = Buffer.from('model');

export function scanJson(buf: Buffer, maxDepth: number): JsonScan {
  let depth = 0;
  let topIsObject = false;
  let expectKey = false; // at depth 1 of the top object, the next string is a key
  let keyIsModel = false;
  let valueIsModel = false; // the next top-level value belongs to "model"
  let modelStart = -1;
  let modelEnd = -1;
  const n = buf.length;
  let i = 0;
  while (i < n) {
    const c = buf[i];
    if (c === QUOTE) {
      const close = closingQuote(buf, i + 1);
      if (close === -1) break; // unterminated: JSON.parse reports it
      if (depth === 1 && topIsObject) {
        if (expectKey) {
          keyIsModel = close - i - 1 === MODEL_KEY.length && buf.compare(MODEL_KEY, 0, 5, i + 1, close) === 0;
          expectKey = false;
        } else if (valueIsModel) {
          modelStart = i;
          modelEnd = close + 1;
          valueIsModel = false;
        }
      }
      i = close + 1;
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth++;
      if (depth > maxDepth) return { tooDeep: true, modelStart: -1, modelEnd: -1 };
      if (depth === 1) {
        topIsObject = c === OPEN_OBJECT;
        expectKey = topIsObject;
      }
      if (depth === 2 && valueIsModel) {
        // "model" holds an object or array: whatever came before is superseded (last key wins).
        valueIsModel = false;
        modelStart = modelEnd = -1;
      }
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    } else if (depth === 1) {
      if (c === COMMA) {
        expectKey = topIsObject;
        valueIsModel = false;
      } else if (c === COLON) {
        valueIsModel = keyIsModel;
        if (keyIsModel) modelStart = modelEnd = -1;
        keyIsModel = false;
      }
    }
    i++;
  }
  return { tooDeep: false, modelStart, modelEnd };
}

/** Index of the quote that closes a string whose contents start at `from`, or -1. */
function closingQuote(buf: Buffer, from: number): number {
  let j = from;
  for (;;) {
    j = buf.indexOf(QUOTE, j);
    if (j === -1) return -1;
    let backslashes = 0;
    for (let k = j - 1; k >= from && buf[k] === BACKSLASH; k--) backslashes++;
    if (backslashes % 2 === 0) return j;
    j++;
  }
}

/**
 * Returns the body with its top-level model replaced, touching no other byte. Falls back to
 * re-serialising only when the scan could not place the value (an escaped key, say).
 */
export function replaceModel(raw: Buffer, scan: JsonScan, body: Record<string, unknown>, model: string): Buffer {
  if (scan.modelStart >= 0) {
    const current: unknown = JSON.parse(raw.toString('utf8', scan.modelStart, scan.modelEnd));
    if (current === body['model']) {
      return Buffer.concat([
        raw.subarray(0, scan.modelStart),
        Buffer.from(JSON.stringify(model)),
        raw.subarray(scan.modelEnd),
      ]);
    }
  }
  return Buffer.from(JSON.stringify({ ...body, model }));
}
