import { endSpan, RequestTrace } from '../telemetry/tracing.ts';
import { ERR, GatewayError } from '../errors.ts';
import type { RoutingConfig } from '../config/types.ts';
import type { CatalogueRoute } from '../catalogue/catalogue.ts';
import { CLIENT_DISCONNECTED, headOf, type GatewayContext } from '../http/state.ts';
import type { Logger } from '../log.ts';
import { streamErrorFrame } from '../sse/encode.ts';
import { failed, type Attempt, type AttemptFailure, type AttemptResult } from './attempt.ts';
import { failureOf } from './failures.ts';
import type { Breakers, CircuitBreaker } from './breaker.ts';
import type { InFlight } from './in-flight.ts';
import { StreamPrelude } from './stream-prelude.ts';
import { Cancellation } from './cancellation.ts';
import type { Clock } from '../util/clock.ts';

export interface FailoverOptions {
  readonly routing: RoutingConfig;
  readonly keepaliveMs: number;
  readonly breakers: Breakers;
  readonly inFlight: InFlight;
  readonly log: Logger;
  /** Back-offs and `retry-after` waits (tests inject one that does not wait). */
  readonly clock: Clock;
}

/** Serves one attempt on one route; ctx.state.route is already that route. */
export type ServeRoute = (ctx: GatewayContext, route: CatalogueRoute, attempt: Attempt) => Promise<AttemptResult>;

/** Outcomes of a started response that say the route failed it (the breaker counts them). */
const ROUTE_FAULTS = new Set(['GW_ERR_UPSTREAM_INTERRUPTED', 'GW_ERR_UPSTREAM_STALLED', 'GW_ERR_UPSTREAM_TIMEOUT', 'GW_ERR_UPSTREAM_INVALID']);
const MAX_BACKOFF_MS = 5_000;

/**
 * Tries a model's routes in order until one answers (issue #5). A route is retried or left only
 * while the client has been sent nothing from upstream (reliability.md §0.8): connection errors
 * and 5xx get `routing.retries` more tries after a jittered backoff; 429 and 529 move to the next
 * route at once, or on the last route wait out `retry-after` up to `max_retry_after_s`; a silent
 * route (timeout) is left at once; request errors (4xx) and a departed client end it. Each route
 * has a circuit breaker. When every route fails, the client gets the last failure: the
 * upstream's own status and body on a native route, with `retry-after` when there was one.
 */
