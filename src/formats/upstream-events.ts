import { ERR, errorTypeForStatus, statusForErrorType, type GatewayError } from '../errors.ts';
import type { SseEvent } from '../plugin-host/api.ts';
import { asArray, asNumber, asObject, asString, isObject, type Json } from './convert/json.ts';
import { EventTemplates, holesAt, type Holes } from './event-template.ts';
import { TemplatedEvent } from './templated-event.ts';
import { empty } from '../util/arrays.ts';

/**
 * Upstream SSE events → typed objects of the upstream's format. An in-band error, a malformed
 * event or a stream that ends before its terminator becomes a thrown GatewayError, which the core
 * turns into an in-band error for the client: a cut stream never looks complete.
 */

/**
 * The text a parsed event came from, carried by the event itself: an event passed on unchanged
 * (the same-format path) is written to the client as the upstream wrote it, not stringified again
 * (sse/encode.ts). It rides in a private field that a class constructor stamps on the object
 * JSON.parse made (a base constructor may return another object, and the subclass's fields are
 * then defined on that one): invisible to keys, spreads and JSON.stringify, so a copy or a changed
 * event (a new object) never carries it, and another stream's never matches. Not a WeakMap keyed
 * by every event (whose ephemeron entries kept each event alive until a full GC), nor a property
 * made with defineProperty (0.5 µs an event), nor the one slot for the last parsed event that came
 * before (issue #17): a chunk's events are now all parsed before the first is written
 * (parsedBatches), which a slot cannot follow. Text holding a line break is not kept: one `data:`
 * line must carry it.
 */
class Stamp {
  constructor(target: object) {
    // The object the subclass's fields are defined on: the parsed event, not a new one.
    return target;
  }
}

class UpstreamText extends Stamp {
  readonly #text: string;

  constructor(event: object, text: string) {
    super(event);
    this.#text = text;
  }

  static of(event: object): string | undefined {
    return #text in event ? (event as UpstreamText).#text : undefined;
  }
}

/** The JSON text an event was parsed from, if it is passed on as it came, or its encoder's template. */
export function rawJson(event: object): string | undefined {
  if (event instanceof TemplatedEvent) return event.json();
  return UpstreamText.of(event);
}

/**
 * An event's data as a JSON object, or the upstream fault it is. `keepText`: stamp it with the text
 * it came from, for a stream passed on in its own format. A translated stream's events are
 * converted and their text never written, and the stamp is 50–100 ns of a 400–800 ns parse.
 */
export function parse(event: SseEvent, provider: string, keepText = true): Json {
  let value: unknown;
  try {
    value = JSON.parse(event.data);
  } catch {
    throw ERR.upstreamInvalid(provider, 'a stream event is not JSON');
  }
  if (!isObject(value)) throw ERR.upstreamInvalid(provider, 'a stream event is not a JSON object');
  // Made for its stamp on `value`: the object it returns is `value` itself.
  if (keepText && event.data.indexOf('\n') === -1 && event.data.indexOf('\r') === -1) new UpstreamText(value, event.data);
  return value;
}

/**
 * One format's events, parsed and checked one SSE event at a time, synchronously: `push` adds the
 * typed event to `out` and says whether the stream is complete (its terminator came; anything after
 * it is not read), `end` throws when the upstream stopped before its terminator. A stream's
 * chunk is handled in one step, not an async step per event (issue #17: that cost as much as the
 * conversion): a translated stream's by canonical/stream.ts translateBatches, which converts each
 * event before parsing the next; a same-format stream's by parsedBatches below. The generators
 * below wrap the same parsers.
 */
export interface EventParser {
  push(event: SseEvent, out: Json[]): boolean;
  end(): void;
  /**
   * True when an event it pushed may be the same object as a later one, refilled (a translated
   * stream's, made with `reuseEvents`): each must be used before the next is pushed.
   */
  readonly reusesEvents?: boolean;
}

/** What every format's parser shares: its provider, and a stream that stops short is cut. */
abstract class UpstreamEventParser implements EventParser {
  protected readonly provider: string;
  /** Whether each event keeps the text it was parsed from (parse). */
  protected readonly keepText: boolean;
  /** A translated stream's: events that repeat an earlier one's text but for the holes are not parsed. */
  readonly #templates: EventTemplates | undefined;
  readonly reusesEvents: boolean;

