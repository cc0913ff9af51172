import type { CheckedElements } from '../usage/checked-text.ts';
import type { JsonScan, ValueRange } from './json-scan.ts';
import type { JsonWalk } from './json-walk.ts';

/**
 * What the byte-level request checks share (request-check.ts for Messages, count_tokens and Chat,
 * responses-check.ts for Responses; issue #17): the result's shape, the keys they recognise, the
 * top-level reader, and the checks of single values. Each check either consumes a value its
 * schema accepts or ends the walk with NOT_CHECKED (JsonWalk#fail), never less strict than zod.
 */
export interface CheckedRequest {
  /** The top-level values the gateway reads; each as JSON.parse would give it, when present. */
  readonly head: Record<string, unknown>;
  /** Ranges of `model`, `stream_options` and `tools`, and the closing brace (json-scan.ts). */
  readonly scan: JsonScan;
  /** Ranges of the input's elements, for the input-token estimate (usage/checked-text.ts). */
  readonly elements: CheckedElements;
  /**
   * Responses only: the ids a Responses body's `input` names by `item_reference`, in order, as
   * response-state.ts would find them in the parsed input (at most the first 1,000).
   */
  readonly references?: readonly string[];
}

/**
 * The elements of a request the same key sent before and the same checks accepted, by place
 * (usage/checked-text.ts keeps them for the estimate): an agent resends its system prompt, its
 * tools and every earlier message on each turn, and an element found again byte for byte is
 * stepped over rather than checked again (JsonWalk#skipKnown).
 */
export interface KnownRequest {
  readonly system: { readonly bytes: Buffer } | undefined;
  readonly messages: readonly { readonly bytes: Buffer }[];
  readonly tools: { readonly bytes: Buffer } | undefined;
}

/** Where an element sits in a request: its `system`, its `tools`, or the message at an index. */
export type Place = 'system' | 'tools' | number;

/** A checked element's range, and the known element these bytes were found to be, if any. */
export interface ElementRange extends ValueRange {
  /**
   * The element of `known` that these bytes are, byte for byte, when it was stepped over: the
   * estimate (usage/checked-text.ts) finds it by identity instead of comparing the bytes again.
   */
  readonly same?: { readonly bytes: Buffer };
}

/**
 * The range of the element at the walk, at `place`: stepped over when it is one of `known`'s
 * elements there, else checked by `check`.
 */
export function elementRange(walk: JsonWalk, known: readonly KnownRequest[] | undefined, place: Place, check: () => unknown): ElementRange {
  let same: { readonly bytes: Buffer } | undefined;
  const range = walk.range(() => {
    same = knownAt(walk, known, place);
    if (same === undefined) check();
  });
  return same === undefined ? range : { start: range.start, end: range.end, same };
}

/** The element of `known` at `place` that the value at the walk is, stepped over if so. */
function knownAt(walk: JsonWalk, known: readonly KnownRequest[] | undefined, place: Place): { readonly bytes: Buffer } | undefined {
  if (known === undefined) return undefined;
  for (const seen of known) {
    const element = place === 'system' ? seen.system : place === 'tools' ? seen.tools : seen.messages[place];
    if (element !== undefined && walk.skipKnown(element.bytes)) return element;
  }
  return undefined;
}

export const key = (text: string): Buffer => Buffer.from(text);
export const K = {
  model: key('model'),
  messages: key('messages'),
  system: key('system'),
  tools: key('tools'),
  tool_choice: key('tool_choice'),
  thinking: key('thinking'),
  max_tokens: key('max_tokens'),
  stream: key('stream'),
  temperature: key('temperature'),
  top_p: key('top_p'),
  top_k: key('top_k'),
  stop_sequences: key('stop_sequences'),
  metadata: key('metadata'),
  user_id: key('user_id'),
  role: key('role'),
  content: key('content'),
  type: key('type'),
  name: key('name'),
  stream_options: key('stream_options'),
  include_usage: key('include_usage'),
  frequency_penalty: key('frequency_penalty'),
  presence_penalty: key('presence_penalty'),
  stop: key('stop'),
  n: key('n'),
  max_completion_tokens: key('max_completion_tokens'),
  max_output_tokens: key('max_output_tokens'),
  tool_call_id: key('tool_call_id'),
  input: key('input'),
  instructions: key('instructions'),
  previous_response_id: key('previous_response_id'),
  background: key('background'),
  conversation: key('conversation'),
  store: key('store'),
  id: key('id'),
};
export type KeyName = keyof typeof K;

/**
 * An endpoint's known top-level keys with their bytes, looked up once: `K[name]` for each name at
 * each member was the walker's largest own cost on a small body in a CPU profile.
 */
export interface KnownKeys {
  readonly names: readonly KeyName[];
  readonly bytes: readonly Buffer[];
}

export function knownKeys(names: readonly KeyName[]): KnownKeys {
  return { names, bytes: names.map((name) => K[name]) };
}

/** Reads a top-level object: which known key each member is, once each; the rest are skipped. */
export class TopLevel {
  readonly head: Record<string, unknown> = {};
  readonly fields = new Map<string, ValueRange>();
  readonly messages: ValueRange[] = [];
  system: ValueRange | undefined;
  readonly #seen = new Set<KeyName>();
  end = -1;

