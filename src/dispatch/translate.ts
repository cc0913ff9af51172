import { ERR, GatewayError, errorTypeForStatus } from '../errors.ts';
import { asArray, asObject, isObject, type Json } from '../formats/convert/json.ts';
import { failureInAnswer } from '../formats/upstream-events.ts';
import { FORMAT_OF } from '../formats/wire.ts';
import type { GatewayContext } from '../http/state.ts';
import { failed, retryAfterMs, SERVED, statusFailure, type Attempt, type AttemptResult } from '../routing/attempt.ts';
import { connectionFailure, failureOf } from '../routing/failures.ts';
import { errorFromBody, readErrorBody, retryHeaders } from '../proxy/upstream-error.ts';
import { UpstreamTimers } from '../proxy/upstream-timers.ts';
import type { Logger } from '../log.ts';
import type { CallContext, Translator, UpstreamRequest } from '../plugin-host/api.ts';
import type { ChatRequest, MessagesRequest, ResponsesRequest } from '../formats/wire.ts';
import { decodeSse } from '../sse/decode.ts';
import type { UpstreamAgents } from '../proxy/agents.ts';
import { postJson, type UpstreamAnswer } from '../proxy/upstream-client.ts';
import { planTranslation } from './bridge.ts';
import { callContextOf } from './call-context.ts';
import { pluginRefusalOf } from './plugin-refusal.ts';
import { sendBody, sendStream } from './send-result.ts';

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
  const call = callContextOf(ctx, log, attempt.cancel.signal);
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
  const request = await buildRequest(translator, plan.upstreamBody, call);
  const timers = new UpstreamTimers(attempt.timeouts);
  const reasonOf = (err: unknown): GatewayError => {
    if (attempt.cancel.aborted) return attempt.cancel.reason instanceof GatewayError ? attempt.cancel.reason : ERR.clientClosed();
    if (timers.fired) return ERR.upstreamTimeout(provider, timers.fired.kind, timers.fired.ms);
    return err instanceof GatewayError ? err : ERR.upstreamInterrupted(provider);
  };
  let response: UpstreamAnswer;
  outcome.dispatched = true;
  try {
    response = await postJson(agents, new URL(request.url), request.headers, Buffer.from(JSON.stringify(request.body)), call.signal, timers);
  } catch (err) {
    if (attempt.cancel.aborted) return failed(failureOf(reasonOf(err)));
    log.warn({ req_id: requestId, provider, err: err instanceof Error ? err.message : String(err) }, 'upstream request failed');
    return failed(connectionFailure(provider, timers.fired));
  }
  outcome.upstreamStatus = response.status;
  if (response.status < 200 || response.status >= 300) {
    const error = await upstreamFailure(response, translator, call, provider, log, () => timers.touch());
    if (response.status === 401 || response.status === 402) return failed(failureOf(error));
    return failed(statusFailure(response.status, error, retryAfterMs(response.header)));
  }

  if (body['stream'] === true) {
    if (!(response.header('content-type') ?? '').startsWith('text/event-stream')) {
      response.body.resume();
      return failed(failureOf(ERR.upstreamInvalid(provider, 'a stream was asked for and something else came back')));
    }
    // The parsers stop at [DONE] or message_stop, usually just before the body ends. Leaving a
    // for-await early destroys a Node stream and its keep-alive socket, which cost a new upstream
    // connection per translated stream (seen as internalConnect in --cpu-prof): iterate without
    // destroying, then drain the rest so the socket returns to the pool.
    const bytes = response.body.iterator({ destroyOnReturn: false }) as AsyncIterableIterator<Uint8Array>;
    const events = decodeSse(bytes, reasonOf, () => timers.touch());
    try {
      // While the client is slow to read, the upstream waits on us: not an idle upstream.
      const onWait = (waiting: boolean): void => (waiting ? timers.hold() : timers.resume());
      const upstream = { started: plan.upstreamStarted, whenStarted: plan.whenUpstreamStarted };
      const served = await sendStream(ctx, clientFormat, plan.stream(events), provider, log, attempt, onWait, upstream, plan.responsesStream);
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
  attempt.commit();
  const converted = plan.answer(answer);
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

function buildRequest(translator: Translator, body: Json, call: CallContext): UpstreamRequest | Promise<UpstreamRequest> {
  // The body was produced by the shared encoders for this upstream's format.
  switch (translator.upstream) {
    case 'chat':
      return translator.request(body as unknown as ChatRequest, call);
    case 'messages':
      return translator.request(body as unknown as MessagesRequest, call);
    case 'responses':
      return translator.request(body as unknown as ResponsesRequest, call);
    case 'custom':
      return translator.request(body, call);
  }
}

async function upstreamFailure(
  response: UpstreamAnswer,
  translator: Translator,
  call: CallContext,
  provider: string,
  log: Logger,
  onChunk: () => void,
): Promise<GatewayError> {
  // Capped: an upstream's error body can be anything, and only its first 64 KB can matter.
  const text = (await readErrorBody(response.body, onChunk))?.body.toString('utf8') ?? '';
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: kept as text for the plugin's error hook
  }
  // As on native routes: the provider refusing the gateway's own key or credit is an operator's
  // problem, and its body may echo part of the key (reliability.md §4.3).
  if (response.status === 401) {
    log.error({ req_id: call.requestId, provider }, 'upstream rejected the provider API key');
    return ERR.upstreamRejectedCredentials(provider);
  }
  if (response.status === 402) return ERR.upstreamBilling(provider);
  const headers = retryHeaders(response.header);
  if (translator.error) {
    const mapped = translator.error({ status: response.status, header: response.header, body: parsed }, call);
    return ERR.upstreamReported(provider, mapped.status, mapped.type ?? errorTypeForStatus(mapped.status), mapped.message, headers);
  }
  return errorFromBody(text, response.status, provider, headers);
}
