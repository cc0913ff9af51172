import { upstreamRequestId } from '../../proxy/upstream-request-id.ts';
import { UpstreamTimers } from '../../proxy/upstream-timers.ts';
import type { Timeouts } from '../../config/types.ts';
import http from 'node:http';
import https from 'node:https';
import Router from '@koa/router';
import { ERR } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import type { LoadedProvider } from '../../plugin-host/loader.ts';
import type { UpstreamAgents } from '../../proxy/agents.ts';
import { filterResponseHeaders } from '../../proxy/headers.ts';
import type { Store } from '../../store/store.ts';
import { storedOf, type StoredResponse } from '../middleware/response-state.ts';
import { writeErrorResponse } from '../write-error.ts';
import type { GatewayContext, GatewayMiddleware, GatewayState } from '../state.ts';

/** What each companion route asks of the upstream that keeps the response, after `/responses/{id}`. */
const ROUTES = [
  ['get', '/v1/responses/:id', ''],
  ['delete', '/v1/responses/:id', ''],
  ['get', '/v1/responses/:id/input_items', '/input_items'],
  ['post', '/v1/responses/:id/cancel', '/cancel'],
] as const;

/**
 * The Responses companion endpoints on native routes (issue #14; responses-api.md §6): retrieve
 * (with `?stream=true` replays), delete, list input items, cancel. Each goes to the upstream that
 * keeps the response, with that provider's key, and only for the key that made it: any other id
 * is a 404 before anything is sent. They are free and leave no ledger row.
 */
export function createResponsesRouter(auth: GatewayMiddleware, store: Store, providers: ReadonlyMap<string, LoadedProvider>, agents: UpstreamAgents, log: Logger): Router<GatewayState> {
  const router = new Router<GatewayState>();
  for (const [method, path, suffix] of ROUTES) {
    router[method](path, auth, async (ctx) => {
      const id = ctx.params['id'] ?? '';
      const key = ctx.state.key;
      if (!key) throw ERR.internal();
      // Only ids an upstream could have minted: nothing a URL would read as a path or a query.
      const record = /^[A-Za-z0-9_-]{1,200}$/.test(id) ? await store.findResponse(id, key.id, new Date()) : undefined;
      const stored = storedOf(record);
      if (stored) {
        await answerKept(ctx, stored, suffix, store, key.id);
        return;
      }
      const provider = record && providers.get(record.provider);
      const native = provider?.plugin.native;
      const base = native?.endpoints.responses;
      if (!record || !provider || !native || base === undefined) throw ERR.responseNotFound(id, null);
      const url = new URL(`${base}/${id}${suffix}${ctx.querystring === '' ? '' : `?${ctx.querystring}`}`);
      const status = await relay(ctx, url, native.headers, agents, record.provider, provider.config.timeouts, log);
      if (method === 'delete' && status < 300) await store.deleteResponse(id, key.id);
    });
  }
  return router;
}

/** The companion routes for a response Junction keeps itself (a translated route's). */
async function answerKept(ctx: GatewayContext, stored: StoredResponse, suffix: (typeof ROUTES)[number][2], store: Store, keyId: number): Promise<void> {
  const id = String(stored.response['id']);
  switch (suffix) {
    case '':
      if (ctx.method === 'DELETE') {
        await store.deleteResponse(id, keyId);
        ctx.body = { id, object: 'response.deleted', deleted: true };
      } else {
        ctx.body = stored.response;
      }
      return;
    case '/input_items': {
      // Newest first unless asked otherwise, a page of `limit` (1–100, 20 by default) after the
      // item `after`, as OpenAI lists them (responses-api.md §6).
      const all = ctx.query['order'] === 'asc' ? stored.input : [...stored.input].reverse();
      const after = typeof ctx.query['after'] === 'string' ? all.findIndex((item) => item['id'] === ctx.query['after']) + 1 : 0;
      const asked = Number(ctx.query['limit'] ?? 20);
      const limit = Number.isInteger(asked) && asked >= 1 && asked <= 100 ? asked : 20;
      const data = all.slice(after, after + limit);
      ctx.body = { object: 'list', data, first_id: data[0]?.['id'] ?? null, last_id: data.at(-1)?.['id'] ?? null, has_more: after + limit < all.length };
      return;
    }
    case '/cancel':
      throw ERR.invalidField('Only background responses can be cancelled; this one has completed.', 'response_id');
  }
}

/** Sends the request upstream and pipes its answer back; resolves with the status once the answer has ended. */
function relay(ctx: GatewayContext, url: URL, headers: Readonly<Record<string, string>>, agents: UpstreamAgents, provider: string, timeouts: Timeouts, log: Logger): Promise<number> {
  ctx.respond = false;
  const { res, state } = ctx;
  return new Promise((resolve) => {
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method: ctx.method,
      agent: agents.for(url, provider),
      headers: { ...headers, accept: ctx.get('accept') || 'application/json', 'accept-encoding': 'identity', 'content-length': '0' },
    });
    // The provider's timeouts, as on every upstream exchange (proxy/upstream-timers.ts): its idle
    // deadline waits while the client is slow to read a replay, and a stalled gateway is not a
    // silent upstream. A socket timeout (`request.setTimeout`, before) cut a client that paused
    // longer than idle_ms, blaming the upstream.
    const timers = new UpstreamTimers(timeouts);
    timers.watch(request);
    request.once('error', (err) => {
      log.warn({ req_id: state.requestId, provider, err: err.message }, 'upstream request failed');
      if (res.headersSent) res.destroy();
      else writeErrorResponse(res, state.surface, timers.fired ? ERR.upstreamTimeout(provider, timers.fired.kind, timers.fired.ms) : ERR.upstreamUnreachable(provider), state.requestId);
      resolve(502);
    });
    request.once('response', (answer) => {
      timers.responded(answer);
      const status = answer.statusCode ?? 502;
      state.outcome.upstreamStatus = status;
      const upstreamId = upstreamRequestId((name) => answer.headers[name]);
      if (upstreamId !== undefined) state.outcome.upstreamRequestId = upstreamId;
      answer.on('error', () => undefined); // reported by 'close' below
      if (status === 401 || status === 403) {
        // The provider refused the gateway's key; its body may echo part of that key.
        answer.resume();
        log.error({ req_id: state.requestId, provider }, 'upstream rejected the provider API key');
        writeErrorResponse(res, state.surface, ERR.upstreamRejectedCredentials(provider), state.requestId);
        resolve(status);
        return;
      }
      res.writeHead(status, filterResponseHeaders(answer.headers));
      // Paused by pipe() while the client is slow to read: that silence is not the upstream's (as in
      // proxy/native-relay.ts).
      answer.on('pause', () => timers.hold());
      answer.on('resume', () => timers.resume());
      answer.on('data', () => timers.touch());
      answer.pipe(res);
      answer.once('close', () => {
        // An answer cut short must not leave the client waiting for the rest.
        if (!answer.complete && !res.writableEnded) res.destroy();
        resolve(status);
      });
    });
    res.once('close', () => request.destroy());
    request.end();
  });
}
