import type { IncomingMessage, ServerResponse } from 'node:http';
import { Stream, type Writable } from 'node:stream';
import { createProxyServer, type ProxyServer } from 'http-proxy-3';
import { ERR, GatewayError } from '../errors.ts';
import { FORMAT_OF, type Endpoint } from '../formats/wire.ts';
import { spliceFields, type JsonScan } from '../http/json-scan.ts';
import { CLIENT_DISCONNECTED, type GatewayContext } from '../http/state.ts';
import { writeErrorResponse } from '../http/write-error.ts';
import type { Logger } from '../log.ts';
import type { NativeUpstream } from '../plugin-host/api.ts';
import { streamErrorFrame } from '../sse/encode.ts';
import { createUsageTap } from '../usage/tap.ts';
import { asksForUsage, withUsageRequested } from '../usage/chat-stream-usage.ts';
import type { UpstreamAgents } from './agents.ts';
import { createRequestHeaderFilter, filterResponseHeaders, type RequestHeaderFilter } from './headers.ts';
import { addCostToBody, ChatStreamRewriter, type AddCost } from './chat-usage-rewriter.ts';
import { costOf } from '../billing/pricing.ts';
import { picoToUsdNumber } from '../billing/money.ts';
import { applyChatUsage, emptyUsage } from '../usage/normalize.ts';
import type { OutgoingHttpHeaders } from 'node:http';

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

/** The request body handed to http-proxy-3's `buffer` option: it only ever calls `pipe()`. */
class BodySource extends Stream {
  readonly #body: Buffer;
  constructor(body: Buffer) {
    super();
    this.#body = body;
  }
  override pipe<T extends NodeJS.WritableStream>(destination: T): T {
    (destination as unknown as Writable).end(this.#body);
    return destination;
  }
}

/**
 * Native passthrough through one shared http-proxy-3 server. The client's bytes go upstream
 * unchanged (read once, sent with the `buffer` option); only `model` is rewritten when the route
 * names another upstream model. We handle the response ourselves (`selfHandleResponse`) to apply
 * the header allowlist, read usage as bytes pass, and end a cut stream with an error rather than
 * a clean end (http-proxy-3 leaves it hanging: engineering-notes.md).
 */
export class Passthrough {
  readonly #proxy: ProxyServer;
  readonly #log: Logger;
  readonly #responders = new WeakMap<IncomingMessage, (proxyRes: IncomingMessage) => void>();
  readonly #agents: UpstreamAgents;

  constructor(log: Logger, agents: UpstreamAgents) {
    this.#log = log;
    this.#agents = agents;
    this.#proxy = createProxyServer({ selfHandleResponse: true, changeOrigin: true, ignorePath: true, xfwd: false });
    this.#proxy.on('proxyRes', (proxyRes, req) => this.#responders.get(req)?.(proxyRes));
    // Every web() call passes its own error callback; this listener only keeps a stray error
    // from being thrown (http-proxy-3 throws when no listener exists).
    this.#proxy.on('error', (err) => this.#log.warn({ err: err.message }, 'proxy error'));
  }

