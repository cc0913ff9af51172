import { ERR, GatewayError } from '../errors.ts';
import type { CatalogueRoute } from '../catalogue/catalogue.ts';
import { COUNTING, TEXT_ENDPOINTS, type Endpoint } from '../formats/wire.ts';
import { headOf, type GatewayContext, type GatewayMiddleware } from '../http/state.ts';
import type { Logger } from '../log.ts';
import type { Translator } from '../plugin-host/api.ts';
import type { LoadedProvider } from '../plugin-host/loader.ts';
import type { UpstreamAgents } from '../proxy/agents.ts';
import { compileNativeTarget, type NativeTarget, type Passthrough } from '../proxy/passthrough.ts';
import { failed, type Attempt, type AttemptResult } from '../routing/attempt.ts';
import { serveWithFailover, type FailoverOptions } from '../routing/failover.ts';
import { failureOf } from '../routing/failures.ts';
import { callContextOf, clientRequestOf } from './call-context.ts';
import { sendResult } from './send-result.ts';
import { pluginRefusalOf } from './plugin-refusal.ts';
import { serveTranslated } from './translate.ts';
import { answerLocalCount } from './local-count.ts';
import { formBody } from '../http/middleware/form-body.ts';

export interface DispatchOptions {
  readonly providers: ReadonlyMap<string, LoadedProvider>;
  readonly passthrough: Passthrough;
  readonly agents: UpstreamAgents;
  readonly failover: FailoverOptions;
  readonly log: Logger;
}

/**
 * The last link of the chain: serves the request on the model's routes, through the failover
 * loop (issue #5). Each route is served by the first capability its provider offers for the
 * endpoint: native passthrough, translation, in-process invoke. A route that cannot serve the
 * endpoint is skipped; count_tokens that no route can answer gets the local estimate.
 */
export function createDispatcher(options: DispatchOptions): GatewayMiddleware {
  // By provider id, then endpoint: both strings the config and catalogue hold, whose hashes V8
  // keeps, where one key joining them was a new string to hash on every request (issue #17).
  const nativeTargets = new Map<string, Map<Endpoint, NativeTarget>>();
  for (const provider of options.providers.values()) {
    const native = provider.plugin.native;
    if (!native) continue;
    const targets = new Map<Endpoint, NativeTarget>();
    for (const [endpoint, url] of Object.entries(native.endpoints)) {
      if (url !== undefined) targets.set(endpoint as Endpoint, compileNativeTarget(provider.config.id, endpoint as Endpoint, native, url));
    }
    nativeTargets.set(provider.config.id, targets);
  }
  const nativeTarget = (route: CatalogueRoute, endpoint: Endpoint): NativeTarget | undefined => nativeTargets.get(route.provider.config.id)?.get(endpoint);
  // By translation: a counting endpoint only where the upstream counts (`inputTokens`); elsewhere
  // the local estimate answers it (plugin API 1.5).
  const translates = (translator: Translator | undefined, endpoint: Endpoint): boolean =>
    translator?.endpoints.includes(endpoint) === true && (!COUNTING.has(endpoint) || translator.inputTokens !== undefined || translator.upstream === 'messages');
  const canServe = (route: CatalogueRoute, endpoint: Endpoint): boolean =>
    nativeTarget(route, endpoint) !== undefined ||
    translates(route.translator, endpoint) ||
    (route.provider.plugin.invoke !== undefined && (route.provider.plugin.invokes ?? TEXT_ENDPOINTS).includes(endpoint));

  const serve = (ctx: GatewayContext, route: CatalogueRoute, attempt: Attempt): Promise<AttemptResult> => {
    const endpoint = ctx.state.route?.endpoint ?? 'messages';
    const target = nativeTarget(route, endpoint);
    if (target) return options.passthrough.serve(ctx, target, attempt);
    const translator = route.translator;
    if (translator && translates(translator, endpoint)) return serveTranslated(ctx, translator, options.agents, options.log, attempt);
    return invokeInProcess(ctx, route, attempt, options.log);
  };

  // Per candidate list and endpoint, worked out once: an unweighted model's list is the same array
  // on every request (catalogue `available`), so the hot path only looks it up.
  const servable = new WeakMap<readonly CatalogueRoute[], Map<Endpoint, readonly CatalogueRoute[]>>();
  const usableFor = (candidates: readonly CatalogueRoute[], endpoint: Endpoint): readonly CatalogueRoute[] => {
    let byEndpoint = servable.get(candidates);
    if (!byEndpoint) servable.set(candidates, (byEndpoint = new Map()));
    let usable = byEndpoint.get(endpoint);
    if (!usable) byEndpoint.set(endpoint, (usable = candidates.filter((r) => canServe(r, endpoint))));
    return usable;
  };

  // Not an async function: the failover loop's promise is the link's (issue #17: a promise less).
  // A throw here is synchronous, which Koa's compose turns into a rejection.
  return (ctx) => {
    const { route, candidates } = ctx.state;
    if (!route || !candidates) throw ERR.internal();
    const usable = usableFor(candidates, route.endpoint);
    if (usable.length === 0) {
      // The head, not the body: a checked body is counted from its bytes, never parsed (issue #17).
      // No upstream can count: answer with the local estimate (docs/money.md, "Input-token estimate").
      if (COUNTING.has(route.endpoint) && headOf(ctx.state)) return answerLocalCount(ctx);
      throw ERR.formatUnsupported(route.model.id, route.provider.config.id, ctx.path);
    }
    return serveWithFailover(ctx, usable, serve, options.failover);
  };
}

async function invokeInProcess(ctx: GatewayContext, route: CatalogueRoute, attempt: Attempt, log: Logger): Promise<AttemptResult> {
  const invoke = route.provider.plugin.invoke;
  const providerId = route.provider.config.id;
  if (!invoke) return failed(failureOf(ERR.formatUnsupported(route.provider.config.id, providerId, ctx.path)));
  ctx.state.outcome.kind = 'in-process';
  let result;
  try {
    const upload = ctx.state.upload;
    if (upload) {
      // A plugin reads the form whole: the rest of the body is read (and checked) first.
      await upload.complete();
      ctx.state.body = formBody(upload.scanner.fields);
    }
    ctx.state.outcome.dispatched = true;
    result = await invoke(clientRequestOf(ctx), callContextOf(ctx, log, attempt.cancel));
  } catch (err) {
    if (err instanceof GatewayError) return failed(failureOf(err));
    const refusal = pluginRefusalOf(err);
    if (refusal) return failed(failureOf(refusal));
    log.error({ req_id: ctx.state.requestId, provider: providerId, err: String(err) }, 'plugin invoke failed');
    return failed(failureOf(ERR.pluginFailed(providerId)));
  }
  return sendResult(ctx, result, log, attempt);
}

