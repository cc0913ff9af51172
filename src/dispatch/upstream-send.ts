import { ERR, errorTypeForStatus, type GatewayError } from '../errors.ts';
import type { Json } from '../formats/convert/json.ts';
import type { ChatRequest, MessagesRequest, ResponsesRequest } from '../formats/wire.ts';
import type { Logger } from '../log.ts';
import type { CallContext, Translator, UpstreamRequest, UpstreamResponse } from '../plugin-host/api.ts';
import type { UpstreamAgents } from '../proxy/agents.ts';
import { postJson, type UpstreamAnswer } from '../proxy/upstream-client.ts';
import { errorFromBody, readErrorBody, retryHeaders } from '../proxy/upstream-error.ts';
import type { UpstreamTimers } from '../proxy/upstream-timers.ts';
import type { Cancellation } from '../routing/cancellation.ts';
import { failed, retryAfterMs, statusFailure, type AttemptResult } from '../routing/attempt.ts';
import { connectionFailure, failureOf } from '../routing/failures.ts';
import { pluginRefusalOf } from './plugin-refusal.ts';

/** A refusal read whole: what the plugin's `retry` and `error` hooks see. */
interface Refusal extends UpstreamResponse {
  readonly text: string;
}

export interface SendInput {
  readonly translator: Translator;
  readonly body: Json;
  readonly call: CallContext;
  readonly agents: UpstreamAgents;
  /** The timers for a try: the attempt's for the first, new ones for a retry (each watches its own request). */
  timers(first: boolean): UpstreamTimers;
  readonly provider: string;
  readonly log: Logger;
  /** The error a broken request or body stands for (the client left, a timer fired). */
  reasonOf(err: unknown): GatewayError;
  /** The attempt's cancellation: it stops the upstream request when the client leaves or at shutdown. */
  readonly cancel: Cancellation;
  /** The attempt's trace context, sent upstream (and signed with the rest) when traces are on. */
  readonly traceparent?: string | undefined;
  /** Hears each upstream answer's status and headers. */
  onResponse(status: number, header: (name: string) => string | undefined): void;
}

/**
 * Builds, signs and sends a translated request, the plugin's hooks in order: `request` (which may
 * fetch credentials), `sign` over the exact bytes (issue #15: re-signed on every try, as a
 * signature made early can expire in a queue), and on a refusal `retry`, which may ask for one
 * more try after refreshing credentials or correcting its clock. Resolves with a 2xx answer, or
 * with the failure the failover loop gets.
 */
export async function sendTranslated(input: SendInput): Promise<UpstreamAnswer | AttemptResult> {
  const { translator, call, provider, log } = input;
  for (let tries = 0; ; tries++) {
    const timers = input.timers(tries === 0);
    let prepared;
    try {
      prepared = await prepare(translator, input.body, call, input.traceparent);
    } catch (err) {
      const refused = pluginRefusalOf(err);
      if (refused) return failed(failureOf(refused));
      if (input.cancel.aborted) return failed(failureOf(input.reasonOf(err)));
      // The plugin's message names what failed, never the credential itself.
      log.error({ req_id: call.requestId, provider, err: err instanceof Error ? err.message : String(err) }, 'provider plugin could not prepare the upstream request');
      return failed(failureOf(ERR.upstreamCredentialsUnavailable(provider)));
    }
    let response: UpstreamAnswer;
    try {
      response = await postJson(input.agents.for(prepared.url, provider), prepared.url, prepared.headers, prepared.body, input.cancel, timers);
    } catch (err) {
      if (input.cancel.aborted) return failed(failureOf(input.reasonOf(err)));
      log.warn({ req_id: call.requestId, provider, err: err instanceof Error ? err.message : String(err) }, 'upstream request failed');
      return failed(connectionFailure(provider, timers.fired));
    }
    input.onResponse(response.status, response.header);
    if (response.status >= 200 && response.status < 300) return response;
    const refusal = await readRefusal(response, () => timers.touch());
    // This try is over: its timers must not fire on the next one's behalf.
    timers.clear();
    if (tries === 0 && translator.retry && (await translator.retry(refusal, call))) {
      log.info({ req_id: call.requestId, provider, status: response.status }, 'upstream refused the request; sending it once more, as the plugin asked');
      continue;
    }
    const { error, nextRoute } = upstreamFailure(refusal, translator, call, provider, log);
    // The plugin said this route cannot serve it and another may (credentials refused, a model not
    // enabled in this region): the next route is tried, across clouds (issue #15).
    if (nextRoute) return failed({ error, retry: 'next', retryAfterMs: null, routeFault: true });
    if (response.status === 401 || response.status === 402 || error.code === 'GW_ERR_UPSTREAM_AUTH') return failed(failureOf(error));
    // The status the caller gets decides the retry: a plugin may map Bedrock's 400 quota error to 429.
    return failed(statusFailure(error.status, error, retryAfterMs((name) => error.headers[name] ?? response.header(name))));
  }
}

async function prepare(translator: Translator, body: Json, call: CallContext, traceparent: string | undefined): Promise<{ url: URL; headers: Record<string, string>; body: Buffer }> {
  const request = await buildRequest(translator, body, call);
  const url = new URL(request.url);
  const bytes = Buffer.from(JSON.stringify(request.body));
  const headers: Record<string, string> = { ...request.headers, 'content-type': 'application/json', ...(traceparent && { traceparent }) };
  if (translator.sign) Object.assign(headers, await translator.sign({ method: 'POST', url, headers, body: bytes }, call));
  return { url, headers, body: bytes };
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

async function readRefusal(response: UpstreamAnswer, onChunk: () => void): Promise<Refusal> {
  // Capped: an upstream's error body can be anything, and only its first 64 KB can matter.
  const text = (await readErrorBody(response.body, onChunk))?.body.toString('utf8') ?? '';
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text for the plugin's hooks
  }
  return { status: response.status, header: response.header, body, text };
}

function upstreamFailure(refusal: Refusal, translator: Translator, call: CallContext, provider: string, log: Logger): { error: GatewayError; nextRoute: boolean } {
  // As on native routes: the provider refusing the gateway's own key or credit is an operator's
  // problem, and its body may echo part of the key (reliability.md §4.3).
  const credentials = (): GatewayError => {
    log.error({ req_id: call.requestId, provider, status: refusal.status }, 'upstream rejected the provider API key');
    return ERR.upstreamRejectedCredentials(provider);
  };
  if (refusal.status === 402) return { error: ERR.upstreamBilling(provider), nextRoute: false };
  // The plugin may say the refusal was the credentials (then another route may have good ones).
  const mapped = translator.error?.(refusal, call);
  if (mapped?.credentials) return { error: credentials(), nextRoute: true };
  if (refusal.status === 401) return { error: credentials(), nextRoute: false };
  const headers = retryHeaders(refusal.header);
  if (mapped) {
    if (mapped.retryAfterSeconds !== undefined && headers['retry-after'] === undefined) headers['retry-after'] = String(Math.ceil(mapped.retryAfterSeconds));
    return { error: ERR.upstreamReported(provider, mapped.status, mapped.type ?? errorTypeForStatus(mapped.status), mapped.message, headers), nextRoute: mapped.failover === true };
  }
  return { error: errorFromBody(refusal.text, refusal.status, provider, headers), nextRoute: false };
}
