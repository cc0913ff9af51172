import type { BodyBytes } from '../http/body-bytes.ts';
import type { ValueRange } from '../http/json-scan.ts';
import type { ElementRange, KnownRequest } from '../http/request-check-parts.ts';
import { jsonText } from '../http/json-text.ts';
import { chatRequestText, messagesRequestText, responsesRequestText, type RequestText } from './request-text.ts';
import { countGroups } from './token-count.ts';

/**
 * The input text of a body the byte-level checks accepted (http/request-check.ts; issue #17),
 * without parsing the body: each element (the `system` value, each message, `tools`) is read on its
 * own, and what it contributes is kept with its bytes. A coding agent resends its system prompt,
 * its tools and every earlier message on each turn, in the same places, so each element is first
 * compared, as bytes (memcmp), with the same element of the key's last few requests; only what
 * differs is parsed. On Claude Code's 76 KB request that is a few microseconds, where hashing the
 * elements' text as map keys cost more than parsing them.
 *
 * The result is exactly `messagesRequestText` / `chatRequestText` / `responsesRequestText` of the
 * whole body with its tools read by jsonText (input-tokens.ts): those read only `system` (Responses:
 * `instructions`), each message (Responses: the input string, or each input item) and `tools`, in
 * that order, and each element's share is theirs of a request holding that element alone.
 *
 * Kept per scope (the API key) and format, as counts are per scope (token-count.ts): shared across
 * keys, a hit's speed would tell one key whether another sent the same message; across formats, the
 * same bytes at the same place would be read by the other format's rules (a Chat `image_url` part
 * is an image, a Messages block of that type is text).
 */
export interface CheckedElements {
  /** The `system` value (Messages), or Responses' `instructions` when it is a string. */
  readonly system?: ElementRange;
  /** Each message, in order; Responses: the `input` string as one element, or each input item. */
  readonly messages: readonly ElementRange[];
}

interface Entry extends RequestText {
  /** A copy of the element's bytes. */
  readonly bytes: Buffer;
  /**
   * The element's estimate, once counted (checkedInputTokens): an element found again is not
   * counted again. Counting the texts of a repeated 76 KB request, short ones tokenized and long
   * ones' remembered counts looked up, took 6–9 µs in-process against 2–3 µs now, and about 18 µs
   * of tokenizer in a Node 24 server profile (issue #17, twelfth session; bench/input-estimate.ts).
   */
  tokens?: number;
}

/** One request's elements, as read. */
interface Seen {
  readonly system: Entry | undefined;
  readonly messages: readonly Entry[];
  readonly tools: Entry | undefined;
  /** Bytes held by its entries (shared entries counted in each request that holds them). */
  readonly size: number;
}

/** Requests remembered per key: an agent runs a few conversations at once on one key. */
const RECENT = 4;
/** Bytes of elements remembered in all, at most (each also holds its text, about as much again). */
let limitBytes = 32 * 1024 * 1024;
let heldBytes = 0;
/** Elements read from their bytes so far, not found among the remembered (tests). */
let reads = 0;

/** What an element contributes, from its bytes. */
type Read = (bytes: Buffer) => RequestText;
const json = (bytes: Buffer): unknown => JSON.parse(bytes.toString('utf8'));
const readSystem: Read = (bytes) => messagesRequestText({ system: json(bytes) });
const readMessage: Read = (bytes) => messagesRequestText({ messages: [json(bytes)] });
const readChatMessage: Read = (bytes) => chatRequestText({ messages: [json(bytes)] });
const readInstructions: Read = (bytes) => responsesRequestText({ instructions: json(bytes) });
/** A Responses input element: the whole input when it is a string, else one item. */
const readInput: Read = (bytes) => {
  const value = json(bytes);
  return responsesRequestText({ input: typeof value === 'string' ? value : [value] });
};
/** The tools as input-tokens.ts reads any body's: their bytes as sent, one part. */
const readTools: Read = (bytes) => ({ parts: [jsonText(bytes)], fixed: 0 });

export type CheckedFormat = 'messages' | 'chat' | 'responses';
const READERS: Record<CheckedFormat, { readonly system: Read; readonly message: Read }> = {
  messages: { system: readSystem, message: readMessage },
  chat: { system: readSystem, message: readChatMessage },
  responses: { system: readInstructions, message: readInput },
};

/** A format's and a key's last requests, newest first. */
interface Scope {
  readonly format: CheckedFormat;
  readonly name: string;
  readonly recent: Seen[];
}
/**
 * Per format, each key's scope, looked up by the key's own string: no joined key string to build,
 * flatten and hash twice a request (the check's lookup and the estimate's), as there was.
 */
const SCOPES: Record<CheckedFormat, Map<string, Scope>> = { messages: new Map(), chat: new Map(), responses: new Map() };
/** Every scope, in least recently used order (eviction's). */
const lru = new Set<Scope>();
/** The scope used last: last in `lru` already, so not moved there again. */
let newest: Scope | undefined;
const NONE: readonly Seen[] = [];

/**
 * The key's last requests in this format, newest first, as the byte-level checks may step over
 * their elements (http/request-check.ts); undefined when there are none. Read only: the requests
 * are remembered, in least recently used order, when their estimate is made (checkedRequestText).
 */
