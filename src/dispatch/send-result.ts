import { sendResponsesAnswer } from './responses-result.ts';
import { sendTranscription } from './transcription-result.ts';
import { ERR, GatewayError } from '../errors.ts';
import type { Json } from '../formats/convert/json.ts';
import { TemplatedEvent } from '../formats/templated-event.ts';
import { FORMAT_OF, type Endpoint, type TokenUsage, type WireFormat } from '../formats/wire.ts';
import { CLIENT_DISCONNECTED, type GatewayContext } from '../http/state.ts';
import type { Logger } from '../log.ts';
import type { FormattedBody, FormattedStream, PluginResult } from '../plugin-host/api.ts';
import { CHAT_DONE_FRAME, chatChunkFrame, messagesEventFrame, streamErrorFrame, type ResponsesPosition } from '../sse/encode.ts';
import { SseWriter } from '../sse/writer.ts';
import { applyChatChunk, applyChatUsage, applyMessagesEvent, applyMessagesUsage, applyResponsesEvent, applyResponsesUsage, emptyUsage } from '../usage/normalize.ts';
import { bridgeBody, bridgeEvents } from './bridge.ts';
import { eventWithoutAbsentNulls, withoutAbsentNulls } from '../formats/absent-fields.ts';
import { costOf } from '../billing/pricing.ts';
import { picoToUsdNumber } from '../billing/money.ts';
import { failed, SERVED, type Attempt, type AttemptResult } from '../routing/attempt.ts';
import { failureOf } from '../routing/failures.ts';
import { sendEmbeddings } from './embeddings-result.ts';
import { sendImages } from './images-result.ts';
import { sendAudio } from './audio-result.ts';
import { pluginRefusalOf } from './plugin-refusal.ts';

/**
 * Sends answers in the client's format: whole bodies through Koa, streams as SSE written here with
 * backpressure. Usage is read from the typed objects as they pass.
 */

/** The result format each endpoint with one of its own takes (issue #13). */
const OWN_RESULT_FORMAT: Partial<Readonly<Record<Endpoint, PluginResult['format']>>> = {
  count_tokens: 'count',
  embeddings: 'embeddings',
  images_generations: 'images',
  images_edits: 'images',
  audio_speech: 'audio',
  audio_transcriptions: 'transcription',
  audio_translations: 'transcription',
};
const isTextResult = (result: PluginResult): result is FormattedBody | FormattedStream => result.format === 'messages' || result.format === 'chat';

/** An in-process plugin's result: converted to the client's format if needed, then sent. */
export async function sendResult(ctx: GatewayContext, result: PluginResult, log: Logger, attempt: Attempt): Promise<AttemptResult> {
  const { route, body } = ctx.state;
  if (!route || !body) throw ERR.internal();
  const provider = route.provider.config.id;
  // Endpoints with a result format of their own take only that one; the text endpoints take either
  // text format, converted if need be.
  const own = OWN_RESULT_FORMAT[route.endpoint];
  if (own !== undefined || !isTextResult(result)) {
    const mismatch = failed(failureOf(ERR.pluginInvalidResult(provider, `a ${result.format} result does not answer ${route.endpoint}`)));
    if (result.format !== own) return mismatch;
    switch (result.format) {
      case 'count':
        ctx.body = result.body;
        return SERVED;
      case 'embeddings':
        attempt.commit();
        return sendEmbeddings(ctx, result, provider);
      case 'images':
        return sendImages(ctx, result, provider, attempt);
      case 'audio':
        return sendAudio(ctx, result, provider, attempt);
      case 'transcription':
        return sendTranscription(ctx, result, provider, attempt);
      default:
        return mismatch;
    }
  }
  if (route.endpoint === 'responses') return sendResponsesAnswer(ctx, result, provider, attempt);
  const clientFormat = FORMAT_OF[route.endpoint];
  if ('body' in result) {
    const answer = result.body as unknown as Json;
    attempt.commit();
    if (ctx.res.headersSent) {
      // Keepalives already began an SSE answer for this stream request; a whole body cannot follow.
      const err = ERR.pluginInvalidResult(provider, 'a whole answer to a stream request');
      ctx.state.outcome.error = err.code;
      ctx.res.end(streamErrorFrame(ctx.state.surface, err, ctx.state.requestId));
      return SERVED;
    }
    const sent =
      result.format !== clientFormat
        ? bridgeBody(result.format, clientFormat, answer, { requestId: ctx.state.requestId, model: route.upstreamModel })
        : clientFormat === 'messages'
          ? withoutAbsentNulls(answer)
          : answer;
    sendBody(ctx, clientFormat, sent);
    return SERVED;
  }
  const events = result.events as AsyncIterable<Json>;
  const converted =
    result.format === clientFormat
      ? clientFormat === 'messages'
        ? withoutAbsentNullEvents(events)
        : events
      : bridgeEvents(result.format, clientFormat, events, {
          requestId: ctx.state.requestId,
          model: route.upstreamModel,
          inputTokensEstimate: clientFormat === 'messages' ? (ctx.state.reservation?.inputTokens ?? 0) : 0,
          request: body,
          provider,
        });
  return sendStream(ctx, clientFormat, converted, provider, log, attempt);
}

