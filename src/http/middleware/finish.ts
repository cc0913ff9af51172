import { costOf } from '../../billing/pricing.ts';
import type { Settlements, Tracking } from '../../billing/settlements.ts';
import { COUNTING, type TokenUsage } from '../../formats/wire.ts';
import type { Logger } from '../../log.ts';
import { emptyUsage } from '../../usage/normalize.ts';
import { transcriptionFallback } from '../../usage/transcription.ts';
import type { RequestRecord, UsageSink } from '../../usage/sink.ts';
import { CLIENT_DISCONNECTED, headOf, type GatewayMiddleware, type GatewayState } from '../state.ts';
import { endSpan, type Tracing } from '../../telemetry/tracing.ts';

/**
 * Ends every request, streams included (the chain below resolves only once the response is done
 * or the client has gone). For an authenticated model request it settles the ledger: the hold is
 * released, the real cost charged and the row written, in one transaction (issue #4). Then it
 * writes the request's log line. Each request is tracked until then, so a shutdown waits for its
 * charge.
 */
export function createRequestFinish(settlements: Settlements, sink: UsageSink, log: Logger, tracing?: Tracing): GatewayMiddleware {
  return (ctx, next) =>
    settlements.track(async (tracking) => {
      // The span is named by its route template once routed (bounded names), its path until then.
      if (tracing) ctx.state.trace = tracing.startRequest(`${ctx.method} ${ctx.path}`, (name) => ctx.get(name));
      try {
        await next();
      } finally {
        const status = ctx.respond === false ? ctx.res.statusCode : ctx.status;
        await finish(ctx.state, status, ctx.method, ctx.path, settlements, tracking, sink, log);
        const template = (ctx as { _matchedRoute?: unknown })._matchedRoute;
        ctx.state.trace?.span.updateName(`${ctx.method} ${typeof template === 'string' ? template : 'other'}`);
        ctx.state.trace?.end(status, spanAttributes(ctx.state));
      }
    }, ctx.state.requestId);
}

/** The GenAI conventions' attributes of a request span, and Junction's (never a key or a prompt). */
function spanAttributes(state: GatewayState): Record<string, string | number> {
  const { route, outcome } = state;
  const usage = outcome.usage;
  return {
    'http.request.id': state.requestId,
    ...(route && { 'gen_ai.operation.name': route.endpoint, 'gen_ai.request.model': route.model.id, 'gen_ai.provider.name': route.provider.config.id, 'junction.upstream_model': route.upstreamModel }),
    ...(outcome.kind && { 'junction.route': outcome.kind }),
    ...(usage && { 'gen_ai.usage.input_tokens': usage.input, 'gen_ai.usage.output_tokens': usage.output, 'gen_ai.usage.cache_read.input_tokens': usage.cacheRead, 'gen_ai.usage.cache_creation.input_tokens': usage.cacheWrite }),
    ...(outcome.error && { 'error.type': outcome.error }),
  };
}

/** Marks a model endpoint's request for the ledger; first in each model route's chain. */
export const markLedgered: GatewayMiddleware = (ctx, next) => {
  ctx.state.ledger = true;
  return next();
};

async function finish(
  state: GatewayState,
  status: number,
  method: string,
  path: string,
  settlements: Settlements,
  tracking: Tracking,
  sink: UsageSink,
  log: Logger,
): Promise<void> {
  const { usage, estimated } = finalUsage(state, status);
  let charged: bigint | undefined;
  // By the route's own mark, not the path: the router also serves /V1/Messages and trailing slashes.
  if (state.key && state.ledger) {
    try {
      // count_tokens is free, like Anthropic's own, whatever the model's per-request fee.
      const cost = usage && state.route && !COUNTING.has(state.route.endpoint) ? costOf(usage, state.route.prices, state.reservation?.imagePrice) : 0n;
      const span = state.trace?.child('junction.settle', { 'junction.cost_pico': String(cost) });
      // Each clock read once: the line that read the monotonic one twice, with the Date, took 44%
      // of this function's samples in a cpu-profile of the server (issue #17, thirty-fourth session).
      const durationMs = performance.now() - state.startedAt;
      const settled = await settlements.settle({
        requestId: state.requestId,
        keyId: state.key.id,
        endpoint: state.route?.endpoint ?? null,
        model: state.route?.model.id ?? null,
        provider: state.route?.provider.config.id ?? null,
        upstreamModel: state.route?.upstreamModel ?? null,
        route: state.outcome.kind ?? null,
        usage: usage ?? emptyUsage(),
        cost,
        status,
        outcome: state.outcome.error ?? (status < 400 ? 'ok' : 'error'),
        estimated,
        startedAtMs: state.arrivedAtMs,
        firstByteMs: state.outcome.firstByteMs ?? null,
        durationMs,
      }, tracking);
      charged = settled?.charged;
      if (span) endSpan(span, settled ? undefined : 'settlement_deferred');
      if (settled && settled.uncollected > 0n) {
        log.warn({ req_id: state.requestId, uncollected_pico: String(settled.uncollected) }, 'request cost more than its hold and the balance left');
      }
    } catch (err) {
      // Settlements.settle keeps what the store refused; this is a bug in the entry itself.
      log.error({ req_id: state.requestId, err }, 'ledger settlement failed');
    }
  }
  try {
    sink.record(recordOf(method, path, status, state, usage, estimated, charged));
  } catch (err) {
    // A failing sink must not turn a served request into an error, nor vanish silently.
    log.error({ req_id: state.requestId, err }, 'usage sink failed');
  }
}

