import type { WireFormat } from '../formats/wire.ts';
import type { Terminator } from './sse-terminator.ts';
import { MarkerCounter } from '../util/marker-counter.ts';

const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
/**
 * `data:` and `event:`, byte by byte. #line compares a line's first bytes with these literals, not
 * in a loop over a Buffer of the prefix: the loop's loads cost a 64-event stream 0.6 µs more
 * (issue #17, fifteenth session; bench/RESULTS.md).
 */
const [D, A, T] = [0x64, 0x61, 0x74]; // d a t
const [E, V, N] = [0x65, 0x76, 0x6e]; // e v n
const COLON = 0x3a;
const FIELD_DATA = 'data:'.length;
const FIELD_EVENT = 'event:'.length;
const MESSAGE_STOP = Buffer.from('message_stop');
const ERROR = Buffer.from('error');
const DONE = Buffer.from('[DONE]');
const CHAT_ERROR = Buffer.from('{"error"');
/** `"finish_reason":"`, searched for by its name alone in text (finishedIn), whole in bytes past TEXT_MAX. */
const FINISH_REASON = 'finish_reason';
const FINISHED = Buffer.from('"finish_reason":"');
/** A read larger than this is scanned as bytes, without a latin1 copy. */
const TEXT_MAX = 256 * 1024;
const QUOTE = 0x22;
/**
 * Content events by name: Messages' `content_block_delta`, known by its length and its last six
 * bytes (no other Messages event of that length ends so; comparing all 19 bytes of 60 such lines
 * cost 1 µs per stream), and Responses' `*.delta`.
 */
const CONTENT_BLOCK_DELTA_LENGTH = 'content_block_delta'.length;
/** `_delta`'s bytes, last first. */
const [LAST_A, LAST_T, LAST_L, LAST_E, LAST_D, UNDERSCORE] = [0x61, 0x74, 0x6c, 0x65, 0x64, 0x5f];
const DOT_DELTA = Buffer.from('.delta');
/** A single event larger than this is passed on as it comes rather than held whole. */
const MAX_HELD = 8 * 1024 * 1024;

/**
 * Watches a natively proxied SSE stream at event granularity (issue #5), without changing a byte:
 * - only whole events are passed on, so a stream cut or stopped by the gateway always ends at an
 *   event boundary and the error event that follows is an event of its own (an SSE client
 *   dispatches only at a blank line, so holding a partial event back delays nothing it could use);
 * - it notes the stream's terminator (`event: message_stop`; Chat `data: [DONE]` or a
 *   finish_reason), so an upstream that ends cleanly without one is reported, not passed off as
 *   complete (reliability.md §2.2: fetch-mode proxies turn a reset into a clean end);
 * - it notes an upstream in-band error event, already in the client's format;
 * - it flags a malformed event: a data payload that cannot be a JSON object, array or [DONE]
 *   (checked on its first and last bytes, not parsed: truncation and garbage are what breaks
 *   streams in practice, and a full JSON.parse per event is the cost the native path avoids);
 * - it counts the content events it passes, what a stream cut before its usage is charged for.
 */
export class SseGuard {
  readonly #chat: boolean;
  #held: Buffer | null = null;
  /** Chunks of an unfinished event, joined only once a chunk could finish it (no O(n²) copying). */
  #parts: Buffer[] = [];
  #partsLength = 0;
  /** The stream ended properly, or reported its own error. */
  terminated = false;
  upstreamError = false;
  malformed = false;
  /**
   * Whole content events passed, one per delta event (issue #4's estimate for a stream cut before
   * its usage; events carry one or a few tokens, so it leans low): Messages' `content_block_delta`,
   * Responses' `*.delta`, and every data event but `[DONE]` and an error in Chat-shaped streams.
   * Counted from the event lines this scan reads anyway (issue #17: the usage tap searched the
   * bytes for a marker instead, 3 µs per 64-event stream, and counted Messages deltas twice, by
   * their `content_block_delta` and their `text_delta`).
   */
  contentEvents = 0;
  /** Messages names its content events exactly; Responses by a suffix. */
  readonly #messages: boolean;
  // The event being scanned.
  #firstData = -1;
  #lastData = -1;
  #hasData = false;
  #content = false;

  /** The bytes last scanned whole, and their latin1 text, until the usage tap takes it (takeText). */
  #scanned: Buffer | null = null;
  #text = '';

