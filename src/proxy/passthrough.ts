import { upstreamRequestIdIn } from './upstream-request-id.ts';
import type { ClientRequest, IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { createProxyServer, type ProxyServer } from 'http-proxy-3';
import { ERR, GatewayError } from '../errors.ts';
import { FORMAT_OF, type Endpoint } from '../formats/wire.ts';
import { terminatorOf } from './sse-terminator.ts';
import type { BodyBytes } from '../http/body-bytes.ts';
import type { JsonScan } from '../http/json-scan.ts';
import { formBody, jsonBody, type UpstreamBody } from './upstream-body.ts';
import { headOf, type GatewayContext } from '../http/state.ts';
import type { Logger } from '../log.ts';
import type { NativeUpstream } from '../plugin-host/api.ts';
import type { AbortListener } from '../routing/cancellation.ts';
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
  /** The path and query sent upstream when the client sent no query (upstreamPath). */
  readonly path: string;
  /** Whether a plain client query may be appended to `path` as it is (pathWithQuery). */
  readonly appendsQuery: boolean;
  readonly filterHeaders: RequestHeaderFilter;
}

export function compileNativeTarget(providerId: string, endpoint: Endpoint, native: NativeUpstream, url: string): NativeTarget {
  const parsedUrl = new URL(url);
  return {
    providerId,
    url,
    parsedUrl,
    path: upstreamPath(parsedUrl),
    appendsQuery: appendsQuery(url, parsedUrl),
    filterHeaders: createRequestHeaderFilter(FORMAT_OF[endpoint], native.forwardHeaders ?? [], native.headers),
  };
}

/**
 * The path and query a native request is sent to: what http-proxy-3 made of a target before
 * (`new URL` of its pathname and search, a parse that returns them as they are), without the parse.
 */
export function upstreamPath(target: URL): string {
  return `${target.pathname}${target.search}`;
}

/**
 * The path a request with the client's query `query` is sent to: `upstreamPath(new URL(\`${url}?${query}\`))`,
 * without the parse where the query holds only characters that parse leaves as they are, as
 * Claude Code's `?beta=true` does. Those are the printable ASCII characters outside the WHATWG URL
 * standard's special-query percent-encode set (space, `"`, `#`, `'`, `<`, `>`); `%` is copied
 * whatever follows it. A target with a fragment of its own is parsed, as before, and so is any
 * other query.
 */
export function pathWithQuery(target: Pick<NativeTarget, 'url' | 'path' | 'appendsQuery'>, query: string): string {
  if (target.appendsQuery && PLAIN_QUERY.test(query)) return `${target.path}?${query}`;
  return upstreamPath(new URL(`${target.url}?${query}`));
}

/**
 * Whether a target takes a plain query appended to its path as it is: not one with a fragment,
 * nor one ending in a bare `?` (an empty query, which the parsed URL drops). Worked out once per
 * target, at start-up.
 */
