import type { Endpoint, TextFormat, TokenUsage } from '../formats/wire.ts';
import { usageValueOf, type FoundValue } from '../http/json-scan.ts';
import { plainObjectOf } from '../http/plain-json.ts';
import { Needle } from '../util/text-search.ts';
import { ImagesSseUsageTap } from './images-sse-tap.ts';
import { embeddingsUsageTap, imagesUsageTap } from './tail-tap.ts';
import {
  applyChatChunk,
  applyChatUsage,
  applyMessagesEvent,
  applyMessagesUsage,
  applyResponsesEvent,
  applyResponsesUsage,
  applyTranscriptionBody,
  applyTranscriptionEvent,
  emptyUsage,
  isUsage,
} from './normalize.ts';

/**
 * Reads token usage from a response as its bytes pass to the client, without changing them.
 *
 * SSE: only `data:` lines that contain the bytes `"usage"` are parsed; everything else is skipped
 * with String#indexOf. In event payloads a literal `"usage"` inside text is JSON-escaped
 * (`\"usage\"`), so only real keys match. JSON: the body is kept (up to a cap) and parsed once.
 */
export interface UsageTap {
  /** `latin1`: the chunk read as latin1, where the caller has it already (the native stream guard's). */
  push(chunk: Buffer, latin1?: string): void;
  /**
   * The usage seen, or undefined when the response carried none. `whole`: the response's HTTP
   * framing says all of it arrived (a whole JSON answer's usage is then read from its end).
   */
  finish(whole?: boolean): TokenUsage | undefined;
  /**
   * Output tokens estimated from what passed: what an answer cut before its usage is charged for
   * (issue #4). Undefined from the text event-stream taps (Messages, Chat, Responses,
   * transcripts): there the relay's stream guard counts content events as it frames them
   * (proxy/sse-guard.ts contentEvents), which costs nothing extra. An image stream's tap says 0.
   */
  outputEstimate(): number | undefined;
  /** A Responses answer's `id` (issue #14): where the upstream keeps it, remembered for continuations. */
  responseId?(): string | undefined;
  /** The ids of a Responses answer's output items, which later input may name by `item_reference`. */
  itemIds?(): readonly string[];
  /**
   * After finish(), a whole JSON answer's bytes and its top-level `usage` as found there, so that
   * `usage.cost` is written without scanning the answer again (proxy/chat-usage-rewriter.ts).
   */
  answer?(): UsageInAnswer | undefined;
}

/** A whole answer, and its top-level `usage` value with that value's byte range. */
export interface UsageInAnswer {
  readonly bytes: Buffer;
  readonly usage: FoundValue;
}

const USAGE = Buffer.from('"usage"');
const USAGE_TEXT = new Needle('"usage"');
/** Answers nest far less; deeper ones are parsed whole, as before. */
const MAX_ANSWER_DEPTH = 128;
const DATA = Buffer.from('data:');
/** A JSON body or a single SSE line larger than this is not inspected (images, not usage). */
const MAX_BUFFERED = 8 * 1024 * 1024;

/**
 * The tap that reads an endpoint's 2xx answer (issue #13): the format's own for Messages and Chat;
 * tail-reading ones for Images and embeddings answers, which run to megabytes; none for speech,
 * charged by the characters of its request, nor for count_tokens, which is free.
 */
export function usageTapFor(endpoint: Endpoint, contentType: string | undefined): UsageTap | null {
  const isSse = contentType?.startsWith('text/event-stream') === true;
  switch (endpoint) {
    case 'count_tokens':
    case 'responses_input_tokens':
    case 'audio_speech':
      return null;
    case 'images_generations':
    case 'images_edits':
      return isSse ? new ImagesSseUsageTap() : imagesUsageTap();
    case 'responses':
      return new ResponsesTap(isSse);
    case 'audio_transcriptions':
    case 'audio_translations':
      // `text`, `srt` and `vtt` answers carry no usage: they fail to parse, and the settlement
      // falls back to the upload's own length (usage/transcription.ts).
      return isSse ? new SseUsageTap(applyTranscriptionEvent) : new JsonUsageTap(applyTranscriptionBody);
    case 'embeddings':
      return embeddingsUsageTap();
    case 'messages':
      return createUsageTap('messages', contentType);
    default:
      return createUsageTap('chat', contentType);
  }
}

export function createUsageTap(format: TextFormat, contentType: string | undefined): UsageTap {
  if (!contentType?.startsWith('text/event-stream')) return new JsonUsageTap(format === 'messages' ? messagesBody : chatBody, true);
  // Usage is read only from an object (normalize.ts isUsage), so a line whose usage is anything
  // else is not read at all: asked for usage, as Junction asks, OpenAI sends `"usage":null` on
  // every chunk but the last, and each was cut out and parsed (issue #17: 122 µs of a 64-chunk
  // stream, 7 without, in-process on Node 20).
  return new SseUsageTap(format === 'chat' ? applyChatChunk : applyMessagesEvent, true);
}