  /** An endpoint's own last event, such as speech's `"speech.audio.done"`, and how many end the stream (issue #13). */
  readonly #terminator: Terminator | undefined;
  /** Counted in the bytes passed on: each is passed once, and only whole events are (but one over MAX_HELD). */
  readonly #terminators: MarkerCounter | undefined;

  constructor(format: WireFormat, terminator?: Terminator) {
    this.#messages = format === 'messages';
    this.#chat = format === 'chat';
    this.#terminator = terminator;
    this.#terminators = terminator && new MarkerCounter(terminator.markers);
  }

  #passed(bytes: Buffer): Buffer {
    if (this.#terminator === undefined || this.#terminators === undefined) return bytes;
    this.#terminators.push(bytes);
    if (this.#terminators.count >= this.#terminator.count) this.terminated = true;
    return bytes;
  }

  /** The bytes of the events completed by this chunk (possibly empty); a malformed event and all after it are withheld. */
  push(chunk: Buffer): Buffer {
    if (this.malformed) return EMPTY;
    if (this.#held !== null && !mayEndEvent(chunk)) {
      this.#parts.push(chunk);
      this.#partsLength += chunk.length;
      if (this.#held.length + this.#partsLength <= MAX_HELD) return EMPTY;
    }
    const held = this.#held;
    const buf = held === null ? chunk : Buffer.concat([held, ...this.#parts, ...(this.#parts.at(-1) === chunk ? [] : [chunk])]);
    this.#parts = [];
    this.#partsLength = 0;
    let lineStart = 0;
    let eventStart = 0;
    let forward = 0;
    // Line ends are found in the bytes read as latin1 (one character per byte, so offsets are byte
    // offsets): String#indexOf runs in V8, where each Buffer#indexOf is a call into C++, 25 ns
    // against 8 (issue #17, fifteenth session; bench/RESULTS.md). Not past TEXT_MAX: there the
    // lines are an image's or audio's base64, and the copy would be all the work.
    const text = buf.length <= TEXT_MAX ? buf.toString('latin1') : null;
    this.#scanned = text === null ? null : buf;
    this.#text = text ?? '';
    // A JSON string escapes its quotes, so these bytes occur only as a real non-null finish_reason.
    if (this.#chat && !this.terminated && (text === null ? buf.indexOf(FINISHED) !== -1 : finishedIn(text))) this.terminated = true;
    let nl = text === null ? buf.indexOf(LF) : text.indexOf('\n');
    while (nl !== -1) {
      const end = nl > lineStart && buf[nl - 1] === CR ? nl - 1 : nl;
      if (end === lineStart) {
        // A blank line ends the event.
        if (this.#hasData && !(opens(this.#firstData) && closes(this.#lastData))) {
          this.malformed = true;
          this.#held = null;
          return buf.subarray(0, eventStart);
        }
        if (this.#content) this.contentEvents++;
        this.#hasData = false;
        this.#content = false;
        forward = nl + 1;
        eventStart = forward;
      } else {
        this.#line(buf, lineStart, end);
      }
      lineStart = nl + 1;
      // A line is most often followed by the blank one that ends its event: found by its first
      // byte, without another search (issue #17: a third of the searches of a Messages stream).
      const next = buf[lineStart];
      nl = next === LF ? lineStart : next === CR && buf[lineStart + 1] === LF ? lineStart + 1 : text === null ? buf.indexOf(LF, lineStart) : text.indexOf('\n', lineStart);
    }
    // The unfinished event is scanned again with its next bytes.
    this.#hasData = false;
    this.#content = false;
    const rest = buf.length - forward;
    if (rest === 0) this.#held = null;
    else if (rest > MAX_HELD) {
      this.#held = null;
      return this.#passed(buf);
    } else this.#held = Buffer.from(buf.subarray(forward));
    return this.#passed(forward === buf.length ? buf : buf.subarray(0, forward));
  }

  /**
   * The latin1 text of `chunk`, if the last push read it whole: the usage tap searches the same
   * bytes as latin1, and reading each chunk twice copied it twice (issue #17, fifteenth session).
   * Asked once: the text is let go either way, so an idle stream holds none.
   */
  takeText(chunk: Buffer): string | undefined {
    const text = this.#scanned === chunk ? this.#text : undefined;
    this.#scanned = null;
    this.#text = '';
    return text;
  }

  /** Bytes of an event the upstream never finished. */
  get pending(): boolean {
    return this.#held !== null || this.#parts.length > 0;
  }

  #line(buf: Buffer, start: number, end: number): void {
    // By the first byte first: most lines are `data:` or `event:`, and each would fail the other's comparison.
    const first = buf[start];
    if (first === D) {
      if (end - start < FIELD_DATA || buf[start + 1] !== A || buf[start + 2] !== T || buf[start + 3] !== A || buf[start + 4] !== COLON) return;
      let at = start + FIELD_DATA;
      if (buf[at] === SPACE) at++;
      let last = end - 1;
      while (last > at && buf[last] === SPACE) last--;
      if (!this.#hasData) this.#firstData = at < end ? (buf[at] ?? -1) : -1;
      this.#lastData = at < end ? (buf[last] ?? -1) : -1;
      this.#hasData = true;
      if (this.#chat) {
        if (startsWith(buf, at, end, DONE)) this.terminated = true;
        else if (startsWith(buf, at, end, CHAT_ERROR)) {
          this.upstreamError = true;
          this.terminated = true;
        } else this.#content = true;
      }
      return;
    }
    // Comments (":…") and other fields pass as they are.
    if (first !== E || this.#chat) return;
    if (end - start < FIELD_EVENT || buf[start + 1] !== V || buf[start + 2] !== E || buf[start + 3] !== N || buf[start + 4] !== T || buf[start + 5] !== COLON) return;
    let at = start + FIELD_EVENT;
    if (buf[at] === SPACE) at++;
    const length = end - at;
    if (this.#messages && length === CONTENT_BLOCK_DELTA_LENGTH) {
      // `content_block_delta`, known by its length and `_delta` (no other Messages event of that length ends so).
      if (buf[end - 1] === LAST_A && buf[end - 2] === LAST_T && buf[end - 3] === LAST_L && buf[end - 4] === LAST_E && buf[end - 5] === LAST_D && buf[end - 6] === UNDERSCORE) this.#content = true;
      return;
    }
    if (equals(buf, at, end, MESSAGE_STOP)) this.terminated = true;
    else if (equals(buf, at, end, ERROR)) {
      this.upstreamError = true;
      this.terminated = true;
    } else if (!this.#messages && endsWith(buf, at, end, DOT_DELTA)) this.#content = true;
  }
}

const EMPTY = Buffer.alloc(0);

/**
 * Whether `"finish_reason":"` occurs in the text. Searched by the name, then its quote and `":"`
 * compared: a search for the whole marker, which starts and ends with a quote, crawls through JSON
 * (quotes everywhere, and a Chat chunk's `"finish_reason":null` in every event) and cost a 64-event
 * stream 3.9 µs, by Buffer#indexOf or String#indexOf alike; by the name, 1.5 µs (issue #17,
 * fifteenth session). The name has no border, so stepping past a match skips no other.
 */
function finishedIn(text: string): boolean {
  for (let at = text.indexOf(FINISH_REASON); at !== -1; at = text.indexOf(FINISH_REASON, at + FINISH_REASON.length)) {
    const after = at + FINISH_REASON.length;
    if (text.charCodeAt(at - 1) === QUOTE && text.charCodeAt(after) === QUOTE && text.charCodeAt(after + 1) === COLON && text.charCodeAt(after + 2) === QUOTE) return true;
  }
  return false;
}

/** A JSON data payload's first byte: `{` or `[`. */
function opens(byte: number): boolean {
  return byte === 0x7b || byte === 0x5b;
}

/** Its last: `}` or `]`. */
function closes(byte: number): boolean {
  return byte === 0x7d || byte === 0x5d;
}
const LF_LF = Buffer.from('\n\n');
const LF_CRLF = Buffer.from('\n\r\n');

/** Whether a chunk can complete an event: it holds a blank line, or starts one after held bytes. */
function mayEndEvent(chunk: Buffer): boolean {
  return chunk[0] === LF || chunk[0] === CR || chunk.indexOf(LF_LF) !== -1 || chunk.indexOf(LF_CRLF) !== -1;
}

// Byte loops, not Buffer#compare: the prefixes are a few bytes, and compare's native call cost
// more than the loop (measured per line in --cpu-prof, issue #5).
function startsWith(buf: Buffer, start: number, end: number, prefix: Buffer): boolean {
  if (end - start < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (buf[start + i] !== prefix[i]) return false;
  return true;
}

function endsWith(buf: Buffer, start: number, end: number, suffix: Buffer): boolean {
  return end - start >= suffix.length && startsWith(buf, end - suffix.length, end, suffix);
}

function equals(buf: Buffer, start: number, end: number, word: Buffer): boolean {
  return end - start === word.length && startsWith(buf, start, end, word);
}
