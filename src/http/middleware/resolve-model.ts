import type { Catalogue } from '../../catalogue/catalogue.ts';
import { ERR } from '../../errors.ts';
import type { Endpoint } from '../../formats/wire.ts';
import { headOf, type GatewayMiddleware } from '../state.ts';
import { orderRoutes } from '../../routing/route-order.ts';
import { pathsOf } from '../../catalogue/endpoints.ts';

/**
 * Maps the body's `model` to a catalogue entry and its route. Unknown ids are refused here, so
 * nothing unpriced ever reaches an upstream; so are models outside the key's allowlist, and
 * providers whose API key is not configured (503 naming the variable to set).
 */
export function createModelResolver(catalogue: Catalogue, endpoint: Endpoint): GatewayMiddleware {
  return (ctx, next) => {
    const head = headOf(ctx.state);
    const id = head?.['model'];
    if (typeof id !== 'string') throw ERR.invalidField('model: is required', 'model');
    const entry = catalogue.get(id);
    if (!entry) throw ERR.modelNotFound(id);
    if (ctx.state.key?.allowsModel && !ctx.state.key.allowsModel(id)) throw ERR.modelForbidden(id);
    if (!entry.endpoints.has(endpoint)) throw ERR.endpointNotServed(id, ctx.path, pathsOf(entry.endpoints));
    const images = head?.['n'];
    if ((endpoint === 'images_generations' || endpoint === 'images_edits') && typeof images === 'number' && images > (entry.model.maxImages ?? 10)) {
      throw ERR.invalidField(`n: model "${id}" draws at most ${entry.model.maxImages ?? 10} images a request, got ${images}`, 'n');
    }
    // Routes after the first are fallbacks, tried in this order (issue #5); a provider without
    // its API key is left out, and only if every route lacks one is the request refused.
    // Unweighted routes keep their order: the same array every request, nothing allocated.
    const candidates = orderRoutes(entry.available);
    const route = candidates[0];
    if (!route) {
      const first = entry.routes[0];
      if (!first) throw ERR.internal();
      throw ERR.providerMissingKey(first.provider.config.id, first.provider.config.missingKeyVariables ?? []);
    }
    ctx.state.candidates = candidates;
    ctx.state.route = { endpoint, model: entry.model, prices: entry.prices, provider: route.provider, upstreamModel: route.model };
    return next();
  };
}
