import Router from '@koa/router';
import type { GatewayContext, GatewayMiddleware, GatewayState } from './state.ts';

/**
 * The model endpoints' routes, each in the shared router and also in a router of its own, found by
 * the request's exact path. @koa/router tests every route's expression on every request
 * (`Router#match` walks its whole stack): with the model endpoints, the listings and the health
 * routes in one router, that was 18 expressions for each model request (17 with `/metrics` off),
 * about 4,500 instructions (issue #17, twenty-eighth session, callgrind). A router of one route
 * tests one.
 *
 * A path the index does not hold exactly (`/V1/Messages`, a trailing slash: @koa/router matches
 * both) falls through to the shared router, which holds every route; so does a method the route
 * does not serve, and the shared router's `allowedMethods` answers it (405 with `Allow`).
 */
export class EndpointRouters {
  readonly #byPath = new Map<string, GatewayMiddleware>();

  readonly #shared: Router<GatewayState>;

  constructor(shared: Router<GatewayState>) {
    this.#shared = shared;
  }

  post(path: string, chain: GatewayMiddleware): void {
    this.#shared.post(path, chain);
    const own = new Router<GatewayState>();
    own.post(path, chain);
    this.#byPath.set(path, own.routes() as GatewayMiddleware);
  }

  /** Hands a request to its path's own router, else on down the chain. */
  middleware(): GatewayMiddleware {
    const byPath = this.#byPath;
    return (ctx, next) => {
      const routes = byPath.get(ctx.path);
      return routes === undefined ? next() : routes(ctx, next);
    };
  }
}

/**
 * @koa/router adds these to each request's context as it routes, one at a time. A context took
 * nine shapes on its way, and each of Koa's and the chain's reads of it that saw several of them
 * was a megamorphic load (issue #17, twenty-eighth session). Added first by the request context,
 * in the router's own order and as it would find them (absent reads as undefined), every context
 * has its final shape from the start, and the router's writes only change values.
 */
export function addRouterFields(ctx: GatewayContext): void {
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
