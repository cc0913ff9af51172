import type { Logger } from '../../log.ts';
import type { RequestRecord, UsageSink } from '../../usage/sink.ts';
import type { GatewayMiddleware } from '../state.ts';

/**
 * Records one entry per request when it ends, streams included: the chain below resolves only
 * once the response is finished or the client has gone.
 */
export function createAccessLog(sink: UsageSink, log: Logger): GatewayMiddleware {
  return async (ctx, next) => {
    try {
      await next();
    } finally {
      const { state } = ctx;
      const route = state.route;
      const entry: RequestRecord = {
        requestId: state.requestId,
        method: ctx.method,
        path: ctx.path,
        status: ctx.respond === false ? ctx.res.statusCode : ctx.status,
        durationMs: performance.now() - state.startedAt,
        ...(state.key && { keyName: state.key.name }),
        ...requestedModel(state.body),
        ...(route && {
          endpoint: route.endpoint,
          model: route.model.id,
          provider: route.provider.config.id,
          upstreamModel: route.upstreamModel,
        }),
        ...(state.outcome.kind && { kind: state.outcome.kind }),
        ...(state.outcome.upstreamStatus !== undefined && { upstreamStatus: state.outcome.upstreamStatus }),
        ...(state.outcome.firstByteMs !== undefined && { firstByteMs: state.outcome.firstByteMs }),
        ...(state.outcome.usage && { usage: state.outcome.usage }),
        ...(state.outcome.error !== undefined && { errorCode: state.outcome.error }),
      };
      try {
        sink.record(entry);
      } catch (err) {
        // A failing sink must not turn a served request into an error, nor vanish silently.
        log.error({ req_id: state.requestId, err }, 'usage sink failed');
      }
    }
  };
}

/** The model a request asked for, logged even when it was refused before routing (ids, not content). */
function requestedModel(body: Record<string, unknown> | undefined): { model?: string } {
  const model = body?.['model'];
  return typeof model === 'string' ? { model: model.slice(0, 200) } : {};
}