export async function serveWithFailover(ctx: GatewayContext, routes: readonly CatalogueRoute[], serve: ServeRoute, options: FailoverOptions): Promise<void> {
  const { state, res } = ctx;
  const first = state.route;
  if (!first) throw ERR.internal();
  const controller = new Cancellation();
  const onClose = (): void => {
    if (!res.writableFinished) controller.abort(ERR.clientClosed());
  };
  res.on('close', onClose); // removed below; 'close' comes once, without once()'s wrapper
  const tracked = options.inFlight.add(controller);
  const prelude = headOf(state)?.['stream'] === true ? new StreamPrelude(res, state.surface, options.keepaliveMs, () => (ctx.respond = false)) : null;
  prelude?.start();
  const { routing } = options;
  let last: AttemptFailure | undefined;
  let soonestProbeMs = Infinity;
  try {
    routes: for (let index = 0; index < routes.length && !controller.aborted; index++) {
      const route = routes[index];
      if (!route) continue;
      const provider = route.provider.config.id;
      const breaker = options.breakers.for(provider, route.model);
      if (!breaker.tryPass()) {
        soonestProbeMs = Math.min(soonestProbeMs, breaker.msUntilRetry());
        continue;
      }
      for (let retry = 0; ; retry++) {
        if (route.provider !== first.provider || route.model !== first.upstreamModel) {
          state.route = { ...first, provider: route.provider, upstreamModel: route.model };
        }
        state.outcome.attempts = (state.outcome.attempts ?? 0) + 1;
        state.outcome.attemptStartedAt = performance.now();
        const attempt: Attempt = {
          timeouts: route.provider.config.timeouts,
          cancel: controller,
          keepaliveMs: options.keepaliveMs,
          commit: () => {
            prelude?.stop();
            breaker.success();
          },
        };
        // Each attempt is a CLIENT span named as the GenAI conventions name an inference (issue #16).
        const span = state.trace?.child(`${state.route?.endpoint ?? 'request'} ${route.model}`, { 'gen_ai.provider.name': provider, 'gen_ai.request.model': route.model, 'junction.attempt': state.outcome.attempts }, true);
        const traceparent = span && RequestTrace.traceparentOf(span);
        if (traceparent !== undefined) state.traceparent = traceparent;
        // A synchronous throw in a serving path is caught here too. Not through
        // Promise.resolve().then(serve).catch(): two promises more per request (issue #17).
        let result: AttemptResult;
        try {
          result = await serve(ctx, route, attempt);
        } catch (err) {
          // A plugin's request hook or a bug: answered like any failure, so keepalives end properly.
          if (!(err instanceof GatewayError)) options.log.error({ req_id: state.requestId, provider, err }, 'route failed');
          result = failed(failureOf(err instanceof GatewayError ? err : ERR.internal()));
        }
        if (span) endSpan(span, result.ok ? state.outcome.error : result.failure.error.code, state.outcome.upstreamStatus === undefined ? {} : { 'http.response.status_code': state.outcome.upstreamStatus });
        if (result.ok) {
          judge(breaker, state.outcome.error);
          return;
        }
        const failure = result.failure;
        last = failure;
        // A failed attempt is not billed; a request in flight when the client left still is, for the
        // prompt the upstream read (issue #4).
        if (failure.error.code !== 'GW_ERR_CLIENT_CLOSED') state.outcome.dispatched = false;
        if (failure.routeFault) breaker.failure();
        else breaker.release();
        if (failure.retry === 'never' || controller.aborted) break routes;
        options.log.warn(
          { req_id: state.requestId, provider, upstream_model: route.model, error: failure.error.code, status: failure.error.status, attempt: state.outcome.attempts },
          'upstream attempt failed',
        );
        if (failure.retry === 'next') break;
        if (failure.retry === 'rate' && index < routes.length - 1) break;
        if (retry >= routing.retries) break;
        const afterMs = failure.retryAfterMs;
        if (afterMs !== null && afterMs > routing.maxRetryAfterMs) break;
        await options.clock.sleep(afterMs ?? backoff(routing.backoffMs, retry), controller);
        if (controller.aborted) break routes;
        if (!breaker.tryPass()) break;
      }
    }
    if (!last) throw ERR.routesOpen(first.model.id, Math.max(1, Math.ceil(soonestProbeMs / 1000)));
    answerFailure(ctx, controller.reason ? reasonFailure(controller.reason, last) : last);
  } finally {
    prelude?.stop();
    res.off('close', onClose);
    options.inFlight.remove(tracked);
  }
}

/**
 * A started response that ended in an upstream fault counts against its route; anything else
 * clears it (again, for answers that committed: idempotent).
 */
function judge(breaker: CircuitBreaker, error: string | undefined): void {
  if (error !== undefined && ROUTE_FAULTS.has(error)) breaker.failure();
  else breaker.success();
}

/** The client left or the gateway is stopping: that, not the last upstream failure, is the answer. */
function reasonFailure(reason: Error, last: AttemptFailure): AttemptFailure {
  return 'code' in reason && (reason.code === 'GW_ERR_SHUTTING_DOWN' || reason.code === 'GW_ERR_CLIENT_CLOSED')
    ? { error: reason as AttemptFailure['error'], retry: 'never', retryAfterMs: null, routeFault: false }
    : last;
}

/** The last failure, in the caller's format: in-band once keepalives have sent the status. */
function answerFailure(ctx: GatewayContext, failure: AttemptFailure): void {
  const { state, res } = ctx;
  if (failure.error.code === 'GW_ERR_CLIENT_CLOSED') {
    state.outcome.error = CLIENT_DISCONNECTED; // the ledger charges the input the upstream read
    // Logged as nginx does, not as the 404 Koa starts from; nobody is left to read it.
    if (!res.headersSent) ctx.status = 499;
    return;
  }
  if (res.headersSent) {
    state.outcome.error = failure.error.code;
    if (!res.writableEnded && !res.destroyed) res.end(streamErrorFrame(state.surface, failure.error, state.requestId));
    return;
  }
  const raw = failure.raw;
  if (raw) {
    // A native route's own error answer, as the upstream sent it (bytes untouched).
    state.outcome.error = failure.error.code;
    ctx.respond = false;
    const { 'content-length': _, 'content-encoding': __, ...headers } = raw.headers;
    res.writeHead(raw.status, { ...headers, 'content-length': raw.body.length });
    res.end(raw.body);
    return;
  }
  throw failure.error;
}

function backoff(baseMs: number, retry: number): number {
  const jitter = 0.8 + Math.random() * 0.4;
  return Math.min(baseMs * 2 ** retry, MAX_BACKOFF_MS) * jitter;
}
