import { ERR, GatewayError } from '../errors.ts';
import { asArray, asObject, isObject, type Json } from '../formats/convert/json.ts';
import { failureInAnswer } from '../formats/upstream-events.ts';
import { COUNTING, FORMAT_OF } from '../formats/wire.ts';
import type { GatewayContext } from '../http/state.ts';
import { failed, SERVED, type Attempt, type AttemptResult } from '../routing/attempt.ts';
import { failureOf } from '../routing/failures.ts';
import { UpstreamTimers } from '../proxy/upstream-timers.ts';
import type { Logger } from '../log.ts';
import type { Translator } from '../plugin-host/api.ts';
import { decodeFrameBatches, decodeFrames } from '../sse/decode-frames.ts';
import { decodeSse, decodeSseBatches } from '../sse/decode.ts';
import type { UpstreamAgents } from '../proxy/agents.ts';
import { pluginDecodeError } from '../formats/canonical/plugin-codec.ts';
import { answerLocalCount, countBody } from './local-count.ts';
import { planTranslation } from './bridge.ts';
import { callContextOf } from './call-context.ts';
import { pluginRefusalOf } from './plugin-refusal.ts';
import { sendBody, sendStream } from './send-result.ts';
import { sendTranslated } from './upstream-send.ts';
import { upstreamRequestId } from '../proxy/upstream-request-id.ts';

/**
 * Serves a request through a translating plugin: the request is converted to the upstream's
 * format, sent over the shared keep-alive pools (aborted when the client leaves), and the answer
 * or stream converted back. A failure before the client got anything goes back to the failover
 * loop (issue #5); later ones end the stream in-band.
 */
