import Router from '@koa/router';
import Koa from 'koa';
import compose from 'koa-compose';
import type { KeyStore } from './auth/key-store.ts';
import type { Catalogue } from './catalogue/catalogue.ts';
import type { GatewayConfig } from './config/types.ts';
import { createDispatcher } from './dispatch/dispatch.ts';
import {
  chatRequestSchema,
  countTokensRequestSchema,
  embeddingsRequestSchema,
  imagesEditFormSchema,
  imagesRequestSchema,
  messagesRequestSchema,
  responsesRequestSchema,
  speechRequestSchema,
  transcriptionFormSchema,
} from './formats/request-schemas.ts';
import { createFormReader } from './http/middleware/form-body.ts';
import { createResponseState } from './http/middleware/response-state.ts';
import { createRequestFinish, markLedgered } from './http/middleware/finish.ts';
import { createReservation } from './http/middleware/reserve.ts';
import { createRateLimit } from './http/middleware/rate-limit.ts';
import type { RateLimiter } from './limits/limiter.ts';
import { MemoryRateLimiter } from './limits/memory-limiter.ts';
import { createAuth } from './http/middleware/auth.ts';
import { createBodyReader } from './http/middleware/body.ts';
import { createErrorHandler } from './http/middleware/errors.ts';
import { createRequestContext } from './http/middleware/request-context.ts';
import { createModelResolver } from './http/middleware/resolve-model.ts';
import { createValidator } from './http/middleware/validate.ts';
import { createVersionCheck } from './http/middleware/version.ts';
import { createGetModel, createListModels } from './http/routes/models.ts';
import { createBalance, createGeneration } from './http/routes/billing.ts';
import { createAdminRouter } from './http/routes/admin.ts';
import { createDashboardRouter } from './dashboard/dashboard.ts';
import { createMetricsRoute } from './http/routes/metrics.ts';
import { createReloadRouter } from './http/routes/reload.ts';
import type { GatewayMetrics } from './metrics/gateway-metrics.ts';
import type { Tracing } from './telemetry/tracing.ts';
import type { ReloadResult } from './reload/reloader.ts';
import { createResponsesRouter } from './http/routes/responses.ts';
import { EndpointRouters } from './http/endpoint-routers.ts';
import type { GatewayMiddleware, GatewayState } from './http/state.ts';
import type { CheckedEndpoint } from './http/request-check.ts';
import type { Logger } from './log.ts';
import type { LoadedProvider } from './plugin-host/loader.ts';
import type { UpstreamAgents } from './proxy/agents.ts';
import type { Passthrough } from './proxy/passthrough.ts';
import type { UsageSink } from './usage/sink.ts';
import type { Settlements } from './billing/settlements.ts';
import type { Holds } from './billing/holds.ts';
import type { Store } from './store/store.ts';
import { ERR } from './errors.ts';
import { PATH_OF } from './formats/wire.ts';
import type { Breakers } from './routing/breaker.ts';
import type { InFlight } from './routing/in-flight.ts';
import type { Clock } from './util/clock.ts';

/** What GET / lists. */
const ENDPOINT_PATHS: readonly string[] = [...Object.values(PATH_OF), '/v1/models'];

/** Bodies nesting deeper than this are refused; real requests stay far below (Claude Code's ~15). */
const MAX_JSON_DEPTH = 128;

export interface AppParts {
  readonly config: GatewayConfig;
  readonly keys: KeyStore;
  readonly catalogue: Catalogue;
  readonly providers: ReadonlyMap<string, LoadedProvider>;
  readonly passthrough: Passthrough;
  readonly agents: UpstreamAgents;
  readonly sink: UsageSink;
  readonly settlements: Settlements;
  /** Where holds live: the store, or Redis (issue #7). */
  readonly holds: Holds;
  readonly store: Store;
  readonly instanceId: string;
  readonly breakers: Breakers;
  readonly inFlight: InFlight;
  /** Set when shutdown begins: readiness fails and new requests get 503 (issue #5). */
  readonly lifecycle: { readonly draining: boolean };
  readonly log: Logger;
  /** Per-key rate limits; in this process's memory unless a shared limiter is given (issue #5). */
  readonly limiter?: RateLimiter;
  /** Retry waits and breaker cool-downs. */
  readonly clock: Clock;
  /** Prometheus metrics, unless `server.metrics: off` (issue #16). */
  readonly metrics?: GatewayMetrics;
  /** OpenTelemetry traces, when `telemetry` is set (issue #16). */
  readonly tracing?: Tracing;
  /** Re-reads the YAML file: POST /admin/reload (issue #16). */
  readonly reload?: () => Promise<ReloadResult>;
}

/**
 * A route's middleware, composed once here. @koa/router composes a matched route's middleware
 * again on every request, its own route-info middleware first, and koa-compose's flatten calls
 * Array#concat once for each: ten calls on a model route (eleven on Responses), about 20,000
 * instructions a request under callgrind (issue #17, eighteenth session). Handed one, it flattens two.
 */
function chain(...middleware: GatewayMiddleware[]): GatewayMiddleware {
  return compose(middleware);
}

