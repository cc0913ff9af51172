import { ERR, errorTypeForStatus, statusForErrorType, type GatewayError } from '../errors.ts';
import type { SseEvent } from '../plugin-host/api.ts';
import { asArray, asNumber, asObject, asString, isObject, type Json } from './convert/json.ts';

/**
 * Upstream SSE events → typed objects of the upstream's format. An in-band error, a malformed
 * event or a stream that ends before its terminator becomes a thrown GatewayError, which the core
 * turns into an in-band error for the client: a cut stream never looks complete.
 */

/**
 * The text the last parsed event came from: an event passed on unchanged (the same-format path)
 * is written to the client as the upstream wrote it, not stringified again (sse/encode.ts). It is
 * found by identity, so a changed event (a new object) or another stream's never takes it, and an
 * event encoded after the next one was parsed is simply stringified. An event is encoded in the
 * same turn it was parsed in, through the generators, so the slot is almost always the one asked
 * for. One slot, not a WeakMap keyed by every event (whose ephemeron entries kept each event alive
 * until a full GC) nor a property on it (defineProperty cost 0.5 µs an event): issue #17. Text
 * holding a line break is not kept: one `data:` line must carry it.
 */
let lastEvent: object | undefined;
let lastText = '';

/** The JSON text an event was parsed from, if it is passed on as it came. */
export function rawJson(event: object): string | undefined {
  return event === lastEvent ? lastText : undefined;
}

/** An event's data as a JSON object, or the upstream fault it is. */
export function parse(event: SseEvent, provider: string): Json {
  let value: unknown;
  try {
    value = JSON.parse(event.data);
  } catch {
    throw ERR.upstreamInvalid(provider, 'a stream event is not JSON');
  }
  if (!isObject(value)) throw ERR.upstreamInvalid(provider, 'a stream event is not a JSON object');
  if (event.data.indexOf('\n') === -1 && event.data.indexOf('\r') === -1) {
    lastEvent = value;
    lastText = event.data;
  }
  return value;
}

/** Chat chunks; ends at `[DONE]`. OpenRouter reports errors as `error` or `finish_reason: "error"` (protocol.md §C.6). */
export async function* chatChunksFromSse(events: AsyncIterable<SseEvent>, provider: string): AsyncGenerator<Json> {
  let finished = false;
  for await (const event of events) {
    if (event.data === '[DONE]') return;
    const chunk = parse(event, provider);
    if (isObject(chunk['error'])) throw reportedError(provider, chunk['error']);
    const choice = asObject(asArray(chunk['choices'])[0]);
    if (choice['finish_reason'] === 'error') throw reportedError(provider, asObject(choice['error']));
    // An empty string is no finish: the OpenAI SDK reads it as absent too.
    if (typeof choice['finish_reason'] === 'string' && choice['finish_reason'] !== '') finished = true;
    yield chunk;
  }
  // No [DONE]: complete only if the model said it had finished.
  if (!finished) throw ERR.upstreamInterrupted(provider);
}

/** Messages events; complete only with message_stop. `event: error` carries Anthropic's error type. */
export async function* messagesEventsFromSse(events: AsyncIterable<SseEvent>, provider: string): AsyncGenerator<Json> {
  for await (const event of events) {
    const data = parse(event, provider);
    if (event.event === 'error' || data['type'] === 'error') throw reportedError(provider, asObject(data['error']));
    yield data;
    if (data['type'] === 'message_stop') return;
  }
  throw ERR.upstreamInterrupted(provider);
}

/**
 * Responses events; complete only with `response.completed` or `response.incomplete`. A failure
 * is an `error` event or `response.failed` (responses-api.md §4.4).
 */
export async function* responsesEventsFromSse(events: AsyncIterable<SseEvent>, provider: string): AsyncGenerator<Json> {
  for await (const event of events) {
    const data = parse(event, provider);
    const type = data['type'];
    if (event.event === 'error' || type === 'error') throw reportedError(provider, isObject(data['error']) ? data['error'] : data);
    if (type === 'response.failed') throw reportedError(provider, asObject(asObject(data['response'])['error']));
    yield data;
    if (type === 'response.completed' || type === 'response.incomplete') return;
  }
  throw ERR.upstreamInterrupted(provider);
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