export function sendBody(ctx: GatewayContext, format: WireFormat, body: Json): void {
  ctx.state.outcome.firstByteMs ??= performance.now() - ctx.state.startedAt;
  const usage = emptyUsage();
  if (format === 'messages') applyMessagesUsage(usage, body['usage']);
  else if (format === 'responses') applyResponsesUsage(usage, body['usage']);
  else applyChatUsage(usage, body['usage']);
  ctx.state.outcome.usage = usage;
  ctx.body = format === 'chat' ? withCost(body, usage, ctx) : body;
}

/** Chat answers carry usage.cost in USD at the model's prices (OpenRouter's convention; issue #4). */
function withCost(chunk: Json, usage: TokenUsage, ctx: GatewayContext): Json {
  const prices = ctx.state.route?.prices;
  const current = chunk['usage'];
  if (!prices || typeof current !== 'object' || current === null) return chunk;
  return { ...chunk, usage: { ...(current as Json), cost: picoToUsdNumber(costOf(usage, prices)) } };
}

/**
 * Writes a stream of typed events. The first event is pulled before anything is sent: a failure
 * before any output goes back to the failover loop (issue #5), to be retried or answered with a
 * real HTTP status. From the first event on, the stream is the client's, and a failure ends it
 * with an in-band error.
 */
export async function sendStream(
  ctx: GatewayContext,
  format: WireFormat,
  /** Events one by one, or in batches (a translated stream's chunk: issue #17), used before the next is asked for. */
  events: AsyncIterable<Json | readonly Json[]>,
  provider: string,
  log: Logger,
  attempt: Attempt,
  onWait?: (waiting: boolean) => void,
  upstream?: { started(): boolean; readonly whenStarted: Promise<void> },
  responses?: ResponsesStreamHooks,
): Promise<AttemptResult> {
  const { surface, requestId, outcome } = ctx.state;
  const iterator = events[Symbol.asyncIterator]();
  // Events a converter makes up before the upstream said anything (its own message_start and
  // ping) are held until the upstream's first event: an upstream that opens with an error is still
  // a failure the loop may retry (issue #5). They go out as soon as it has spoken, even if the
  // converter is still waiting on more (peer pitfall #26: message_start before the first token).
  const early: Json[] = [];
  let pending: Promise<IteratorResult<Json | readonly Json[]>> | undefined = iterator.next();
  const hold = (value: Json | readonly Json[]): void => {
    if (isBatch(value)) early.push(...value);
    else early.push(value);
  };
  try {
    if (upstream) {
      const started = upstream.whenStarted.then((): typeof STARTED => STARTED);
      while (pending && !upstream.started()) {
        const first: IteratorResult<Json | readonly Json[]> | typeof STARTED = await Promise.race([pending, started]);
        if (first === STARTED) break;
        if (first.done === true) pending = undefined;
        else {
          hold(first.value);
          pending = iterator.next();
        }
      }
      // Awaited below; a rejection meanwhile must not count as unhandled.
      pending?.catch(() => undefined);
    } else {
      const first = await pending;
      if (first.done === true) pending = undefined;
      else {
        hold(first.value);
        pending = iterator.next();
        pending.catch(() => undefined);
      }
    }
  } catch (err) {
    return failed(failureOf(asFailure(err, provider, requestId, log)));
  }
  if (!pending && early.length === 0) return failed(failureOf(ERR.pluginInvalidResult(provider, 'an empty stream')));
  outcome.firstByteMs ??= performance.now() - ctx.state.startedAt;
  attempt.commit();
  ctx.respond = false;
  const keepalive = responses ? (): string => messagesEventFrame(responses.keepalive() as { type: string }) : undefined;
  const writer = new SseWriter(ctx.res, surface, attempt.keepaliveMs, onWait, keepalive);
  writer.start();
  const usage: TokenUsage = emptyUsage();
  let sawUsage = false;
  let outputChars = 0;
  // Messages and Responses events are named (`event:` lines); Chat chunks are data only.
  const isChat = format === 'chat';
  const applyUsage = format === 'messages' ? applyMessagesEvent : format === 'responses' ? applyResponsesEvent : applyChatChunk;
  const deltaChars = format === 'messages' ? messagesDeltaChars : format === 'responses' ? responsesDeltaChars : chatDeltaChars;
  // A promise only when the client's buffer is full: one await per event less (issue #17).
  const send = (value: Json): Promise<void> | undefined => {
    // A translated stream's text delta carries no usage and writes its own frame: none of the
    // property reads below, which see every shape of a stream's events (issue #17).
    if (value instanceof TemplatedEvent) {
      outputChars += value.outputChars();
      return writer.write(value.frame());
    }
    let event = value;
    const carriesUsage = applyUsage(usage, event);
    if (carriesUsage) sawUsage = true;
    if (carriesUsage && isChat) event = withCost(event, usage, ctx);
    outputChars += deltaChars(event);
    return writer.write(isChat ? chatChunkFrame(event) : messagesEventFrame(event as { type: string }));
  };
  try {
    for (const event of early) {
      const wait = send(event);
      if (wait) await wait;
    }
    while (pending && !writer.closed) {
      const next: IteratorResult<Json | readonly Json[]> = await pending;
      if (next.done === true) break;
      if (isBatch(next.value)) {
        for (const event of next.value) {
          if (writer.closed) break;
          const wait = send(event);
          if (wait) await wait;
        }
      } else {
        const wait = send(next.value);
        if (wait) await wait;
      }
      pending = writer.closed ? undefined : iterator.next();
    }
    if (writer.closed) {
      outcome.error = CLIENT_DISCONNECTED;
      await iterator.return?.();
    }
    writer.end(isChat ? CHAT_DONE_FRAME : undefined);
  } catch (err) {
    const failure = asFailure(err, provider, requestId, log);
    outcome.error = writer.closed ? CLIENT_DISCONNECTED : failure.code;
    writer.end(streamErrorFrame(surface, failure, requestId, responses?.position()));
  } finally {
    if (sawUsage) outcome.usage = usage;
    outcome.outputEstimate = Math.ceil(outputChars / 4);
  }
  return SERVED;
}