/** The Koa app: the whole middleware order, readable in one place. */
export function createApp(parts: AppParts): Koa<GatewayState> {
  const app = new Koa<GatewayState>();
  app.proxy = false; // never trust client-sent X-Forwarded-* (reliability.md §4.5)
  app.silent = true; // errors are rendered and logged by createErrorHandler

  const auth = createAuth(parts.keys);
  const version = createVersionCheck();
  const bodyOptions = { limitBytes: parts.config.server.maxBodyBytes, maxDepth: MAX_JSON_DEPTH };
  const body = createBodyReader(bodyOptions);
  // Messages, count_tokens, Chat and Responses bodies are checked as bytes first: a native route
  // then never parses them (request-check.ts; issue #17).
  const checkedBody = (check: CheckedEndpoint): GatewayMiddleware => createBodyReader({ ...bodyOptions, check });
  const reserve = createReservation(parts.holds, parts.instanceId, parts.metrics?.openHolds);
  const rateLimit = createRateLimit(parts.limiter ?? new MemoryRateLimiter(), parts.config.auth.defaultLimits);
  const failover = {
    routing: parts.config.routing,
    keepaliveMs: parts.config.server.keepaliveMs,
    breakers: parts.breakers,
    inFlight: parts.inFlight,
    log: parts.log,
    clock: parts.clock,
  };
  const dispatch = createDispatcher({ providers: parts.providers, passthrough: parts.passthrough, agents: parts.agents, failover, log: parts.log });

  const router = new Router<GatewayState>();
  const endpoints = new EndpointRouters(router);
  endpoints.post(
    '/v1/messages',
    chain(markLedgered, auth, version, checkedBody('messages'), createValidator(messagesRequestSchema), createModelResolver(parts.catalogue, 'messages'), rateLimit, reserve, dispatch),
  );
  endpoints.post(
    '/v1/messages/count_tokens',
    chain(markLedgered, auth, version, checkedBody('count_tokens'), createValidator(countTokensRequestSchema), createModelResolver(parts.catalogue, 'count_tokens'), rateLimit, reserve, dispatch),
  );
  // OpenAI's model endpoints share one chain: no anthropic-version, a JSON body, its own schema.
  const openaiEndpoints = [
    ['chat_completions', chatRequestSchema],
    ['responses', responsesRequestSchema],
    ['responses_input_tokens', responsesRequestSchema],
    ['embeddings', embeddingsRequestSchema],
    ['images_generations', imagesRequestSchema],
    ['audio_speech', speechRequestSchema],
  ] as const;
  const responseState = createResponseState(parts.store, parts.config.responses.retentionMs, parts.log);
  for (const [endpoint, schema] of openaiEndpoints) {
    // Responses continuations go where their conversation is kept (issue #14).
    const stateful = endpoint === 'responses' || endpoint === 'responses_input_tokens';
    const resolve = stateful ? [createModelResolver(parts.catalogue, endpoint), responseState] : [createModelResolver(parts.catalogue, endpoint)];
    const read = endpoint === 'chat_completions' || stateful ? checkedBody(endpoint) : body;
    endpoints.post(PATH_OF[endpoint], chain(markLedgered, auth, read, createValidator(schema), ...resolve, rateLimit, reserve, dispatch));
  }
  // The multipart endpoints read their form as it streams (issue #13): no JSON body reader.
  const formEndpoints = [
    ['images_edits', imagesEditFormSchema],
    ['audio_transcriptions', transcriptionFormSchema],
    ['audio_translations', transcriptionFormSchema],
  ] as const;
  for (const [endpoint, schema] of formEndpoints) {
    const form = createFormReader({ limitBytes: parts.config.server.maxBodyBytes, endpoint });
    endpoints.post(PATH_OF[endpoint], chain(markLedgered, auth, form, createValidator(schema), createModelResolver(parts.catalogue, endpoint), rateLimit, reserve, dispatch));
  }
  const responsesRouter = createResponsesRouter(auth, parts.store, parts.providers, parts.agents, parts.log);
  router.get('/v1/models', auth, createListModels(parts.catalogue));
  router.get('/v1/models/:id', auth, createGetModel(parts.catalogue));
  router.get('/v1/balance', auth, createBalance(parts.store, parts.settlements, parts.holds));
  router.get('/v1/generations/:id', auth, createGeneration(parts.store, parts.settlements));
  if (parts.metrics && parts.config.server.metrics !== 'off') {
    router.get('/metrics', createMetricsRoute(parts.metrics, parts.config.server.metrics, parts.config.auth.adminKeySha256));
  }
  router.get('/healthz', async (ctx) => {
    // A balancer polling readiness stops sending new work as soon as the drain begins.
    if (parts.lifecycle.draining) ctx.status = 503;
    ctx.body = { status: parts.lifecycle.draining ? 'draining' : 'ok' };
  });
  // Claude Code probes `HEAD /` before its first request and ignores the status (real-clients.md).
  router.get('/', async (ctx) => {
    ctx.body = { name: 'junction', endpoints: ENDPOINT_PATHS };
  });

  app.use(createRequestContext());
  app.use(createRequestFinish(parts.settlements, parts.sink, parts.log, parts.tracing));
  app.use(createErrorHandler(parts.log));
  app.use((ctx, next) => {
    if (parts.lifecycle.draining && ctx.path !== '/healthz') throw ERR.shuttingDown();
    return next();
  });
  app.use(endpoints.middleware());
  app.use(router.routes());
  app.use(responsesRouter.routes());
  app.use(router.allowedMethods());
  // Off unless auth.admin_key is set: then /admin/* is simply not there (404).
  if (parts.config.auth.adminKeySha256 !== null) {
    if (parts.reload) app.use(createReloadRouter(parts.reload, parts.config.auth.adminKeySha256).routes());
    const admin = createAdminRouter(parts.store, parts.holds, parts.config.auth.keyPrefix, parts.config.auth.adminKeySha256);
    app.use(admin.routes());
    app.use(admin.allowedMethods());
    // The same key opens the dashboard's login; without it /dashboard is not there either (issue #16).
    app.use(createDashboardRouter(parts, parts.config.auth.adminKeySha256).routes());
  }
  return app;
}