  /**
   * `reuseEvents`: a template refills one event at each of its matches, and that event is the one
   * parsed when the template was learnt (EventTemplate.match), so no event, parsed or built, may be
   * kept or changed past the next push.
   */
  constructor(provider: string, keepText: boolean, holes: Holes, reuseEvents: boolean) {
    this.provider = provider;
    this.keepText = keepText;
    // A stream passed on in its own format is written as its events' own text, which a built event lacks.
    this.#templates = keepText || holes.byKey.size === 0 ? undefined : new EventTemplates(holes, reuseEvents);
    this.reusesEvents = this.#templates !== undefined && reuseEvents;
  }

  /** An event's data as a JSON object (parse). */
  protected json(event: SseEvent): Json {
    const templates = this.#templates;
    if (templates === undefined) return parse(event, this.provider, this.keepText);
    const built = templates.match(event.data);
    if (built !== undefined) return built;
    const value = parse(event, this.provider, false);
    templates.learn(event.data, value);
    return value;
  }

  abstract push(event: SseEvent, out: Json[]): boolean;

  end(): void {
    throw ERR.upstreamInterrupted(this.provider);
  }
}

/**
 * The strings that vary from one chunk of a Chat stream to the next (event-template.ts): text,
 * reasoning (`reasoning_content`, or `reasoning` with OpenRouter's copy in `reasoning_details`:
 * protocol.md §C.2, §D.8), a tool call's arguments, and OpenAI's `obfuscation` padding, which
 * differs in every chunk (§B.6).
 */
const CHAT_DELTA = ['choices', 0, 'delta'] as const;
const CHAT_HOLES = holesAt([
  [...CHAT_DELTA, 'content'],
  [...CHAT_DELTA, 'reasoning_content'],
  [...CHAT_DELTA, 'reasoning'],
  [...CHAT_DELTA, 'reasoning_details', 0, 'text'],
  [...CHAT_DELTA, 'tool_calls', 0, 'function', 'arguments'],
  ['obfuscation'],
]);

/** A Messages delta's text, tool input or thinking (protocol.md §A.8). */
const MESSAGES_HOLES = holesAt([['delta', 'text'], ['delta', 'partial_json'], ['delta', 'thinking']]);

/** Responses deltas carry a `sequence_number` that differs in every event: no template would match. */
const NO_HOLES = holesAt([]);

/** Chat chunks; ends at `[DONE]`. OpenRouter reports errors as `error` or `finish_reason: "error"` (protocol.md §C.6). */
export class ChatChunkParser extends UpstreamEventParser {
  #finished = false;

  constructor(provider: string, keepText = true, reuseEvents = false) {
    super(provider, keepText, CHAT_HOLES, reuseEvents);
  }

  push(event: SseEvent, out: Json[]): boolean {
    if (event.data === '[DONE]') return true;
    const chunk = this.json(event);
    if (isObject(chunk['error'])) throw reportedError(this.provider, chunk['error']);
    const choice = asObject(asArray(chunk['choices'])[0]);
    if (choice['finish_reason'] === 'error') throw reportedError(this.provider, asObject(choice['error']));
    // An empty string is no finish: the OpenAI SDK reads it as absent too.
    if (typeof choice['finish_reason'] === 'string' && choice['finish_reason'] !== '') this.#finished = true;
    out.push(chunk);
    return false;
  }

  override end(): void {
    // No [DONE]: complete only if the model said it had finished.
    if (!this.#finished) super.end();
  }
}

/** Messages events; complete only with message_stop. `event: error` carries Anthropic's error type. */
export class MessagesEventParser extends UpstreamEventParser {
  constructor(provider: string, keepText = true, reuseEvents = false) {
    super(provider, keepText, MESSAGES_HOLES, reuseEvents);
  }

  push(event: SseEvent, out: Json[]): boolean {
    const data = this.json(event);
    if (event.event === 'error' || data['type'] === 'error') throw reportedError(this.provider, asObject(data['error']));
    out.push(data);
    return data['type'] === 'message_stop';
  }
}

/**
 * Responses events; complete only with `response.completed` or `response.incomplete`. A failure
 * is an `error` event or `response.failed` (responses-api.md §4.4).
 */
export class ResponsesEventParser extends UpstreamEventParser {
  constructor(provider: string, keepText = true, reuseEvents = false) {
    super(provider, keepText, NO_HOLES, reuseEvents);
  }