  /** The known key the walker just read, or null; a known key seen twice is refused (JSON.parse keeps the last, zod checks only that). */
  known(walk: JsonWalk, keys: KnownKeys): KeyName | null {
    const { names, bytes } = keys;
    for (let i = 0; i < names.length; i++) {
      if (walk.keyIs(bytes[i] as Buffer)) {
        const name = names[i] as KeyName;
        if (this.#seen.has(name)) walk.fail();
        this.#seen.add(name);
        return name;
      }
    }
    return null;
  }

  has(name: KeyName): boolean {
    return this.#seen.has(name);
  }

  /** A number the gateway reads but the schema does not check (`n` on Messages): recorded if it is one, last one wins. */
  looseNumber(walk: JsonWalk, name: string): void {
    walk.space();
    const first = walk.text.charCodeAt(walk.at);
    if (first === 0x2d || (first >= 0x30 && first <= 0x39)) this.head[name] = walk.number();
    else {
      walk.value();
      delete this.head[name];
    }
  }

  /** `stream` where the schema does not check it: the gateway asks only whether it is `true`. */
  looseStream(walk: JsonWalk): void {
    const kind = walk.value();
    if (kind === 'true') this.head['stream'] = true;
    else delete this.head['stream'];
  }

  finish(walk: JsonWalk, references?: readonly string[]): CheckedRequest {
    this.end = walk.at - 1;
    const elements = this.system === undefined ? { messages: this.messages } : { system: this.system, messages: this.messages };
    const scan = { tooDeep: false, fields: this.fields, end: this.end };
    return references === undefined ? { head: this.head, scan, elements } : { head: this.head, scan, elements, references };
  }
}

/**
 * Read by the gateway whatever the endpoint (reserve.ts sizes holds by them), checked or not. By
 * name, the name itself: the head is written under this constant, not the string just read, which
 * V8 would look up in its string table on the store (issue #17, thirty-fourth session).
 */
const LOOSE_NUMBERS: ReadonlyMap<string, string> = new Map(['n', 'max_tokens', 'max_completion_tokens', 'max_output_tokens'].map((name) => [name, name]));
const LONGEST_LOOSE = 'max_completion_tokens'.length;

/** A key the schema does not check: skipped, unless the gateway reads it anyway. */
export function loose(walk: JsonWalk, top: TopLevel): void {
  // Its name is read back only when it could be one of the few the gateway reads.
  const length = walk.keyEnd - walk.keyStart - 2;
  if (length <= LONGEST_LOOSE) {
    const name = walk.buf.toString('latin1', walk.keyStart + 1, walk.keyEnd - 1);
    const number = LOOSE_NUMBERS.get(name);
    if (number !== undefined) return top.looseNumber(walk, number);
    if (name === 'stream') return top.looseStream(walk);
  }
  walk.value();
}

/** `model`: a string, not empty. */
export function modelString(walk: JsonWalk, top: TopLevel): void {
  walk.string();
  if (!walk.stringFilled()) walk.fail();
  top.head['model'] = walk.stringText();
}

/** An object whose `field` is a non-empty string (other members anything). */
export function namedObject(walk: JsonWalk, field: Buffer): void {
  let seen = false;
  walk.object((w) => {
    if (w.keyIs(field)) {
      if (seen) w.fail();
      seen = true;
      w.string();
      if (!w.stringFilled()) w.fail();
    } else w.value();
  });
  if (!seen) walk.fail();
}

export function stringValue(walk: JsonWalk): void {
  walk.string();
}

export function boolean(walk: JsonWalk): boolean {
  const kind = walk.value();
  if (kind !== 'true' && kind !== 'false') walk.fail();
  return kind === 'true';
}

function numberValue(walk: JsonWalk): number {
  const c = walk.space();
  if (c !== 0x2d && (c < 0x30 || c > 0x39)) walk.fail();
  const value = walk.number();
  // zod's number() refuses what JSON.parse makes Infinity (1e400).
  if (!Number.isFinite(value)) walk.fail();
  return value;
}

export function numberIn(walk: JsonWalk, min: number, max: number): number {
  const value = numberValue(walk);
  if (value < min || value > max) walk.fail();
  return value;
}

export function integer(walk: JsonWalk, min: number, max: number): number {
  const value = numberIn(walk, min, max);
  // zod's int() also bounds integers to the safe range (1e21 is refused).
  if (!Number.isSafeInteger(value)) walk.fail();
  return value;
}

/** `null` where the schema allows it (`.nullable()`): consumed, true. */
export function isNull(walk: JsonWalk): boolean {
  if (walk.space() !== 0x6e) return false;
  walk.value();
  return true;
}

/** Any value, consumed, as JSON.parse gives it: for the few small values the gateway reads whole but the schema does not check. */
export function parsedValue(walk: JsonWalk): unknown {
  const range = walk.range(() => walk.value());
  return JSON.parse(walk.buf.toString('utf8', range.start, range.end));
}
