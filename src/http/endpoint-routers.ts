import Router from '@koa/router';
import type { GatewayMiddleware, GatewayState } from './state.ts';

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

  constructor(readonly shared: Router<GatewayState>) {}

  post(path: string, chain: GatewayMiddleware): void {
    this.shared.post(path, chain);
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
