import { ERR, GatewayError, renderError } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import type { GatewayMiddleware } from '../state.ts';

/**
 * Turns anything thrown below into an error response in the caller's format. A GatewayError is
 * shown as is; anything else is a bug: logged with its stack, answered with a bare 500.
 */
export function createErrorHandler(log: Logger): GatewayMiddleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.respond !== false && ctx.body == null) {
        // Nothing matched: the router leaves a bare 404, or 405 with an Allow header.
        if (ctx.status === 404) throw ERR.routeNotFound(ctx.method, ctx.path);
        if (ctx.status === 405) throw ERR.methodNotAllowed(ctx.method, ctx.path, ctx.response.get('Allow'));
      }
    } catch (thrown) {
      const err = thrown instanceof GatewayError ? thrown : ERR.internal();
      if (!(thrown instanceof GatewayError)) {
        log.error({ req_id: ctx.state.requestId, err: thrown }, 'unhandled error');
      }
      ctx.state.outcome.error ??= err.code;
      if (ctx.headerSent || ctx.respond === false) {
        // The response already started (a stream, a proxied reply): it cannot change now.
        if (!ctx.res.writableEnded) ctx.res.destroy();
        return;
      }
      const rendered = renderError(ctx.state.surface, err, ctx.state.requestId);
      ctx.status = rendered.status;
      ctx.set(rendered.headers);
      // An upload refused before it was all read (at the limit, or before its form was read at all:
      // a bad key): the rest is not worth reading, as Node would to keep the connection (issue #13).
      if (!ctx.req.complete && (ctx.state.upload !== undefined || typeof ctx.is('multipart') === 'string')) ctx.set('connection', 'close');
      ctx.body = rendered.body;
    }
  };
}
