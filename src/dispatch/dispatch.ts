import { ERR, GatewayError } from '../errors.ts';
import type { Endpoint } from '../formats/wire.ts';
import type { GatewayMiddleware } from '../http/state.ts';
import type { Logger } from '../log.ts';
import type { LoadedProvider } from '../plugin-host/loader.ts';
import type { UpstreamAgents } from '../proxy/agents.ts';
import { compileNativeTarget, type NativeTarget, type Passthrough } from '../proxy/passthrough.ts';
import { callContextOf, clientRequestOf } from './call-context.ts';
import { sendResult } from './send-result.ts';
import { serveTranslated } from './translate.ts';
import { countInputTokens } from '../usage/token-count.ts';

export interface DispatchOptions {
  readonly providers: ReadonlyMap<string, LoadedProvider>;
  readonly passthrough: Passthrough;
  readonly agents: UpstreamAgents;
  readonly log: Logger;
}

/**
 * The last link of the chain: serves the resolved route by the first capability its provider
 * offers for the endpoint: native passthrough, translation, in-process invoke; count_tokens that
 * no upstream can answer gets the local estimate.
 */
export function createDispatcher(options: DispatchOptions): GatewayMiddleware {
  const nativeTargets = new Map<string, NativeTarget>();
  for (const provider of options.providers.values()) {
    const native = provider.plugin.native;
    if (!native) continue;
    for (const [endpoint, url] of Object.entries(native.endpoints)) {
      if (url !== undefined) {
        nativeTargets.set(targetKey(provider.config.id, endpoint as Endpoint), compileNativeTarget(provider.config.id, endpoint as Endpoint, native, url));
      }
    }
  }

  return async (ctx) => {
    const route = ctx.state.route;
    if (!route) throw ERR.internal();
    const providerId = route.provider.config.id;
    const target = nativeTargets.get(targetKey(providerId, route.endpoint));
    if (target) return options.passthrough.serve(ctx, target);
    const translator = route.provider.plugin.translate;
    if (translator?.endpoints.includes(route.endpoint)) return serveTranslated(ctx, translator, options.agents, options.log);
    const invoke = route.provider.plugin.invoke;
    if (invoke) {
      ctx.state.outcome.kind = 'in-process';
      ctx.state.outcome.dispatched = true;
      let result;
      try {
        result = await invoke(clientRequestOf(ctx), callContextOf(ctx, options.log));
      } catch (err) {
        if (err instanceof GatewayError) throw err;
        options.log.error({ req_id: ctx.state.requestId, provider: providerId, err: String(err) }, 'plugin invoke failed');
        throw ERR.pluginFailed(providerId);
      }
      return sendResult(ctx, result, options.log);
    }
    if (route.endpoint === 'count_tokens' && ctx.state.body) {
      // No upstream can count: answer with the local estimate (README, "count_tokens").
      ctx.state.outcome.kind = 'local';
      ctx.set('x-junction-estimate', 'true');
      ctx.body = { input_tokens: await countInputTokens('messages', ctx.state.body, String(ctx.state.key?.id ?? '')) };
      return;
    }
    throw ERR.formatUnsupported(route.model.id, providerId, ctx.path);
  };
}

const targetKey = (providerId: string, endpoint: Endpoint): string => `${providerId}\u0000${endpoint}`;