/**
 * The usage to charge (issue #4):
 * - a response that completed is charged what it reported;
 * - one that started and then failed (client gone, upstream reset, stream error), or completed
 *   without reporting usage, is charged the usage seen plus an estimate of what passed, marked
 *   estimated;
 * - a client that left after the request went upstream but before any answer is charged the
 *   input estimate, marked estimated: the upstream read the prompt, as the crash reconciliation
 *   also assumes;
 * - anything that failed before any output costs nothing.
 */
function finalUsage(state: GatewayState, status: number): { usage: TokenUsage | undefined; estimated: boolean } {
  const { outcome, reservation, route } = state;
  const seen = outcome.usage;
  if (route === undefined || COUNTING.has(route.endpoint) || outcome.kind === 'local') return { usage: seen, estimated: false };
  const inputEstimate = reservation?.inputTokens ?? 0;
  // A transcription's input is its audio: heard by the upstream once the upload reached it.
  const heard = reservation?.audioMs !== undefined ? transcriptionFallback(route, state.upload, reservation.audioMs, 0).usage : emptyUsage();
  const answered = outcome.firstByteMs !== undefined && status < 400;
  if (answered) {
    if (seen && outcome.error === undefined) return { usage: seen, estimated: outcome.estimated === true };
    const base = seen ?? heard;
    const input = base.input > 0 || base.cacheRead > 0 || base.cacheWrite > 0 ? base.input : inputEstimate;
    return { usage: { ...base, input, output: Math.max(base.output, outcome.outputEstimate ?? 0) }, estimated: true };
  }
  if (outcome.dispatched === true && outcome.error === CLIENT_DISCONNECTED) {
    return { usage: { ...heard, input: inputEstimate }, estimated: true };
  }
  return { usage: seen, estimated: false };
}

function recordOf(
  method: string,
  path: string,
  status: number,
  state: GatewayState,
  usage: TokenUsage | undefined,
  estimated: boolean,
  charged: bigint | undefined,
): RequestRecord {
  const { route, outcome } = state;
  const head = route ? undefined : headOf(state);
  const model = route?.model.id ?? (typeof head?.['model'] === 'string' ? head['model'].slice(0, 200) : undefined);
  // Field by field onto one object, not a spread of a temporary object per field: fifteen
  // allocations and copies less per request (issue #17). Absent fields stay absent, not undefined.
  const record: Writable<RequestRecord> = { requestId: state.requestId, method, path, status, durationMs: performance.now() - state.startedAt };
  if (state.key) record.keyName = state.key.name;
  if (model !== undefined) record.model = model;
  if (route) {
    record.endpoint = route.endpoint;
    record.provider = route.provider.config.id;
    record.upstreamModel = route.upstreamModel;
  }
  if (outcome.kind) record.kind = outcome.kind;
  if (outcome.upstreamStatus !== undefined) record.upstreamStatus = outcome.upstreamStatus;
  if (outcome.upstreamRequestId !== undefined) record.upstreamRequestId = outcome.upstreamRequestId;
  if (outcome.firstByteMs !== undefined) record.firstByteMs = outcome.firstByteMs;
  if (outcome.upstreamFirstChunkMs !== undefined) record.upstreamFirstChunkMs = outcome.upstreamFirstChunkMs;
  if (usage) record.usage = usage;
  if (estimated) record.estimated = estimated;
  if (charged !== undefined) record.charged = charged;
  if (outcome.error !== undefined) record.errorCode = outcome.error;
  if (outcome.attempts !== undefined && outcome.attempts > 1) record.attempts = outcome.attempts;
  return record;
}

type Writable<T> = { -readonly [K in keyof T]: T[K] };