export async function serveTranslated(
  ctx: GatewayContext,
  translator: Translator,
  agents: UpstreamAgents,
  log: Logger,
  attempt: Attempt,
): Promise<AttemptResult> {
  const { route, body, requestId, outcome } = ctx.state;
  if (!route || !body) throw ERR.internal();
  const provider = route.provider.config.id;
  const clientFormat = FORMAT_OF[route.endpoint];
  outcome.kind = 'translated';
  const call = callContextOf(ctx, log, attempt.cancel);
  let plan: ReturnType<typeof planTranslation>;
  try {
    plan = planTranslation({
      clientFormat,
      body,
      translator,
      requestId,
      upstreamModel: route.upstreamModel,
      maxOutputTokens: route.model.maxOutputTokens,
      provider,
      inputTokensEstimate: ctx.state.reservation?.inputTokens ?? 0,
    });
  } catch (err) {
    // A plugin's own format refusing what the caller sent (PluginRequestError) is the caller's 4xx.
    throw pluginRefusalOf(err) ?? err;
  }
  // Each try gets its own timers (a retry's must watch its own request); the last one's go on
  // watching the answer's body.
  let timers = new UpstreamTimers(attempt.timeouts);
  const reasonOf = (err: unknown): GatewayError => {
    if (attempt.cancel.aborted) return attempt.cancel.reason instanceof GatewayError ? attempt.cancel.reason : ERR.clientClosed();
    if (timers.fired) return ERR.upstreamTimeout(provider, timers.fired.kind, timers.fired.ms);
    return err instanceof GatewayError ? err : ERR.upstreamInterrupted(provider);
  };
  outcome.dispatched = true;
  const sent = await sendTranslated({
    translator,
    body: plan.upstreamBody,
    call,
    agents,
    timers: (first) => (first ? timers : (timers = new UpstreamTimers(attempt.timeouts))),
    provider,
    log,
    reasonOf,
    traceparent: ctx.state.traceparent,
    cancel: attempt.cancel,
    onResponse: (status, header) => {
      outcome.upstreamStatus = status;
      const upstreamId = upstreamRequestId(header);
      if (upstreamId !== undefined) outcome.upstreamRequestId = upstreamId;
    },
  });
  if (!('status' in sent)) {
    // An upstream that could not count (a model or profile its count API does not take) leaves
    // the client the local estimate, as a route that cannot count would: never an error for a count.
    if (COUNTING.has(route.endpoint) && !attempt.cancel.aborted) {
      log.warn({ req_id: requestId, provider, status: outcome.upstreamStatus }, 'upstream token count failed; answering with the local estimate');
      await answerLocalCount(ctx);
      return SERVED;
    }
    return sent;
  }
  const response = sent;

  if (body['stream'] === true) {
    const framing = translator.streamFraming;
    if (!(response.header('content-type') ?? '').startsWith(framing?.contentType ?? 'text/event-stream')) {
      response.body.resume();
      return failed(failureOf(ERR.upstreamInvalid(provider, 'a stream was asked for and something else came back')));
    }
    // The parsers stop at [DONE] or message_stop, usually just before the body ends. Leaving a
    // for-await early destroys a Node stream and its keep-alive socket, which cost a new upstream
    // connection per translated stream (seen as internalConnect in --cpu-prof): iterate without
    // destroying, then drain the rest so the socket returns to the pool.
    const bytes = response.body.iterator({ destroyOnReturn: false }) as AsyncIterableIterator<Uint8Array>;
    // A chunk's events at a time where the plan can take them so (issue #17), else one by one;
    // SSE or a plugin's own framing alike.
    const touch = (): void => timers.touch();
    const onCorrupt = (err: unknown): GatewayError => pluginDecodeError(err, provider);
    const converted = plan.streamBatches
      ? plan.streamBatches(framing ? decodeFrameBatches(bytes, framing.decoder(call), reasonOf, onCorrupt, touch) : decodeSseBatches(bytes, reasonOf, touch))
      : plan.stream(framing ? decodeFrames(bytes, framing.decoder(call), reasonOf, onCorrupt, touch) : decodeSse(bytes, reasonOf, touch));
    try {
      // While the client is slow to read, the upstream waits on us: not an idle upstream.
      const onWait = (waiting: boolean): void => (waiting ? timers.hold() : timers.resume());
      const upstream = { started: plan.upstreamStarted, whenStarted: plan.whenUpstreamStarted };
      const attemptStartedAt = outcome.attemptStartedAt;
      // The upstream's first event: its time to first chunk (issue #16).
      if (attemptStartedAt !== undefined) void plan.whenUpstreamStarted.then(() => (outcome.upstreamFirstChunkMs = performance.now() - attemptStartedAt));
      const served = await sendStream(ctx, clientFormat, converted, provider, log, attempt, onWait, upstream, plan.responsesStream);
      const final = plan.responsesStream?.response();
      if (final && outcome.error === undefined) keepResponse(ctx, final);
      return served;
    } finally {
      // After a clean end, drain the little that is left so the socket returns to the pool; after
      // a failure (the client left, an error mid-way) stop the upstream instead of letting it run.
      if (!response.body.readableEnded && !response.body.destroyed) {
        if (outcome.error === undefined) response.body.resume();
        else response.body.destroy();
      }
      // Bill what the upstream reported, whether or not the client asked to see it.
      const usage = plan.streamUsage();
      if (usage) outcome.usage = usage;
    }
  }
  let text: string;
  try {
    text = await response.text();
  } catch (err) {
    return failed(failureOf(reasonOf(err)));
  }
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    return failed(failureOf(ERR.upstreamInvalid(provider, 'the answer is not JSON')));
  }
  if (!isObject(answer)) return failed(failureOf(ERR.upstreamInvalid(provider, 'the answer is not a JSON object')));
  const failure = failureInAnswer(answer, provider);
  if (failure) return failed(failureOf(failure));
  const counted = COUNTING.has(route.endpoint) ? translator.inputTokens : undefined;
  if (counted) {
    // The upstream's own count, in the endpoint's shape (issue #15); counting is free.
    const inputTokens = counted(answer);
    if (!Number.isInteger(inputTokens) || inputTokens < 0) return failed(failureOf(ERR.upstreamInvalid(provider, 'its token count is missing')));
    attempt.commit();
    ctx.body = countBody(route.endpoint, inputTokens);
    return SERVED;
  }
  let converted: Json;
  try {
    converted = plan.answer(answer);
  } catch (err) {
    // Before anything is sent: a failure the upstream reported inside its answer can still fail
    // over (issue #15: a plugin format's UpstreamError).
    return failed(failureOf(pluginDecodeError(err, provider)));
  }
  attempt.commit();
  if (clientFormat === 'responses') keepResponse(ctx, converted);
  sendBody(ctx, clientFormat, converted);
  return SERVED;
}

/** A translated Responses answer: Junction keeps it, as its upstream was asked not to (issue #14). */
function keepResponse(ctx: GatewayContext, response: Json): void {
  const { outcome } = ctx.state;
  outcome.responseId = String(response['id']);
  outcome.responseItems = asArray(response['output']).map((item) => String(asObject(item)['id']));
  outcome.keptResponse = response;
}
