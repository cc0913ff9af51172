import { ERR, GatewayError } from '../errors.ts';
import type { Endpoint } from '../formats/wire.ts';
import type { GatewayMiddleware } from '../http/state.ts';
import type { Logger } from '../log.ts';
import type { LoadedProvider } from '../plugin-host/loader.ts';
import { compileNativeTarget, type NativeTarget, type Passthrough } from '../proxy/passthrough.ts';
import { callContextOf, clientRequestOf } from './call-context.ts';
import { sendResult } from './send-result.ts';

export interface DispatchOptions {
  readonly providers: ReadonlyMap<string, LoadedProvider>;
  readonly passthrough: Passthrough;
  readonly log: Logger;
}

/**
 * The last link of the chain: serves the resolved route by the first capability its provider
 * offers for the endpoint: native passthrough, then in-process invoke. Translation joins in #3.
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
    const invoke = route.provider.plugin.invoke;
    if (invoke) {
      ctx.state.outcome.kind = 'in-process';
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
    throw ERR.formatUnsupported(route.model.id, providerId, ctx.path);
  };
}

const targetKey = (providerId: string, endpoint: Endpoint): string => `${providerId}\u0000${endpoint}`;