/** An in-process plugin's Messages events, without the nulls the wire leaves out (issue #12). */
async function* withoutAbsentNullEvents(events: AsyncIterable<Json>): AsyncGenerator<Json> {
  for await (const event of events) yield eventWithoutAbsentNulls(event);
}

const STARTED: unique symbol = Symbol('upstream started');

const isBatch = (value: Json | readonly Json[]): value is readonly Json[] => Array.isArray(value);

/** A Responses stream's own state, which its keepalives and in-band error continue. */
export interface ResponsesStreamHooks {
  keepalive(): Json;
  position(): ResponsesPosition;
}

/** Characters of model output in a Responses delta event. */
function responsesDeltaChars(event: Json): number {
  const delta = event['delta'];
  return typeof delta === 'string' && event['type'] !== 'response.custom_tool_call_input.delta' ? delta.length : 0;
}

/** Characters of model output in a Messages delta event, for the estimate of a cut stream. */
function messagesDeltaChars(event: Json): number {
  if (event['type'] !== 'content_block_delta') return 0;
  const delta = event['delta'] as Json | undefined;
  const text = delta?.['text'] ?? delta?.['thinking'] ?? delta?.['partial_json'];
  return typeof text === 'string' ? text.length : 0;
}

/** Characters of model output in a Chat chunk. */
function chatDeltaChars(chunk: Json): number {
  const choices = chunk['choices'];
  const delta = Array.isArray(choices) ? ((choices[0] as Json | undefined)?.['delta'] as Json | undefined) : undefined;
  if (!delta) return 0;
  let chars = 0;
  for (const field of ['content', 'reasoning', 'reasoning_content', 'refusal'] as const) {
    if (typeof delta[field] === 'string') chars += delta[field].length;
  }
  if (Array.isArray(delta['tool_calls'])) chars += JSON.stringify(delta['tool_calls']).length;
  return chars;
}

function asFailure(err: unknown, provider: string, requestId: string, log: Logger): GatewayError {
  if (err instanceof GatewayError) return err;
  const refusal = pluginRefusalOf(err);
  if (refusal) return refusal;
  log.warn({ req_id: requestId, provider, err: err instanceof Error ? err.message : String(err) }, 'stream failed');
  return ERR.pluginFailed(provider);
}
