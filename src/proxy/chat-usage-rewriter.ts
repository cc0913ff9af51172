import { usageValueOf, type FoundValue } from '../http/json-scan.ts';
import { plainObjectOf } from '../http/plain-json.ts';
import { nextObjectUsage } from '../usage/tap.ts';

/**
 * The one change a native Chat route makes to an answer (issue #4): the usage chunk, which the
 * gateway asks for on every stream so the ledger has real counts, is removed when the client did
 * not ask for it, and carries `usage.cost` (OpenRouter's convention) when it did. Every other byte
 * passes as it came; a chunk's unfinished last line is held back until it is whole (up to
 * MAX_LINE), so that a usage line is read whole wherever it was cut.
 */
export type AddCost = (usage: Record<string, unknown>) => number;

/**
 * Usage lines are found in the chunk read as latin1 (offsets are byte offsets), by the usage tap's
 * own search (nextObjectUsage): Buffer#indexOf with `"usage"` steps through every quote of the
 * JSON in C++, 8.4 µs for a 64-event Chat stream against 1.3 µs in text, the copy included
 * (issue #17, fifteenth session; see Needle).
 */
const NEWLINE = 0x0a;
/** A usage chunk is a few hundred bytes; a longer unfinished line is not held (issue #17 review). */
const MAX_LINE = 64 * 1024;
const USAGE_NULL = Buffer.from('"usage":null');
const DATA = 'data:';

export class ChatStreamRewriter {
  readonly #drop: boolean;
  readonly #addCost: AddCost;
  #carry: Buffer | null = null;
  /** A line longer than MAX_LINE is being passed on as it comes. */
  #passing = false;

  constructor(options: { dropUsageChunk: boolean; addCost: AddCost }) {
    this.#drop = options.dropUsageChunk;
    this.#addCost = options.addCost;
  }

  /**
   * The bytes to forward for this chunk; `latin1`, the chunk read as latin1 where the caller has it
   * already (the native stream guard's). A line is only rewritten whole: the bytes after a chunk's
   * last line break wait for the rest of their line, since a usage line cut before its `"usage"`
   * would otherwise pass unread. Behind the stream guard, which passes whole events, there are
   * such bytes only in an event over its MAX_HELD, passed on as it comes: a line longer than
   * MAX_LINE is passed on as it comes too, and the rest of it after it (a usage line is short).
   */
  push(incoming: Buffer, latin1?: string): Buffer {
    if (incoming.length === 0) return incoming;
    const chunk = this.#carry === null ? incoming : Buffer.concat([this.#carry, incoming]);
    this.#carry = null;
    // The end of a line passed on unfinished passes as it is.
    let start = 0;
    if (this.#passing) {
      const end = chunk.indexOf(NEWLINE);
      if (end === -1) return chunk;
      this.#passing = false;
      start = end + 1;
    }
    // The stream guard's text of the same bytes where the relay has it: one latin1 copy, not two.
    const text = chunk === incoming && latin1 !== undefined ? latin1 : chunk.toString('latin1');
    let whole = chunk[chunk.length - 1] === NEWLINE ? chunk.length : text.lastIndexOf('\n') + 1;
    if (whole < start) whole = start;
    if (chunk.length - whole > MAX_LINE) {
      this.#passing = true;
      whole = chunk.length;
    } else if (whole < chunk.length) this.#carry = Buffer.from(chunk.subarray(whole));
    let hit = nextObjectUsage(text, start);
    if ((hit === -1 || hit >= whole) && whole === chunk.length) return chunk;
    const out: Buffer[] = [];
    let from = 0;
    for (; hit !== -1 && hit < whole; hit = nextObjectUsage(text, from)) {
      const lineStart = Math.max(from, start, text.lastIndexOf('\n', hit) + 1);
      const lineEnd = text.indexOf('\n', hit);
      if (lineEnd === -1) break; // in the unfinished line passed on as it comes
      out.push(chunk.subarray(from, lineStart), this.#line(chunk.subarray(lineStart, lineEnd + 1)));
      from = lineEnd + 1;
    }
    out.push(chunk.subarray(from, whole));
    return out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out);
  }

  /** Whatever is still held when the stream ends. */
  flush(): Buffer {
    const rest = this.#carry === null ? Buffer.alloc(0) : this.#line(this.#carry);
    this.#carry = null;
    return rest;
  }

  /** One whole line (with its newline). */
  #line(line: Buffer): Buffer {
    if (line.indexOf(USAGE_NULL) !== -1 || !line.toString('latin1', 0, DATA.length).startsWith(DATA)) return line;
    let chunk: unknown;
    try {
      chunk = plainObjectOf(line, DATA.length, line.length) ?? JSON.parse(line.toString('utf8', DATA.length));
    } catch {
      return line;
    }
    if (typeof chunk !== 'object' || chunk === null || !('usage' in chunk)) return line;
    const usage = chunk.usage;
    if (typeof usage !== 'object' || usage === null) return line;
    const choices = 'choices' in chunk ? chunk.choices : undefined;
    if (this.#drop) {
      // Only the chunk that exists because we asked: OpenAI's `choices: []` one. OpenRouter's usage
      // rides on a chunk with choices, which the client gets without asking.
      return Array.isArray(choices) && choices.length === 0 ? Buffer.alloc(0) : line;
    }
    const withCost = { ...chunk, usage: { ...usage, cost: this.#addCost(usage as Record<string, unknown>) } };
    const ending = line[line.length - 2] === 0x0d ? '\r\n' : '\n';
    return Buffer.from(`${DATA} ${JSON.stringify(withCost)}${ending}`);
  }
}

/**
 * A whole Chat answer with `usage.cost` set, its other bytes unchanged. Only the usage value is
 * parsed (issue #17: the whole answer was parsed twice more here, once to read it and once to check
 * the splice), and `"cost":…` is spliced in before its closing brace rather than the usage object
 * re-serialised: that was most of this function's 3–5 µs per answer (issue #17, thirteenth
 * session). A usage that has a `cost` already (OpenRouter's) is re-serialised with ours in its place.
 * `found`: the usage the usage tap already found in these bytes.
 */
export function addCostToBody(body: Buffer, addCost: AddCost, found: FoundValue | undefined = usageValueOf(body, 128)): Buffer {
  if (found === undefined) return body;
  const { range, value } = found;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return body;
  const usage = value as Record<string, unknown>;
  const cost = addCost(usage);
  if ('cost' in usage) {
    const edited = JSON.stringify({ ...usage, cost });
    return Buffer.concat([body.subarray(0, range.start), Buffer.from(edited), body.subarray(range.end)]);
  }
  // The range ends just past the object's closing brace (json-scan.ts).
  const close = range.end - 1;
  const field = Buffer.from(`${hasKeys(usage) ? ',' : ''}"cost":${numberText(cost)}`, 'latin1');
  return Buffer.concat([body.subarray(0, close), field, body.subarray(close)]);
}

/**
 * A number as JSON writes it: ECMAScript's Number::toString for a finite number (JSON.stringify's
 * own rule, -0 as "0" included), `null` otherwise. JSON.stringify of a lone number is a call into
 * V8's C++ runtime: about 2 µs of a small native Chat answer in a perf profile (issue #17,
 * thirtieth session).
 */
export function numberText(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}

function hasKeys(object: Record<string, unknown>): boolean {
  for (const _ in object) return true;
  return false;
}