export function appendsQuery(url: string, parsed: URL): boolean {
  return !url.includes('#') && (parsed.search !== '' || !url.includes('?'));
}
const PLAIN_QUERY = /^[!$-&(-;=?-~]+$/;

/** Per-attempt hooks for http-proxy-3's server-wide events, found by the client request. */
interface AttemptHooks {
  onProxyReq(proxyReq: ClientRequest): void;
  onProxyRes(proxyRes: IncomingMessage): void;
}

/**
 * The attempt's hooks ride on the request itself. WeakMaps keyed by
 * the request kept each request's whole graph (ctx, timers, body) alive past the young generation:
 * ephemeron entries wait for a full mark-compact, so everything was promoted (issue #17;
 * hot-path-profile.md §3: about 175 µs of GC per small request).
 */
const HOOKS = Symbol('junction.attemptHooks');
type ProxiedRequest = IncomingMessage & { [HOOKS]?: AttemptHooks };
/** The exchange a listener shared by every request serves, kept on the emitter it listens to. */
const EXCHANGE = Symbol('junction.nativeExchange');

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
    // The path sent upstream is the target's, handed to http-proxy-3 as the request's url for the
    // length of web() (serve): with `prependPath: false` and `toProxy`, its setupOutgoing joins
    // that path to "/" as it is. The target's path (prependPath) and the client's (without toProxy)
    // were each parsed with `new URL` on every request, about 6k instructions each (issue #17,
    // thirtieth session); `toProxy` has no other use in http-proxy-3 1.x.
    const options = { selfHandleResponse: true, changeOrigin: true, prependPath: false, toProxy: true, xfwd: false };
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
    // Only the path carries the client's query: http-proxy-3 takes host, port and scheme from the target.
    const url = target.parsedUrl;
    const path = ctx.querystring === '' ? target.path : pathWithQuery(target, ctx.querystring);
    // http-proxy-3 copies req.headers upstream wholesale; hand it only the allowed ones.
    // The client's own headers, kept in the state: each attempt filters them afresh for its target.
    const forwarded = target.filterHeaders(state.headers, outgoing.shape);
    // With traces on, the attempt's span continues upstream in place of the client's (issue #16).
    if (state.traceparent) forwarded['traceparent'] = state.traceparent;
    req.headers = forwarded;
    state.outcome.kind = 'native';
    const provider = target.providerId;
    return new Promise((resolve) => {
      const exchange = new NativeExchange(this.#log, ctx, provider, route.endpoint, body, attempt, outgoing, resolve);
      attempt.cancel.listen(exchange);
      if (exchange.settled) return; // already cancelled: nothing was sent
      req[HOOKS] = exchange;
      // A fault in a form found while it streams (the size limit, a missing or wrong file): the
      // upstream request is aborted before the form's end, so the upstream never gets a whole form.
      // A form still arriving is dispatched once it has all gone: an upstream that got part of one
      // has nothing to bill for (finish.ts charges a dispatched request its input).
      state.outcome.dispatched = outgoing.live === undefined;
      if (outgoing.live) {
        const live = outgoing.live as LiveBody;
        live[EXCHANGE] = exchange;
        live.on('error', onLiveBodyError);
        live.once('end', onLiveBodyEnd);
      }
      // A closure of the attempt's own, not a shared function: http-proxy-3 hands its callback only
      // the request, whose hooks a later attempt may have replaced by the time an old one errs.
      // web() reads req.url only before it returns (setupOutgoing); Koa and the rest of the chain
      // see the client's own url again afterwards.
      const clientUrl = req.url;
      req.url = path;
      try {
        this.#proxy.web(req, res, { target: url, agent: this.#agents.for(url, provider), buffer: outgoing.source }, (err) => exchange.proxyFailed(err));
      } finally {
        req.url = clientUrl;
      }
    });
  }
}

type LiveBody = Readable & { [EXCHANGE]?: NativeExchange };
type UpstreamAnswer = IncomingMessage & { [EXCHANGE]?: NativeExchange };
type ClientResponse = GatewayContext['res'] & { [EXCHANGE]?: NativeExchange };

/**
 * One attempt's exchange with its upstream, from dispatch until both the client's response and
 * the upstream's answer have closed. Its steps are methods, and the listeners it needs are
 * module-level functions that find it on the emitter: per-request closures each cost an
 * allocation and a lazy compile on first call (issue #17, twenty-sixth session: 41 a small Chat
 * request against the floor's 26).
 */
class NativeExchange implements AttemptHooks, AbortListener {
  #proxyReq: ClientRequest | undefined;
  #committed = false;
  #settled = false;
  #interrupt: Interrupt | undefined;
  #upstreamOpen = false;
  #clientClosed = false;
  readonly #timers: UpstreamTimers;
  readonly #resCloseBefore: number;
  readonly #reqErrorBefore: number;

