import type { Surface } from '../../errors.ts';
import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayMiddleware } from '../state.ts';
import { newRequestId } from '../../util/request-id.ts';
import { RequestState } from '../request-state.ts';
import { addRouterFields } from '../endpoint-routers.ts';

/**
 * First in the chain: gives every request an id (sent back as `x-request-id` on every response,
 * and also as `request-id` to Messages callers),
 * its arrival time, and the error format it expects. The Messages endpoints answer in the
 * Messages format and the Chat endpoint in the Chat format; shared endpoints such as /v1/models go
 * by whether the caller sent `anthropic-version`.
 */
export function createRequestContext(): GatewayMiddleware {
  return (ctx, next) => {
    const arrivedAtMs = Date.now();
    const requestId = newRequestId(arrivedAtMs);
    // The router's fields first, so each context keeps one shape (endpoint-routers.ts).
    addRouterFields(ctx);
    const headers = ctx.req.headers;
    ctx.state = new RequestState(requestId, performance.now(), arrivedAtMs, surfaceOf(ctx.path, headers), headers);
    // Node's setHeader, not Koa's ctx.set: Koa 3's wraps each header in arrays and closures to
    // normalise it (issue #17, thirty-fifth session), and these are one string each.
    const res = ctx.res;
    res.setHeader('x-request-id', requestId);
    // The Anthropic SDK reports `request-id` as an error's requestID (protocol.md §A.9).
    if (ctx.state.surface === 'messages') res.setHeader('request-id', requestId);
    return next();
  };
}

function surfaceOf(path: string, headers: IncomingHttpHeaders): Surface {
  if (path.startsWith('/v1/messages')) return 'messages';
  // OpenAI's endpoints (issue #13: embeddings, images, audio) answer errors in OpenAI's envelope.
  if (path.startsWith('/v1/responses')) return 'responses';
  if (path.startsWith('/v1/chat/') || path === '/v1/embeddings' || path.startsWith('/v1/images/') || path.startsWith('/v1/audio/')) return 'chat';
  return (headers['anthropic-version'] ?? '') === '' ? 'chat' : 'messages';
}