type Apply = (usage: TokenUsage, event: Record<string, unknown>) => boolean;

const messagesBody: Apply = (usage, body) => {
  if (!isUsage(body['usage'])) return false;
  applyMessagesUsage(usage, body['usage']);
  return true;
};
/**
 * A Responses answer's usage (issue #14), and what the state middleware remembers of it: its id,
 * and its output items' ids. Only lines with a usage object are parsed, the terminal event's:
 * `response.created` and `response.in_progress` carry `"usage":null` and the whole response
 * object, and parsing them too cost a Responses stream a tenth of its throughput (bench). The id,
 * for an error frame on a stream cut before its end, is read from the first event's bytes.
 */
class ResponsesTap implements UsageTap {
  readonly #inner: UsageTap;
  readonly #sse: boolean;
  #id: string | undefined;
  #items: readonly string[] = [];

  constructor(isSse: boolean) {
    this.#sse = isSse;
    this.#inner = isSse
      ? new SseUsageTap((usage, event) => {
          this.#see(event['response']);
          return applyResponsesEvent(usage, event);
        }, true)
      : new JsonUsageTap((usage, body) => {
          this.#see(body);
          return applyResponsesUsage(usage, body['usage']);
        });
  }

  push(chunk: Buffer, latin1?: string): void {
    if (this.#sse && this.#id === undefined) this.#id = responseIdIn(chunk);
    this.#inner.push(chunk, latin1);
  }

  finish(whole?: boolean): TokenUsage | undefined {
    return this.#inner.finish(whole);
  }

  outputEstimate(): number | undefined {
    return this.#inner.outputEstimate();
  }

  responseId(): string | undefined {
    return this.#id;
  }

  itemIds(): readonly string[] {
    return this.#items;
  }

  #see(response: unknown): void {
    if (typeof response !== 'object' || response === null) return;
    if (this.#id === undefined && 'id' in response && typeof response.id === 'string') this.#id = response.id;
    // The terminal event's response (or the whole answer) lists every output item.
    if ('output' in response && Array.isArray(response.output) && response.output.length > 0) {
      this.#items = response.output.flatMap((item: unknown) => (typeof item === 'object' && item !== null && 'id' in item && typeof item.id === 'string' ? [item.id] : []));
    }
  }
}

const chatBody: Apply = (usage, body) => {
  if (!isUsage(body['usage'])) return false;
  applyChatUsage(usage, body['usage']);
  return true;
};

class SseUsageTap implements UsageTap {
  readonly #apply: Apply;
  /** Parse only lines whose usage is an object, not `null` (Messages, Chat and Responses: see createUsageTap, ResponsesTap). */
  readonly #objectUsage: boolean;
  readonly #usage = emptyUsage();
  #seen = false;
  /** The unfinished last line of the previous chunk. */
  #carry: Buffer | null = null;

  constructor(apply: Apply, objectUsage = false) {
    this.#apply = apply;
    this.#objectUsage = objectUsage;
  }

  outputEstimate(): undefined {
    return undefined;
  }

  push(chunk: Buffer, latin1?: string): void {
    // Searched as latin1 text (one character per byte, so offsets are byte offsets): String#indexOf
    // runs in V8, where Buffer#indexOf with a needle is a call into C++ per match (issue #17; see Needle).
    const text = latin1 ?? chunk.toString('latin1');
    let start = 0;
    if (this.#carry !== null) {
      const newline = text.indexOf('\n');
      if (newline === -1) {
        this.#carry = this.#carry.length + chunk.length > MAX_BUFFERED ? null : Buffer.concat([this.#carry, chunk]);
        return;
      }
      this.#line(Buffer.concat([this.#carry, chunk.subarray(0, newline)]));
      this.#carry = null;
      start = newline + 1;
    }
    let hit = this.#nextHit(text, start);
    while (hit !== -1) {
      const lineStart = Math.max(start, text.lastIndexOf('\n', hit) + 1);
      const lineEnd = text.indexOf('\n', hit);
      if (lineEnd === -1) {
        this.#carry = Buffer.from(chunk.subarray(lineStart));
        return;
      }
      this.#line(chunk.subarray(lineStart, lineEnd), true);
      start = lineEnd + 1;
      hit = this.#nextHit(text, start);
    }
    const lastNewline = text.lastIndexOf('\n');
    const tail = Math.max(start, lastNewline + 1);
    if (tail < chunk.length) this.#carry = Buffer.from(chunk.subarray(tail));
  }

  /**
   * The next `"usage"` from `from`; for a tap that reads only object usage, the next one that holds
   * an object, judged in the text (objectUsageAt), so a line whose usage is `null` is neither cut
   * out nor searched again as bytes.
   */
  #nextHit(text: string, from: number): number {
    return this.#objectUsage ? nextObjectUsage(text, from) : USAGE_TEXT.in(text, from);
  }