  serve(ctx: GatewayContext, target: NativeTarget): Promise<void> {
    const { state, req, res } = ctx;
    const { route, raw, scan, body } = state;
    if (!route || !raw || !scan || !body) throw ERR.internal();
    // Chat streams always ask for usage, so the ledger has real counts (issue #4).
    state.usageForced = route.endpoint === 'chat_completions' && body['stream'] === true && !asksForUsage(body);
    const bytes = requestBytes(raw, scan, body, route.upstreamModel !== route.model.id ? route.upstreamModel : undefined, state.usageForced === true);
    const url = ctx.querystring === '' ? target.parsedUrl : new URL(`${target.url}?${ctx.querystring}`);
    // http-proxy-3 copies req.headers upstream wholesale; hand it only the allowed ones.
    req.headers = target.filterHeaders(req.headers, bytes.length);
    state.outcome.kind = 'native';
    ctx.respond = false;
    return new Promise((resolve) => {
      // Done when the client response has closed and, once an upstream answer came, after that
      // answer closed too: its handlers record usage and how it ended, which the ledger needs.
      let upstreamOpen = false;
      let clientClosed = false;
      const settle = (): void => {
        if (clientClosed && !upstreamOpen) resolve();
      };
      res.once('close', () => {
        clientClosed = true;
        if (!res.writableFinished) state.outcome.error ??= CLIENT_DISCONNECTED;
        settle();
      });
      this.#responders.set(req, (proxyRes) => {
        upstreamOpen = true;
        proxyRes.once('close', () => {
          upstreamOpen = false;
          // Deferred so the relay's own close handler (usage, interruption) has run first.
          setImmediate(settle);
        });
        this.#relay(ctx, target, proxyRes);
      });
      state.outcome.dispatched = true;
      this.#proxy.web(
        req,
        res,
        { target: url, agent: this.#agents.for(url), buffer: new BodySource(bytes) },
        (err) => this.#failed(ctx, target, err),
      );
    });
  }

  #relay(ctx: GatewayContext, target: NativeTarget, proxyRes: IncomingMessage): void {
    const { state, res } = ctx;
    const status = proxyRes.statusCode ?? 502;
    const endpoint = state.route?.endpoint ?? 'messages';
    state.outcome.upstreamStatus = status;
    state.outcome.firstByteMs = performance.now() - state.startedAt;
    proxyRes.on('error', () => undefined); // reported through 'close' below
    if (status === 401) {
      // The provider refused the gateway's own key. Its body may echo part of that key
      // (OpenAI does), and "invalid x-api-key" would mislead the client: report our error instead.
      proxyRes.resume();
      this.#log.error({ req_id: state.requestId, provider: target.providerId }, 'upstream rejected the provider API key');
      writeErrorResponse(res, state.surface, ERR.upstreamRejectedCredentials(target.providerId), state.requestId);
      return;
    }
    const headers = filterResponseHeaders(proxyRes.headers);
    const contentType = proxyRes.headers['content-type'];
    const isSse = contentType?.startsWith('text/event-stream') === true;
    const tap = status < 300 && endpoint !== 'count_tokens' ? createUsageTap(FORMAT_OF[endpoint], contentType) : null;
    let atEventBoundary = true;
    let usageRead = false;
    const readUsage = (): void => {
      if (usageRead) return;
      usageRead = true;
      const usage = tap?.finish();
      if (usage) state.outcome.usage = usage;
      if (tap) state.outcome.outputEstimate = tap.outputEstimate();
    };
    proxyRes.on('data', (chunk: Buffer) => {
      tap?.push(chunk);
      atEventBoundary = chunk.length >= 2 && chunk[chunk.length - 1] === 0x0a && chunk[chunk.length - 2] === 0x0a;
    });
    // Registered before the body is forwarded, so usage is recorded before the client response
    // ends and the request is settled.
    proxyRes.on('end', readUsage);
    proxyRes.on('close', () => {
      readUsage();
      if (proxyRes.complete) return;
      state.outcome.error = res.destroyed && !res.writableFinished ? CLIENT_DISCONNECTED : 'upstream_interrupted';
      this.#endInterrupted(res, state.surface, state.requestId, target, isSse, atEventBoundary);
    });
    const chat = endpoint === 'chat_completions' && status < 300 && state.route !== undefined;
    if (chat && isSse && (state.usageForced === true || asksForUsage(state.body))) {
      relayRewritten(proxyRes, res, status, headers, new ChatStreamRewriter({ dropUsageChunk: state.usageForced === true, addCost: costAdder(state) }));
    } else if (chat && !isSse) {
      relayWithCost(proxyRes, res, status, headers, costAdder(state));
    } else {
      res.writeHead(status, headers);
      proxyRes.pipe(res);
    }
  }

  #failed(ctx: GatewayContext, target: NativeTarget, err: Error): void {
    const { state, res } = ctx;
    this.#log.warn({ req_id: state.requestId, provider: target.providerId, err: err.message }, 'upstream request failed');
    if (!res.headersSent) {
      state.outcome.error = 'upstream_unreachable';
      writeErrorResponse(res, state.surface, ERR.upstreamUnreachable(target.providerId), state.requestId);
    }
  }

  /** A response cut after it started: a stream ends with an in-band error, a JSON body with a broken connection. */
  #endInterrupted(
    res: ServerResponse,
    surface: GatewayContext['state']['surface'],
    requestId: string,
    target: NativeTarget,
    isSse: boolean,
    atEventBoundary: boolean,
  ): void {
    if (res.destroyed || res.writableEnded) return;
    if (!isSse) {
      res.destroy();
      return;
    }
    const err: GatewayError = ERR.upstreamInterrupted(target.providerId);
    // Close a half-written event first, so the error arrives as an event of its own.
    res.end(`${atEventBoundary ? '' : '\n\n'}${streamErrorFrame(surface, err, requestId)}`);
  }
}

/**
 * The client's bytes, with the only changes a native route makes: the upstream model name, and
 * `stream_options.include_usage` on a Chat stream the client did not ask usage for (issue #4).
 */
function requestBytes(raw: Buffer, scan: JsonScan, body: Record<string, unknown>, model: string | undefined, forceUsage: boolean): Buffer {
  const edits: Record<string, unknown> = {};
  if (model !== undefined) edits['model'] = model;
  if (forceUsage) edits['stream_options'] = withUsageRequested(body);
  return Object.keys(edits).length === 0 ? raw : spliceFields(raw, scan, body, edits);
}


/** `usage.cost` in USD at the model's prices (OpenRouter's convention; issue #4). */
function costAdder(state: GatewayContext['state']): AddCost {
  return (raw) => {
    if (!state.route) return 0;
    const usage = emptyUsage();
    applyChatUsage(usage, raw);
    return picoToUsdNumber(costOf(usage, state.route.prices));
  };
}

/** A Chat stream through the rewriter, with backpressure. */
function relayRewritten(proxyRes: IncomingMessage, res: ServerResponse, status: number, headers: OutgoingHttpHeaders, rewriter: ChatStreamRewriter): void {
  res.writeHead(status, headers);
  proxyRes.on('data', (chunk: Buffer) => {
    const out = rewriter.push(chunk);
    if (out.length > 0 && !res.write(out)) proxyRes.pause();
  });
  res.on('drain', () => proxyRes.resume());
  proxyRes.on('end', () => res.end(rewriter.flush()));
}

/** A whole Chat answer, held until complete to carry usage.cost (answers are small). */
function relayWithCost(proxyRes: IncomingMessage, res: ServerResponse, status: number, headers: OutgoingHttpHeaders, addCost: AddCost): void {
  const chunks: Buffer[] = [];
  proxyRes.on('data', (chunk: Buffer) => chunks.push(chunk));
  proxyRes.on('end', () => {
    const body = addCostToBody(Buffer.concat(chunks), addCost);
    res.writeHead(status, { ...headers, 'content-length': body.length });
    res.end(body);
  });
}
