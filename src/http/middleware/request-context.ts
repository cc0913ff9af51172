import type { Surface } from '../../errors.ts';
import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayContext, GatewayMiddleware } from '../state.ts';
import { newRequestId } from '../../util/request-id.ts';
import { RequestState } from '../request-state.ts';

/**
 * First in the chain: gives every request an id (sent back as `x-request-id` on every response,
 * and also as `request-id` to Messages callers),
 * its arrival time, and the error format it expects. The Messages endpoints answer in the
 * Messages format and the Chat endpoint in the Chat format; shared endpoints such as /v1/models go
 * by whether the caller sent `anthropic-version`.
 */
export function createRequestContext(): GatewayMiddleware {
  return (ctx, next) => {
    const requestId = newRequestId();
    preshape(ctx);
    const headers = ctx.req.headers;
    ctx.state = new RequestState(requestId, performance.now(), surfaceOf(ctx.path, headers), headers);
    ctx.set('x-request-id', requestId);
    // The Anthropic SDK reports `request-id` as an error's requestID (protocol.md §A.9).
    if (ctx.state.surface === 'messages') ctx.set('request-id', requestId);
    return next();
  };
}

/**
 * @koa/router adds these to each request's context as it routes, one at a time. A context took
 * nine shapes on its way, and each of Koa's and the chain's reads of it that saw several of them
 * was a megamorphic load (issue #17, twenty-eighth session). Added here first, in the router's
 * own order and as it would find them (absent reads as undefined), every context has its final
 * shape from the start and the router's writes only change values.
 */
function preshape(ctx: GatewayContext): void {
  const routed = ctx as unknown as Record<string, unknown>;
  routed['matched'] = undefined;
  routed['router'] = undefined;
  routed['routeMatched'] = undefined;
  routed['_matchedRoute'] = undefined;
  routed['captures'] = undefined;
  routed['params'] = undefined;
  routed['routerPath'] = undefined;
  routed['routerName'] = undefined;
  (ctx.request as unknown as Record<string, unknown>)['params'] = undefined;
}

function surfaceOf(path: string, headers: IncomingHttpHeaders): Surface {
  if (path.startsWith('/v1/messages')) return 'messages';
  // OpenAI's endpoints (issue #13: embeddings, images, audio) answer errors in OpenAI's envelope.
  if (path.startsWith('/v1/responses')) return 'responses';
  if (path.startsWith('/v1/chat/') || path === '/v1/embeddings' || path.startsWith('/v1/images/') || path.startsWith('/v1/audio/')) return 'chat';
  return headers['anthropic-version'] === undefined || headers['anthropic-version'] === '' ? 'chat' : 'messages';
}