  /** `found`: the line is known to hold `"usage"`, with an object where only that is read (a carried line is not, and is searched). */
  #line(line: Buffer, found = false): void {
    if ((!found && line.indexOf(USAGE) === -1) || line.compare(DATA, 0, DATA.length, 0, DATA.length) !== 0) return;
    if (this.#objectUsage && !found && !usageIsObject(line)) return;
    let event: unknown;
    try {
      // A plain event (message_start, message_delta, a usage chunk) is read from its bytes (plain-json.ts).
      event = plainObjectOf(line, DATA.length, line.length) ?? JSON.parse(line.toString('utf8', DATA.length));
    } catch {
      return; // a malformed line is the stream's problem, reported elsewhere; it carries no usage
    }
    if (typeof event === 'object' && event !== null && this.#apply(this.#usage, event as Record<string, unknown>)) {
      this.#seen = true;
    }
  }

  finish(): TokenUsage | undefined {
    if (this.#carry !== null) this.#line(this.#carry);
    this.#carry = null;
    return this.#seen ? this.#usage : undefined;
  }
}

class JsonUsageTap implements UsageTap {
  readonly #apply: Apply;
  /** `apply` reads only `usage`: parse only its value (issue #17: a whole answer was parsed whole here, and again for usage.cost). */
  readonly #usageOnly: boolean;
  readonly #chunks: Buffer[] = [];
  #size = 0;
  #answer: UsageInAnswer | undefined;

  /** A cut JSON body is unreadable; what passed is counted at four bytes per token. */
  outputEstimate(): number {
    return Math.ceil(this.#size / 4);
  }

  constructor(apply: Apply, usageOnly = false) {
    this.#apply = apply;
    this.#usageOnly = usageOnly;
  }

  push(chunk: Buffer): void {
    this.#size += chunk.length;
    if (this.#size <= MAX_BUFFERED) this.#chunks.push(chunk);
  }

  finish(whole = false): TokenUsage | undefined {
    if (this.#size > MAX_BUFFERED || this.#chunks.length === 0) return undefined;
    const bytes = this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks);
    let body: unknown;
    try {
      body = (this.#usageOnly ? this.#usageAlone(bytes, whole) : undefined) ?? JSON.parse(bytes.toString('utf8'));
    } catch {
      return undefined;
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
    const usage = emptyUsage();
    return this.#apply(usage, body as Record<string, unknown>) ? usage : undefined;
  }

  answer(): UsageInAnswer | undefined {
    return this.#answer;
  }

  /**
   * `{ usage }` with the answer's top-level `usage` value parsed alone, or undefined when the scan
   * cannot place it (no such key, or one written with escapes): then the whole answer is parsed.
   */
  #usageAlone(bytes: Buffer, whole: boolean): Record<string, unknown> | undefined {
    const found = usageValueOf(bytes, MAX_ANSWER_DEPTH, whole);
    if (found?.closed !== true) return undefined;
    this.#answer = { bytes, usage: found };
    return { usage: found.value };
  }
}

/**
 * Whether some `"usage"` key in a line carried across chunks has an object value (`"usage":{` or
 * `"usage" : {`): judged as a chunk's text is (nextObjectUsage), on the line's own latin1 text.
 */
function usageIsObject(line: Buffer): boolean {
  return nextObjectUsage(line.toString('latin1'), 0) !== -1;
}

/**
 * Where the next `"usage"` at or after `from` in a chunk's latin1 text is a key whose value is an
 * object, or -1: only such a line carries usage (normalize.ts isUsage), and only such a line is
 * the Chat usage chunk the rewriter drops or gives a cost. Asked for usage, OpenAI sends
 * `"usage":null` on every other chunk (issue #17, seventeenth session).
 */
export function nextObjectUsage(text: string, from: number): number {
  let hit = USAGE_TEXT.in(text, from);
  while (hit !== -1 && !objectUsageAt(text, hit)) hit = USAGE_TEXT.in(text, hit + USAGE_TEXT.length);
  return hit;
}

/**
 * Whether the `"usage"` at `at` is a key whose value is an object; false where the text ends first
 * (an unfinished line is carried and read again whole).
 */
function objectUsageAt(text: string, at: number): boolean {
  let i = at + USAGE_TEXT.length;
  while (isJsonSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== 0x3a) return false; // ':'
  i++;
  while (isJsonSpace(text.charCodeAt(i))) i++;
  return text.charCodeAt(i) === 0x7b; // '{'
}

/** JSON's whitespace within a line: space, tab, carriage return. */
const isJsonSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0d;

const RESPONSE_ID = Buffer.from('"id":"resp_');

function responseIdIn(chunk: Buffer): string | undefined {
  const at = chunk.indexOf(RESPONSE_ID);
  if (at === -1) return undefined;
  const start = at + 6;
  const end = chunk.indexOf(0x22, start);
  return end === -1 || end - start > 200 ? undefined : chunk.toString('latin1', start, end);
}