  push(event: SseEvent, out: Json[]): boolean {
    const data = this.json(event);
    const type = data['type'];
    if (event.event === 'error' || type === 'error') throw reportedError(this.provider, isObject(data['error']) ? data['error'] : data);
    if (type === 'response.failed') throw reportedError(this.provider, asObject(asObject(data['response'])['error']));
    out.push(data);
    return type === 'response.completed' || type === 'response.incomplete';
  }
}

/** Events through a parser, one at a time. */
export async function* parsedEvents(events: AsyncIterable<SseEvent>, parser: EventParser): AsyncGenerator<Json> {
  const out: Json[] = [];
  for await (const event of events) {
    const done = parser.push(event, out);
    yield* out;
    empty(out);
    if (done) return;
  }
  parser.end();
}

export const chatChunksFromSse = (events: AsyncIterable<SseEvent>, provider: string): AsyncGenerator<Json> => parsedEvents(events, new ChatChunkParser(provider));
export const messagesEventsFromSse = (events: AsyncIterable<SseEvent>, provider: string): AsyncGenerator<Json> => parsedEvents(events, new MessagesEventParser(provider));
export const responsesEventsFromSse = (events: AsyncIterable<SseEvent>, provider: string): AsyncGenerator<Json> => parsedEvents(events, new ResponsesEventParser(provider));

/**
 * A whole chunk's events through a parser at once: the typed events of each batch, and nothing
 * after the terminator. The end is checked when the batches run out. An event the parser refuses
 * (an in-band error, malformed JSON) fails the stream after the events before it in its chunk are
 * handed on, as they would have been one at a time: the client gets them, then the error, and a
 * stream whose first chunk already had an event is the client's, not the failover loop's.
 */
export async function* parsedBatches(batches: AsyncIterable<readonly SseEvent[]>, parser: EventParser): AsyncGenerator<Json[]> {
  // A batch holds several events at once, which a parser that refills one event cannot give.
  if (parser.reusesEvents === true) throw new TypeError('parsedBatches needs a parser whose events are each their own');
  for await (const batch of batches) {
    const out: Json[] = [];
    let done = false;
    let failure: { readonly error: unknown } | undefined;
    for (const event of batch) {
      try {
        done = parser.push(event, out);
      } catch (error) {
        failure = { error };
        break;
      }
      if (done) break;
    }
    if (out.length > 0) yield out;
    if (failure) throw failure.error;
    if (done) return;
  }
  parser.end();
}

/**
 * An error body in any of the three shapes: Anthropic `{type, message}`, OpenAI
 * `{message, type, code}`, OpenRouter `{code: number, message}` (protocol.md §D.10).
 */
export function reportedError(provider: string, error: Json, status?: number, headers: Record<string, string> = {}): GatewayError {
  const code = asNumber(error['code']);
  const namedType = anthropicType(asString(error['type']));
  const httpStatus =
    status ??
    (code !== undefined && code >= 400 && code < 600 ? code : undefined) ??
    (namedType === undefined ? undefined : statusForErrorType(namedType)) ??
    502;
  // An upstream 503 means "overloaded, retry later" (protocol.md §D.10).
  const type = namedType ?? errorTypeForStatus(httpStatus === 503 ? 529 : httpStatus);
  const message = (asString(error['message']) ?? 'unknown error').slice(0, 2000);
  return ERR.upstreamReported(provider, httpStatus, type, message, headers);
}

const ANTHROPIC_TYPES = new Set([
  'invalid_request_error', 'authentication_error', 'billing_error', 'permission_error', 'not_found_error',
  'request_too_large', 'rate_limit_error', 'api_error', 'timeout_error', 'overloaded_error',
]);

function anthropicType(type: string | undefined): string | undefined {
  return type !== undefined && ANTHROPIC_TYPES.has(type) ? type : undefined;
}

/**
 * A whole answer that reports an error with HTTP 200 (OpenRouter does: protocol.md §C.6), in
 * either format, becomes the error it reports instead of an empty success.
 */
export function failureInAnswer(answer: Json, provider: string): GatewayError | undefined {
  if (isObject(answer['error'])) return reportedError(provider, answer['error']);
  if (answer['type'] === 'error') return reportedError(provider, asObject(answer['error']));
  const choice = asObject(asArray(answer['choices'])[0]);
  if (choice['finish_reason'] === 'error') return reportedError(provider, asObject(choice['error']));
  return undefined;
}
