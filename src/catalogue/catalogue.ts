import type { ModelConfig } from '../config/types.ts';
import { checkTranslator, type LoadedProvider } from '../plugin-host/loader.ts';
import type { Translator } from '../plugin-host/api.ts';
import { compilePrices, type Prices } from '../billing/pricing.ts';
import { supportedParameters } from './parameters.ts';
import { endpointsOf } from './endpoints.ts';
import type { Endpoint } from '../formats/wire.ts';

export interface CatalogueRoute {
  readonly provider: LoadedProvider;
  readonly model: string;
  readonly weight: number | null;
  /** How the route translates: the plugin's `translate`, or what its `translateFor` picked for this model (issue #15). */
  readonly translator: Translator | undefined;
}

/** A route's translator, asked of the plugin once, at start-up, and checked as `translate` is. */
function translatorOf(provider: LoadedProvider, model: string, where: string): Translator | undefined {
  const plugin = provider.plugin;
  if (!plugin.translateFor) return plugin.translate;
  const translator = plugin.translateFor(model);
  const problem = translator === undefined ? null : checkTranslator(translator);
  if (problem !== null) throw new Error(`${where}: provider "${provider.config.id}" returned an invalid translator for ${model}: translateFor()${problem}`);
  return translator;
}

export interface CatalogueEntry {
  readonly model: ModelConfig;
  /** Prices in pico-dollars, compiled once. */
  readonly prices: Prices;
  /** Ordered as in the YAML; providers resolved once at start-up. */
  readonly routes: readonly CatalogueRoute[];
  /** `routes` without those whose provider has no API key: what requests try (issue #5). */
  readonly available: readonly CatalogueRoute[];
  /** `supported_parameters` for GET /v1/models, computed once. */
  readonly parameters: readonly string[];
  /** The endpoints the model serves, from its output modalities (issue #13). */
  readonly endpoints: ReadonlySet<Endpoint>;
}

/** The deployment's models by id, in YAML order. */
export class Catalogue {
  readonly #entries = new Map<string, CatalogueEntry>();

  constructor(models: readonly ModelConfig[], providers: ReadonlyMap<string, LoadedProvider>) {
    for (const model of models) {
      const routes = model.routes.map((route, j) => {
        const provider = providers.get(route.provider);
        // Config validation guarantees every route names a provider; this guards the invariant.
        if (!provider) throw new Error(`model ${model.id}: provider ${route.provider} not loaded`);
        return { provider, model: route.model, weight: route.weight, translator: translatorOf(provider, route.model, `model ${model.id}, routes[${j}]`) };
      });
      const endpoints = endpointsOf(model);
      this.#entries.set(model.id, {
        model,
        prices: compilePrices(model.pricing),
        routes,
        available: routes.filter((r) => r.provider.config.missingKeyVariables === null),
        // Chat Completions parameters: a model that serves no chat lists only what its YAML says.
        parameters: endpoints.has('chat_completions') ? supportedParameters(model, routes[0]?.provider.plugin, routes[0]?.translator) : (model.supportedParameters ?? []),
        endpoints,
      });
    }
  }

  get(id: string): CatalogueEntry | undefined {
    return this.#entries.get(id);
  }

  entries(): IterableIterator<CatalogueEntry> {
    return this.#entries.values();
  }
}