  constructor(
    readonly log: Logger,
    readonly ctx: GatewayContext,
    readonly provider: string,
    readonly endpoint: Endpoint,
    /** The request's head, which says how its stream ends (sse-terminator.ts). */
    readonly head: Record<string, unknown>,
    readonly attempt: Attempt,
    readonly outgoing: UpstreamBody,
    readonly resolve: (result: AttemptResult) => void,
  ) {
    this.#timers = new UpstreamTimers(attempt.timeouts);
    // http-proxy-3 adds a 'close' listener on the response and an 'error' listener on the request
    // per web() call; a failed attempt's are removed, or retries would pile them up. Counts, not
    // copies of the listener arrays (issue #17): listeners are kept in the order they were added,
    // so the attempt's own are the ones past the count (a listener removed meanwhile can only make
    // this remove too few, never an older one).
    this.#resCloseBefore = ctx.res.listenerCount('close');
    this.#reqErrorBefore = ctx.req.listenerCount('error');
  }

  get settled(): boolean {
    return this.#settled;
  }

  #done(result: AttemptResult): void {
    if (this.#settled) return;
    this.#settled = true;
    this.attempt.cancel.unlisten(this);
    const { req, res } = this.ctx;
    const live = this.outgoing.live;
    if (!result.ok && live) {
      // The body went to this upstream as it arrived: there is none left to send another (issue #13).
      // The upstream request is cut too: one that answered early must not wait for the rest.
      live.destroy();
      if (this.#proxyReq?.writableFinished !== true) this.#proxyReq?.destroy();
      result = failed({ ...result.failure, retry: 'never' });
    }
    if (!result.ok) {
      for (const listener of res.listeners('close').slice(this.#resCloseBefore)) res.off('close', listener as () => void);
      for (const listener of req.listeners('error').slice(this.#reqErrorBefore)) req.off('error', listener as () => void);
    }
    this.resolve(result);
  }

  /** The client left, or the shutdown grace ended. */
  aborted(cause: Error): void {
    const reason = cause instanceof GatewayError ? cause : ERR.clientClosed();
    if (this.#committed) {
      this.#interrupt?.(reason);
      return;
    }
    this.#proxyReq?.destroy();
    this.#timers.clear();
    this.#done(failed({ error: reason, retry: 'never', retryAfterMs: null, routeFault: false }));
  }

  onProxyReq(request: ClientRequest): void {
    this.#proxyReq = request;
    this.#timers.watch(request);
  }

  onProxyRes(proxyRes: IncomingMessage): void {
    if (this.#settled) {
      proxyRes.destroy();
      return;
    }
    const { state } = this.ctx;
    const provider = this.provider;
    this.#timers.responded(proxyRes);
    proxyRes.on('error', ignore); // every ending is read from 'close'
    const status = proxyRes.statusCode ?? 502;
    const headers = proxyRes.headers; // a getter of a megamorphic load each read: read once (native-relay.ts)
    state.outcome.upstreamStatus = status;
    const upstreamId = upstreamRequestIdIn(proxyRes.rawHeaders);
    if (upstreamId !== undefined) state.outcome.upstreamRequestId = upstreamId;
    if (status === 401) {
      // The provider refused the gateway's own key. Its body may echo part of that key
      // (OpenAI does), and "invalid x-api-key" would mislead the client: report our error.
      proxyRes.resume();
      this.log.error({ req_id: state.requestId, provider }, 'upstream rejected the provider API key');
      this.#done(failed({ error: ERR.upstreamRejectedCredentials(provider), retry: 'never', retryAfterMs: null, routeFault: false }));
      return;
    }
    if (retryClassOf(status) !== 'never') {
      void readErrorBody(proxyRes, () => this.#timers.touch()).then((read) => {
        const header = (name: string): string | undefined => headerText(headers[name]);
        const retryAfter = retryAfterMs(header);
        const error = errorFromBody(read?.body ?? '', status, provider, retryHeaders(header));
        // The upstream's own answer is passed on only whole; a cut one would be invalid JSON.
        const whole = read !== null && !read.truncated;
        const rawAnswer = whole ? { status, headers: filterResponseHeaders(headers), body: read.body } : undefined;
        this.#done(failed(statusFailure(status, error, retryAfter, rawAnswer)));
      });
      return;
    }
    if (status < 300 && headers['content-type']?.startsWith('text/event-stream') === true) {
      // A stream is committed to at its first whole event: one that opens with an error
      // (an overloaded_error under HTTP 200) is still a failure the loop may retry.
      void awaitFirstEvent(proxyRes, FORMAT_OF[this.endpoint], provider, this.#timers, terminatorOf(this.endpoint, this.head)).then((first) => {
        if (this.#settled) return;
        if (first.kind === 'events') this.#commitTo(proxyRes, headers, first.primed);
        else this.#done(failed(first.kind === 'error' ? statusFailure(first.error.status, first.error, null) : failureOf(first.error)));
      });
      return;
    }
    this.#commitTo(proxyRes, headers, undefined);
  }

  /** From here the client gets this answer: nothing after it is retried. */
  #commitTo(proxyRes: UpstreamAnswer, upstreamHeaders: IncomingHttpHeaders, primed: Primed | undefined): void {
    this.#committed = true;
    this.attempt.commit();
    const ctx = this.ctx;
    const { state } = ctx;
    const res: ClientResponse = ctx.res;
    const status = proxyRes.statusCode ?? 502;
    // An error relayed in-band behind keepalives is not an answer (the ledger must not charge it).
    if (status < 300 || !res.headersSent) state.outcome.firstByteMs = performance.now() - state.startedAt;
    // A stream's first events are here: the upstream's time to first chunk (issue #16).
    if (status < 300 && primed !== undefined && state.outcome.attemptStartedAt !== undefined) state.outcome.upstreamFirstChunkMs = performance.now() - state.outcome.attemptStartedAt;
    // Done when the client response and the upstream answer have both closed: the answer's
    // handlers record usage and how it ended, which the ledger needs.
    this.#upstreamOpen = !proxyRes.destroyed;
    this.#clientClosed = res.destroyed || res.writableFinished;
    // on(), not once(): 'close' comes once, and once() wraps each listener in a bound function.
    res[EXCHANGE] = this;
    res.on('close', onClientClose);
    this.#interrupt = relayNative({ ctx, provider: this.provider, proxyRes, upstreamHeaders, timers: this.#timers, primed });
    // Registered after the relay's own close handler (usage, interruption), so that one has
    // run first. It was a setImmediate after it (issue #17): a turn of the event loop per
    // request, with the settlement's group commit waiting a turn more behind it.
    proxyRes[EXCHANGE] = this;
    proxyRes.on('close', onUpstreamClose);
  }

  clientClosed(): void {
    this.#clientClosed = true;
    if (!this.#upstreamOpen) this.#done(SERVED);
  }

  upstreamClosed(): void {
    this.#upstreamOpen = false;
    if (this.#clientClosed) this.#done(SERVED);
  }

  liveBodyFailed(err: unknown): void {
    this.#proxyReq?.destroy();
    this.#timers.clear();
    if (this.#committed) return; // the upstream answered already; its answer is the client's
    this.#done(failed({ error: err instanceof GatewayError ? err : ERR.clientClosed(), retry: 'never', retryAfterMs: null, routeFault: false }));
  }

  proxyFailed(err: Error): void {
    if (this.#committed || this.#settled) return; // a failure after the answer began is the relay's to report
    this.#timers.clear();
    this.log.warn({ req_id: this.ctx.state.requestId, provider: this.provider, err: err.message }, 'upstream request failed');
    const timeout = err instanceof UpstreamTimeout ? err : this.#timers.fired;
    this.#done(failed(connectionFailure(this.provider, timeout)));
  }
}

const ignore = (): void => undefined;
function onClientClose(this: ClientResponse): void {
  this[EXCHANGE]?.clientClosed();
}
function onUpstreamClose(this: UpstreamAnswer): void {
  this[EXCHANGE]?.upstreamClosed();
}
function onLiveBodyError(this: LiveBody, err: unknown): void {
  this[EXCHANGE]?.liveBodyFailed(err);
}
function onLiveBodyEnd(this: LiveBody): void {
  const exchange = this[EXCHANGE];
  if (exchange) exchange.ctx.state.outcome.dispatched = true;
}
