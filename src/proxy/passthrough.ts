import { upstreamRequestIdIn } from './upstream-request-id.ts';
import type { ClientRequest, IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { createProxyServer, type ProxyServer } from 'http-proxy-3';
import { ERR, GatewayError } from '../errors.ts';
import { FORMAT_OF, type Endpoint } from '../formats/wire.ts';
import { terminatorOf } from './sse-terminator.ts';
import type { BodyBytes } from '../http/body-bytes.ts';
import type { JsonScan } from '../http/json-scan.ts';
import { formBody, jsonBody } from './upstream-body.ts';
import { headOf, type GatewayContext } from '../http/state.ts';
import type { Logger } from '../log.ts';
import type { NativeUpstream } from '../plugin-host/api.ts';
import { failed, retryAfterMs, retryClassOf, SERVED, statusFailure, type Attempt, type AttemptResult } from '../routing/attempt.ts';
import { asksForUsage } from '../usage/chat-stream-usage.ts';
import type { UpstreamAgents } from './agents.ts';
import { createRequestHeaderFilter, filterResponseHeaders, headerText, type RequestHeaderFilter } from './headers.ts';
import { relayNative, type Interrupt } from './native-relay.ts';
import { errorFromBody, readErrorBody, retryHeaders } from './upstream-error.ts';
import { UpstreamTimeout, UpstreamTimers } from './upstream-timers.ts';
import { connectionFailure, failureOf } from '../routing/failures.ts';
import { awaitFirstEvent, type Primed } from './first-event.ts';

/** One provider endpoint served natively, compiled once at start-up. */
export interface NativeTarget {
  readonly providerId: string;
  readonly url: string;
  readonly parsedUrl: URL;
  readonly filterHeaders: RequestHeaderFilter;
}

export function compileNativeTarget(providerId: string, endpoint: Endpoint, native: NativeUpstream, url: string): NativeTarget {
  return {
    providerId,
    url,
    parsedUrl: new URL(url),
    filterHeaders: createRequestHeaderFilter(FORMAT_OF[endpoint], native.forwardHeaders ?? [], native.headers),
  };
}

/** Per-attempt hooks for http-proxy-3's server-wide events, found by the client request. */
interface AttemptHooks {
  onProxyReq(proxyReq: ClientRequest): void;
  onProxyRes(proxyRes: IncomingMessage): void;
}

/**
 * The attempt's hooks and the client's own headers ride on the request itself. WeakMaps keyed by
 * the request kept each request's whole graph (ctx, timers, body) alive past the young generation:
 * ephemeron entries wait for a full mark-compact, so everything was promoted (issue #17;
 * hot-path-profile.md §3: about 175 µs of GC per small request).
 */
const HOOKS = Symbol('junction.attemptHooks');
const CLIENT_HEADERS = Symbol('junction.clientHeaders');
type ProxiedRequest = IncomingMessage & { [HOOKS]?: AttemptHooks; [CLIENT_HEADERS]?: IncomingHttpHeaders };

/**
 * Native passthrough through one shared http-proxy-3 server. The client's bytes go upstream
 * unchanged (read once, sent with the `buffer` option); only `model` is rewritten when the route
 * names another upstream model. We handle the response ourselves (`selfHandleResponse`) to apply
 * the header allowlist, read usage as bytes pass, end a cut stream with an error rather than a
 * clean end (http-proxy-3 leaves it hanging: engineering-notes.md), and, before anything is sent,
 * hand a retryable failure back to the failover loop instead of the client (issue #5).
 */
export class Passthrough {
  readonly #proxy: ProxyServer;
  readonly #log: Logger;
  readonly #agents: UpstreamAgents;

  constructor(log: Logger, agents: UpstreamAgents) {
    this.#log = log;
    this.#agents = agents;
    const options = { selfHandleResponse: true, changeOrigin: true, ignorePath: true, xfwd: false };
    this.#proxy = createProxyServer(options);
    // http-proxy-3 makes each request's options as `{ ...options, ...perRequest }`. On Node 20's V8
    // such a copy of an extensible object got a map of its own every time, so each of the ~20
    // property reads its passes make of it missed its inline cache, every request (issue #17: 7,705
    // distinct maps in 7,705 requests, by --log-ic). Made non-extensible once its constructor has
    // added `prependPath`, the copy's map is shared again; nothing adds to it afterwards.
    Object.preventExtensions(options);
    this.#proxy.on('proxyReq', (proxyReq, req) => (req as ProxiedRequest)[HOOKS]?.onProxyReq(proxyReq));
    this.#proxy.on('proxyRes', (proxyRes, req) => (req as ProxiedRequest)[HOOKS]?.onProxyRes(proxyRes));
    // Every web() call passes its own error callback; this listener only keeps a stray error
    // from being thrown (http-proxy-3 throws when no listener exists).
    this.#proxy.on('error', (err) => this.#log.warn({ err: err.message }, 'proxy error'));
  }

  serve(ctx: GatewayContext, target: NativeTarget, attempt: Attempt): Promise<AttemptResult> {
    const { state, res } = ctx;
    const req: ProxiedRequest = ctx.req;
    const { route, raw, scan, upload } = state;
    // The checked head where there is one: the native path never parses a checked body (issue #17).
    const body = headOf(state);
    if (!route || !body || (!upload && (!raw || !scan))) throw ERR.internal();
    // Chat streams always ask for usage, so the ledger has real counts (issue #4).
    state.usageForced = route.endpoint === 'chat_completions' && body['stream'] === true && !asksForUsage(body);
    const outgoing = upload ? formBody(upload, route) : jsonBody(raw as BodyBytes, scan as JsonScan, state, route, state.usageForced);
    const url = ctx.querystring === '' ? target.parsedUrl : new URL(`${target.url}?${ctx.querystring}`);
    // http-proxy-3 copies req.headers upstream wholesale; hand it only the allowed ones.
    // The client's own headers: each attempt filters them afresh for its target.
    const incoming = req[CLIENT_HEADERS] ?? req.headers;
    req[CLIENT_HEADERS] = incoming;
    req.headers = target.filterHeaders(incoming, outgoing.shape);
    // With traces on, the attempt's span continues upstream in place of the client's (issue #16).
    if (state.traceparent) req.headers['traceparent'] = state.traceparent;
    state.outcome.kind = 'native';
    const provider = target.providerId;
    const timers = new UpstreamTimers(attempt.timeouts);
    // http-proxy-3 adds a 'close' listener on the response and an 'error' listener on the request
    // per web() call; a failed attempt's are removed, or retries would pile them up. Counts, not
    // copies of the listener arrays (issue #17): listeners are kept in the order they were added,
    // so the attempt's own are the ones past the count (a listener removed meanwhile can only make
    // this remove too few, never an older one).
    const resCloseBefore = res.listenerCount('close');
    const reqErrorBefore = req.listenerCount('error');
    return new Promise((resolve) => {
      let proxyReq: ClientRequest | undefined;
      let committed = false;
      let settled = false;
      let interrupt: Interrupt | undefined;
      let stopWatchingAbort = (): void => undefined;
      const done = (result: AttemptResult): void => {
        if (settled) return;
        settled = true;
        stopWatchingAbort();
        if (!result.ok && outgoing.live) {
          // The body went to this upstream as it arrived: there is none left to send another (issue #13).
          // The upstream request is cut too: one that answered early must not wait for the rest.
          outgoing.live.destroy();
          if (proxyReq?.writableFinished !== true) proxyReq?.destroy();
          result = failed({ ...result.failure, retry: 'never' });
        }
        if (!result.ok) {
          for (const listener of res.listeners('close').slice(resCloseBefore)) res.off('close', listener as () => void);
          for (const listener of req.listeners('error').slice(reqErrorBefore)) req.off('error', listener as () => void);
        }
        resolve(result);
      };
      // The client left, or the shutdown grace ended.
      const onAbort = (cause: Error): void => {
        const reason = cause instanceof GatewayError ? cause : ERR.clientClosed();
        if (committed) {
          interrupt?.(reason);
          return;
        }
        proxyReq?.destroy();
        timers.clear();
        done(failed({ error: reason, retry: 'never', retryAfterMs: null, routeFault: false }));
      };
      stopWatchingAbort = attempt.cancel.onAbort(onAbort);
      if (settled) return; // already cancelled: nothing was sent

      // From here the client gets this answer: nothing after it is retried.
      const commitTo = (proxyRes: IncomingMessage, primed: Primed | undefined): void => {
        committed = true;
        attempt.commit();
        const status = proxyRes.statusCode ?? 502;
        // An error relayed in-band behind keepalives is not an answer (the ledger must not charge it).
        if (status < 300 || !res.headersSent) state.outcome.firstByteMs = performance.now() - state.startedAt;
        // A stream's first events are here: the upstream's time to first chunk (issue #16).
        if (status < 300 && primed !== undefined && state.outcome.attemptStartedAt !== undefined) state.outcome.upstreamFirstChunkMs = performance.now() - state.outcome.attemptStartedAt;
        // Done when the client response and the upstream answer have both closed: the answer's
        // handlers record usage and how it ended, which the ledger needs.
        let upstreamOpen = !proxyRes.destroyed;
        let clientClosed = res.destroyed || res.writableFinished;
        const settle = (): void => {
          if (clientClosed && !upstreamOpen) done(SERVED);
        };
        // on(), not once(): 'close' comes once, and once() wraps each listener in a bound function.
        res.on('close', () => {
          clientClosed = true;
          settle();
        });
        interrupt = relayNative({ ctx, provider, proxyRes, timers, primed });
        // Registered after the relay's own close handler (usage, interruption), so that one has
        // run first. It was a setImmediate after it (issue #17): a turn of the event loop per
        // request, with the settlement's group commit waiting a turn more behind it.
        proxyRes.on('close', () => {
          upstreamOpen = false;
          settle();
        });
      };

      req[HOOKS] = {
        onProxyReq: (request) => {
          proxyReq = request;
          timers.watch(request);
        },
        onProxyRes: (proxyRes) => {
          if (settled) {
            proxyRes.destroy();
            return;
          }
          timers.responded(proxyRes);
          proxyRes.on('error', () => undefined); // every ending is read from 'close'
          const status = proxyRes.statusCode ?? 502;
          state.outcome.upstreamStatus = status;
          const upstreamId = upstreamRequestIdIn(proxyRes.rawHeaders);
          if (upstreamId !== undefined) state.outcome.upstreamRequestId = upstreamId;
          if (status === 401) {
            // The provider refused the gateway's own key. Its body may echo part of that key
            // (OpenAI does), and "invalid x-api-key" would mislead the client: report our error.
            proxyRes.resume();
            this.#log.error({ req_id: state.requestId, provider }, 'upstream rejected the provider API key');
            done(failed({ error: ERR.upstreamRejectedCredentials(provider), retry: 'never', retryAfterMs: null, routeFault: false }));
            return;
          }
          if (retryClassOf(status) !== 'never') {
            void readErrorBody(proxyRes, () => timers.touch()).then((read) => {
              const header = (name: string): string | undefined => headerText(proxyRes.headers[name]);
              const retryAfter = retryAfterMs(header);
              const error = errorFromBody(read?.body ?? '', status, provider, retryHeaders(header));
              // The upstream's own answer is passed on only whole; a cut one would be invalid JSON.
              const whole = read !== null && !read.truncated;
              const rawAnswer = whole ? { status, headers: filterResponseHeaders(proxyRes.headers), body: read.body } : undefined;
              done(failed(statusFailure(status, error, retryAfter, rawAnswer)));
            });
            return;
          }
          if (status < 300 && proxyRes.headers['content-type']?.startsWith('text/event-stream') === true) {
            // A stream is committed to at its first whole event: one that opens with an error
            // (an overloaded_error under HTTP 200) is still a failure the loop may retry.
            void awaitFirstEvent(proxyRes, FORMAT_OF[route.endpoint], provider, timers, terminatorOf(route.endpoint, body)).then((first) => {
              if (settled) return;
              if (first.kind === 'events') commitTo(proxyRes, first.primed);
              else done(failed(first.kind === 'error' ? statusFailure(first.error.status, first.error, null) : failureOf(first.error)));
            });
            return;
          }
          commitTo(proxyRes, undefined);
        },
      };
      // A fault in a form found while it streams (the size limit, a missing or wrong file): the
      // upstream request is aborted before the form's end, so the upstream never gets a whole form.
      outgoing.live?.on('error', (err) => {
        proxyReq?.destroy();
        timers.clear();
        if (committed) return; // the upstream answered already; its answer is the client's
        done(failed({ error: err instanceof GatewayError ? err : ERR.clientClosed(), retry: 'never', retryAfterMs: null, routeFault: false }));
      });
      // A form still arriving is dispatched once it has all gone: an upstream that got part of one
      // has nothing to bill for (finish.ts charges a dispatched request its input).
      state.outcome.dispatched = outgoing.live === undefined;
      outgoing.live?.once('end', () => (state.outcome.dispatched = true));
      this.#proxy.web(req, res, { target: url, agent: this.#agents.for(url, provider), buffer: outgoing.source }, (err) => {
        if (committed || settled) return; // a failure after the answer began is the relay's to report
        timers.clear();
        this.#log.warn({ req_id: state.requestId, provider, err: err.message }, 'upstream request failed');
        const timeout = err instanceof UpstreamTimeout ? err : timers.fired;
        done(failed(connectionFailure(provider, timeout)));
      });
    });
  }
}
