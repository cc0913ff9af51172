import { costOf } from '../../billing/pricing.ts';
import type { TokenUsage } from '../../formats/wire.ts';
import type { Logger } from '../../log.ts';
import type { Store } from '../../store/store.ts';
import type { RequestRecord, UsageSink } from '../../usage/sink.ts';
import type { GatewayMiddleware, GatewayState } from '../state.ts';

/** Outcomes of a response that started and then did not end normally. */
const CUT_SHORT = new Set(['client_disconnected', 'upstream_interrupted', 'stream_failed']);

/**
 * Ends every request, streams included (the chain below resolves only once the response is done
 * or the client has gone). For an authenticated model request it settles the ledger: the hold is
 * released, the real cost charged and the row written, in one transaction (issue #4). Then it
 * writes the request's log line.
 */
export function createRequestFinish(store: Store, sink: UsageSink, log: Logger): GatewayMiddleware {
  return async (ctx, next) => {
    try {
      await next();
    } finally {
      const { state } = ctx;
      const status = ctx.respond === false ? ctx.res.statusCode : ctx.status;
      const { usage, estimated } = finalUsage(state, status);
      const cost = usage && state.route ? costOf(usage, state.route.prices) : 0n;
      let charged: bigint | undefined;
      if (state.key && isModelPath(ctx.path)) {
        try {
          const settled = await store.settle({
            requestId: state.requestId,
            keyId: state.key.id,
            endpoint: state.route?.endpoint ?? null,
            model: state.route?.model.id ?? null,
            provider: state.route?.provider.config.id ?? null,
            upstreamModel: state.route?.upstreamModel ?? null,
            route: state.outcome.kind ?? null,
            usage: usage ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
            cost,
            status,
            outcome: state.outcome.error ?? (status < 400 ? 'ok' : 'error'),
            estimated,
            startedAt: new Date(Date.now() - (performance.now() - state.startedAt)),
            firstByteMs: state.outcome.firstByteMs ?? null,
            durationMs: performance.now() - state.startedAt,
          });
          charged = settled.charged;
          if (settled.uncollected > 0n) {
            log.warn({ req_id: state.requestId, uncollected_pico: String(settled.uncollected) }, 'request cost more than its hold and the balance left');
          }
        } catch (err) {
          // The hold stays and is reconciled at the next start; the request itself is done.
          log.error({ req_id: state.requestId, err }, 'ledger settlement failed');
        }
      }
      try {
        sink.record(recordOf(ctx.method, ctx.path, status, state, usage, estimated, charged));
      } catch (err) {
        // A failing sink must not turn a served request into an error, nor vanish silently.
        log.error({ req_id: state.requestId, err }, 'usage sink failed');
      }
    }
  };
}

const isModelPath = (path: string): boolean => path.startsWith('/v1/messages') || path === '/v1/chat/completions';

/**
 * The usage to charge. A response that completed is charged what it reported. One that started
 * and was cut short (client gone, upstream reset) is charged the usage seen so far plus an
 * estimate of the output that passed, and marked estimated (issue #4). One that failed before
 * any output costs nothing.
 */
function finalUsage(state: GatewayState, status: number): { usage: TokenUsage | undefined; estimated: boolean } {
  const { outcome, reservation } = state;
  const seen = outcome.usage;
  const produced = outcome.firstByteMs !== undefined && status < 400 && outcome.kind !== 'local';
  const cut = outcome.error !== undefined && CUT_SHORT.has(outcome.error);
  if (!produced || (seen && !cut)) return { usage: seen, estimated: false };
  const base = seen ?? { input: reservation?.inputTokens ?? 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 };
  const input = base.input > 0 || base.cacheRead > 0 || base.cacheWrite > 0 ? base.input : (reservation?.inputTokens ?? 0);
  return { usage: { ...base, input, output: Math.max(base.output, outcome.outputEstimate ?? 0) }, estimated: true };
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
  const route = state.route;
  const model = route?.model.id ?? (typeof state.body?.['model'] === 'string' ? state.body['model'].slice(0, 200) : undefined);
  return {
    requestId: state.requestId,
    method,
    path,
    status,
    durationMs: performance.now() - state.startedAt,
    ...(state.key && { keyName: state.key.name }),
    ...(model !== undefined && { model }),
    ...(route && { endpoint: route.endpoint, provider: route.provider.config.id, upstreamModel: route.upstreamModel }),
    ...(state.outcome.kind && { kind: state.outcome.kind }),
    ...(state.outcome.upstreamStatus !== undefined && { upstreamStatus: state.outcome.upstreamStatus }),
    ...(state.outcome.firstByteMs !== undefined && { firstByteMs: state.outcome.firstByteMs }),
    ...(usage && { usage }),
    ...(estimated && { estimated }),
    ...(charged !== undefined && { charged }),
    ...(state.outcome.error !== undefined && { errorCode: state.outcome.error }),
  };
}