export function recentElements(format: CheckedFormat, scope: string): readonly KnownRequest[] | undefined {
  return SCOPES[format].get(scope)?.recent;
}

/** The input text of a checked body: its elements' texts in order, as one request's (tests). */
export function checkedRequestText(format: CheckedFormat, raw: BodyBytes, elements: CheckedElements, scope: string, tools: ValueRange | undefined): RequestText {
  const parts: string[] = [];
  let fixed = 0;
  for (const entry of entriesOf(format, raw, elements, scope, tools)) {
    for (const part of entry.parts) parts.push(part);
    fixed += entry.fixed;
  }
  return { parts, fixed };
}

/**
 * The input-token estimate of a checked body: the sum of its elements' counts, each element
 * counted on its own (token-count.ts countGroups) the first time it is read, and its count kept
 * with it. So a coding agent's next turn counts only its new messages. Each element's short texts
 * are joined within the element, where a body counted whole joins them across the body: the two
 * differ only where a token would span two elements.
 */
export function checkedInputTokens(format: CheckedFormat, raw: BodyBytes, elements: CheckedElements, scope: string, tools: ValueRange | undefined): number | Promise<number> {
  let total = 0;
  let uncounted: Entry[] | undefined;
  for (const entry of entriesOf(format, raw, elements, scope, tools)) {
    if (entry.tokens === undefined) (uncounted ??= []).push(entry);
    else total += entry.tokens;
  }
  // Every element counted before: the estimate is known now, without a promise (input-tokens.ts).
  if (uncounted === undefined) return total;
  const counting = uncounted;
  return countGroups(counting, scope).then((counts) => {
    for (let i = 0; i < counting.length; i++) {
      const count = counts[i] ?? 0;
      (counting[i] as Entry).tokens = count;
      total += count;
    }
    return total;
  });
}

/** The body's elements (system, each message, tools), each found among the key's recent requests or read. */
function entriesOf(format: CheckedFormat, raw: BodyBytes, elements: CheckedElements, scope: string, tools: ValueRange | undefined): Entry[] {
  let found = SCOPES[format].get(scope);
  const recent = found?.recent ?? NONE;
  const read = READERS[format];
  const system = elements.system && entryOf(raw, elements.system, recent, (seen) => seen.system, read.system);
  const messages = elements.messages.map((range, i) => entryOf(raw, range, recent, (seen) => seen.messages[i], read.message));
  const toolsEntry = tools && entryOf(raw, tools, recent, (seen) => seen.tools, readTools);
  const entries: Entry[] = [];
  let size = 0;
  if (system !== undefined) entries.push(system);
  for (const message of messages) entries.push(message);
  if (toolsEntry !== undefined) entries.push(toolsEntry);
  for (const entry of entries) size += entry.bytes.length;
  // Least recently used order: moved last unless it is last already. A key sending one request
  // after another (an agent's turns) deleted and set its own entry each time, shrinking and
  // growing the map's table per request. Made only now, after its elements were read: a read that
  // throws leaves no empty scope behind.
  if (found === undefined) {
    found = { format, name: scope, recent: [] };
    SCOPES[format].set(scope, found);
    lru.add(found);
  } else if (found !== newest) {
    lru.delete(found);
    lru.add(found);
  }
  newest = found;
  // Newest first, at most RECENT: shifted in place, not by unshift and splice (a runtime call and
  // an array per request).
  const kept = found.recent;
  const dropped = kept.length === RECENT ? (kept[RECENT - 1] as Seen) : undefined;
  for (let i = Math.min(kept.length, RECENT - 1); i > 0; i--) kept[i] = kept[i - 1] as Seen;
  kept[0] = { system, messages, tools: toolsEntry, size };
  heldBytes += size - (dropped?.size ?? 0);
  evict();
  return entries;
}

function entryOf(raw: BodyBytes, range: ElementRange, recent: readonly Seen[], at: (seen: Seen) => Entry | undefined, read: Read): Entry {
  for (const seen of recent) {
    const known = at(seen);
    // The check stepped over these bytes as this very element (request-check-parts.ts): no second
    // comparison, which on Claude Code's 76 KB request was another memcmp of 75 KB (issue #17).
    if (known !== undefined && (known === range.same || raw.equals(range.start, range.end, known.bytes))) return known;
  }
  const bytes = raw.copy(range.start, range.end);
  reads++;
  const text = read(bytes);
  return { bytes, parts: text.parts, fixed: text.fixed };
}

function evict(): void {
  for (const scope of lru) {
    if (heldBytes <= limitBytes) return;
    const recent = scope.recent;
    while (recent.length > 0 && heldBytes > limitBytes) heldBytes -= (recent.pop() as Seen).size;
    if (recent.length === 0) {
      lru.delete(scope);
      SCOPES[scope.format].delete(scope.name);
      if (scope === newest) newest = undefined;
    }
  }
}

/** Sets the most bytes remembered (tests); returns the previous bound. */
export function limitCheckedText(bytes: number): number {
  const previous = limitBytes;
  limitBytes = bytes;
  evict();
  return previous;
}

/** Elements read so far (tests): a remembered one is not read again. */
export function checkedTextReads(): number {
  return reads;
}

/** Bytes remembered now (tests). */
export function checkedTextHeld(): number {
  return heldBytes;
}
