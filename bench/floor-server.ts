// Issue #17's floor: the least a gateway must do on a native route, on the design card's stack,
// measured beside the bare proxy (the `floor` arm of bench/run.mjs). Koa with @koa/router and a
// chain of the same length as Junction's; a key looked up by its SHA-256; the body read whole and
// checked by Junction's own byte-level checks (the issue requires a precise 400 before anything
// goes upstream), stepping over the key's last request's elements where they come again; a durable
// hold before dispatch and a durable settlement after it, in a SQLite WAL file, group-committed per
// event-loop turn with the same statements and indexes as Junction's ledger; http-proxy-3 for the
// upstream; usage read from the answer. Nothing else: no timers, no failover, no rate limits, no
// metrics, no logging, no stream guard, no settlement of a request whose client left. Whatever
// Junction costs above this is its own; a target this cannot reach, Junction cannot either.
// FLOOR_STREAMS=on (the `floor-streams` arm) adds what the product's standards require of any
// gateway's streams, with Junction's own parts: the stream guard, the upstream timers and the exact
// usage tap (relayStream below). FLOOR_LEDGER=rows (the `floor-ledger` arm) keeps the ledger rows
// the product keeps, on Junction's schema (below).
// Usage: [FLOOR_STREAMS=on] [FLOOR_LEDGER=off|rows|product] node --import ./bin/register.mjs bench/floor-server.ts <upstreamUrl>
import Router from '@koa/router';
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http, { type ClientRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createProxyServer } from 'http-proxy-3';
import Koa, { type Context, type Next } from 'koa';
import { checkRequest, type CheckedEndpoint, type KnownRequest } from '../src/http/request-check.ts';
import type { ElementRange } from '../src/http/request-check-parts.ts';
import { newRequestId } from '../src/util/request-id.ts';
import { tuneGc } from '../src/util/gc-settings.ts';
// Junction's timestamp text: toISOString's printf costs 7,000 instructions a call (util/iso-time.ts).
import { isoTime } from '../src/util/iso-time.ts';
import { BodyBytes } from '../src/http/body-bytes.ts';
import { BodySource } from '../src/proxy/upstream-body.ts';
import { DEFAULT_TIMEOUTS } from '../src/config/defaults.ts';
import { FORMAT_OF, PATH_OF } from '../src/formats/wire.ts';
import { SseGuard } from '../src/proxy/sse-guard.ts';
import { terminatorOf } from '../src/proxy/sse-terminator.ts';
import { UpstreamTimers } from '../src/proxy/upstream-timers.ts';
import { LeanHttpAgent } from '../src/proxy/lean-agents.ts';
import { upstreamPath } from '../src/proxy/passthrough.ts';
import { usageTapFor } from '../src/usage/tap.ts';
import { ERR, type Surface } from '../src/errors.ts';
import { writeErrorResponse } from '../src/http/write-error.ts';
import { streamErrorFrame } from '../src/sse/encode.ts';
import { floorStatements, floorTables, productStatements } from './floor-ledger.ts';
import { MIGRATIONS } from '../src/store/sqlite/migrations.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';

const upstream = process.argv[2] ?? '';
const BENCH_KEY = 'sk-jct-bench-0123456789abcdef'; // junction-server.ts's
const dir = mkdtempSync(path.join(tmpdir(), 'junction-floor-'));
const db = new Database(path.join(dir, 'ledger.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.defaultSafeIntegers(true);
const sha = (text: string): string => createHash('sha256').update(text).digest('hex');
// FLOOR_LEDGER=rows (the `floor-ledger` arm of bench/run.mjs, on the whole requests): the holds
// and ledger rows the product keeps, with Junction's schema and statements (foreign keys on),
// written by the floor's own group commit below, in place of the floor's narrow ones. A request's row carries what the
// ledger and GET /v1/generations/{id} give back (endpoint, provider, upstream model, route, every
// token kind, what was charged and not collected, the outcome, first byte and duration); a hold,
// what settles a request whose process died (its input's cost, model, provider, instance).
// FLOOR_LEDGER=product: the same rows written by Junction's store itself (productStore below), to
// tell the rows' cost from the store's code (issue #17, thirty-second session).
const ROWS = process.env['FLOOR_LEDGER'] === 'rows';
if (ROWS) {
  for (const migration of MIGRATIONS) db.exec(migration.sql);
  db.pragma('foreign_keys = ON');
  db.prepare("INSERT INTO keys (name, sha256, prefix, source, created_at, updated_at) VALUES ('bench', ?, 'sk-jct-bench', 'config', 't', 't')").run(sha(BENCH_KEY));
  db.prepare('INSERT INTO key_counters (key_id, balance) VALUES (1, ?)').run(10n ** 18n);
} else {
  db.exec(floorTables());
  db.prepare('INSERT INTO keys (sha256, balance) VALUES (?, ?)').run(sha(BENCH_KEY), 10n ** 18n);
}
const keyIds = new Map<string, bigint>([[sha(BENCH_KEY), 1n]]);

const sql = ROWS ? productStatements() : floorStatements();
const reserveSql = [db.prepare(sql.take), db.prepare(sql.hold)] as const;
const settleSql = [db.prepare(sql.release), db.prepare(sql.read), db.prepare(sql.charge), db.prepare(sql.row)] as const;

// Group commit: the writes of one event-loop turn share a transaction, as Junction's do.
let queue: { run: () => boolean; done: (ok: boolean) => void }[] = [];
const commit = db.transaction((batch: typeof queue) => batch.map((w) => w.run()));
// FLOOR_LEDGER=off: the same chain with no ledger writes, to measure what they cost.
const LEDGER = process.env['FLOOR_LEDGER'] !== 'off';
// FLOOR_LEDGER=product: Junction's store (src/store/sqlite/sqlite-store.ts: its schema, statements
// and group commit) takes the holds and settlements.
const productStore = process.env['FLOOR_LEDGER'] === 'product' ? new SqliteStore(path.join(dir, 'product.db')) : undefined;
if (productStore) {
  await productStore.migrate();
  await productStore.createKey({ name: 'bench', sha256: sha(BENCH_KEY), prefix: 'sk-jct-bench', balance: 10n ** 18n, models: null, limits: { rpm: null, tpm: null, concurrency: null } });
}
const INSTANCE = newRequestId().replace('req_', 'inst_');
// FLOOR_STREAMS=on: streams relayed as the product's standards require (relayStream below).
const STREAMS = process.env['FLOOR_STREAMS'] === 'on';
const submit = (run: () => boolean): Promise<boolean> =>
  new Promise((done) => {
    if (!LEDGER) {
      setImmediate(() => done(true));
      return;
    }
    if (queue.push({ run, done }) === 1) {
      setImmediate(() => {
        const batch = queue;
        queue = [];
        const results = commit.immediate(batch);
        batch.forEach((w, i) => w.done(results[i] === true));
      });
    }
  });

interface FloorState {
  id: string;
  keyId: bigint;
  raw: BodyBytes;
  model: string;
  hold: bigint;
  startedAt: number;
}
const PRICE = 3n; // per token, any unit: the arithmetic is what costs
// The stack-level savings Junction's passthrough makes, so the floor stays the least this stack
// can cost (issue #17, thirtieth session): an agent that hands node:http only the options that are
// set (src/proxy/lean-agents.ts), and the upstream's path handed over as the request's url with
// `prependPath: false` and `toProxy`, so http-proxy-3 parses no URL (src/proxy/passthrough.ts).
const agent = new LeanHttpAgent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 256, scheduling: 'lifo' });
const proxyOptions = { agent, changeOrigin: true, xfwd: false, selfHandleResponse: true, prependPath: false, toProxy: true };
const proxy = createProxyServer(proxyOptions);
// As in Junction's passthrough (issue #17, twenty-second session): on Node 20 each request's copy of
// extensible options got a map of its own, and every read of it missed its inline cache.
Object.preventExtensions(proxyOptions);
proxy.on('error', () => undefined);
// Each request's own handler rides on the request, as in Junction's passthrough.
const ON_RESPONSE = Symbol('onResponse');
const ON_REQUEST = Symbol('onRequest');
type Proxied = IncomingMessage & { [ON_RESPONSE]?: (proxyRes: IncomingMessage) => void; [ON_REQUEST]?: (proxyReq: ClientRequest) => void };
proxy.on('proxyRes', (proxyRes, req) => (req as Proxied)[ON_RESPONSE]?.(proxyRes));
proxy.on('proxyReq', (proxyReq, req) => (req as Proxied)[ON_REQUEST]?.(proxyReq));

// As createGateway does: V8's defaults cost large requests up to 2× on Node 24 (issue #17).
tuneGc();
const app = new Koa<FloorState>();
const context = async (ctx: Context, next: Next): Promise<void> => {
  ctx.state['id'] = newRequestId();
  ctx.state['startedAt'] = performance.now();
  ctx.set('x-request-id', ctx.state['id'] as string);
  await next();
};
const errors = async (ctx: Context, next: Next): Promise<void> => {
  try {
    await next();
  } catch {
    ctx.status = 500;
    ctx.body = { error: { type: 'api_error' } };
  }
};
const auth = async (ctx: Context, next: Next): Promise<void> => {
  const header = ctx.req.headers['x-api-key'] ?? ctx.req.headers.authorization?.slice(7) ?? '';
  const keyId = keyIds.get(sha(String(header)));
  if (keyId === undefined) ctx.throw(401);
  ctx.state['keyId'] = keyId;
  await next();
};
const version = async (ctx: Context, next: Next): Promise<void> => {
  if (ctx.path === '/v1/messages' && !ctx.req.headers['anthropic-version']) ctx.throw(400);
  await next();
};
const lastElements = new Map<string, KnownRequest[]>();
const body = (endpoint: CheckedEndpoint) => async (ctx: Context, next: Next): Promise<void> => {
  // The chunks as they came, never joined: checked through one synchronous view, sent as they are
  // (src/http/body-bytes.ts, issue #17's ninth session).
  const bytes = await new Promise<BodyBytes>((done, fail) => {
    const chunks: Buffer[] = [];
    ctx.req.on('data', (chunk: Buffer) => chunks.push(chunk));
    ctx.req.once('end', () => done(new BodyBytes(chunks)));
    ctx.req.once('error', fail);
  });
  const raw = bytes.view();
  // The key's last accepted request's elements, stepped over where they come again byte for byte
  // (as Junction's check does with its estimate's memory).
  const keyId = ctx.state['keyId'] as bigint;
  const memory = `${endpoint}:${keyId}`;
  const last = lastElements.get(memory);
  const checked = checkRequest(raw, endpoint, 128, last);
  if (checked === null) ctx.throw(400);
  // Copied only when new: an element found again keeps the copy already held.
  // An element the check stepped over names the one it is (`same`): kept without comparing again.
  const keep = (range: ElementRange | undefined, before: { bytes: Buffer } | undefined) => {
    if (range === undefined) return undefined;
    if (before !== undefined && range.same === before) return before;
    const length = range.end - range.start;
    if (before !== undefined && before.bytes.length === length && raw.compare(before.bytes, 0, length, range.start, range.end) === 0) return before;
    return { bytes: Buffer.from(raw.subarray(range.start, range.end)) };
  };
  const previous = last?.[0];
  lastElements.set(memory, [{
    system: keep(checked.elements.system, previous?.system),
    messages: checked.elements.messages.map((m, i) => keep(m, previous?.messages[i]) as { bytes: Buffer }),
    tools: keep(checked.scan.fields.get('tools'), previous?.tools),
  }]);
  ctx.state['raw'] = bytes;
  ctx.state['model'] = checked.head['model'];
  // A size-based input estimate (an upper bound: a token is at least a byte) and the output bound.
  const maxTokens = typeof checked.head['max_tokens'] === 'number' ? checked.head['max_tokens'] : 4096;
  ctx.state['hold'] = (BigInt(raw.length) + BigInt(maxTokens)) * PRICE;
  await next();
};
const resolve = async (ctx: Context, next: Next): Promise<void> => {
  if (typeof ctx.state['model'] !== 'string') ctx.throw(404);
  await next();
};
const reserve = async (ctx: Context, next: Next): Promise<void> => {
  const s = ctx.state as FloorState;
  if (productStore) {
    const held = await productStore.reserve({ requestId: s.id, keyId: Number(s.keyId), amount: s.hold, inputCost: s.hold / 2n, model: s.model, provider: PROVIDER, instanceId: INSTANCE });
    if (!held.ok) ctx.throw(402);
    return next();
  }
  const ok = await submit(() => {
    if (reserveSql[0].run(s.hold, s.keyId, s.hold).changes === 0) return false;
    if (ROWS) reserveSql[1].run(s.id, s.keyId, s.hold, s.hold / 2n, s.model, PROVIDER, INSTANCE, isoTime(Date.now()));
    else reserveSql[1].run(s.id, s.keyId, s.hold, isoTime(Date.now()));
    return true;
  });
  if (!ok) ctx.throw(402);
  await next();
};
/**
 * What the product's row says and the floor's narrow one does not: the endpoint (the bench's `a/`
 * models are the Messages ones) and the outcome. Worked out only where such a row is written.
 */
const productFields = (s: FloorState, status: number) =>
  ({ endpoint: s.model.startsWith('a/') ? 'messages' : 'chat_completions', outcome: status < 400 ? 'ok' : 'upstream_error' }) as const;
/** The settlement: the hold released and the cost charged, with the ledger row, in the turn's commit. */
const settle = (s: FloorState, status: number, input: number, output: number): Promise<boolean> => {
  const cost = BigInt(input + output) * PRICE;
  if (productStore) {
    const { endpoint, outcome } = productFields(s, status);
    const usage = { input, output, cacheRead: 0, cacheWrite: 0, reasoning: 0 };
    const durationMs = performance.now() - s.startedAt;
    return productStore
      .settle({ requestId: s.id, keyId: Number(s.keyId), endpoint, model: s.model, provider: PROVIDER, upstreamModel: s.model, route: 'native', usage, cost, status, outcome, estimated: false, startedAtMs: Date.now() - durationMs, firstByteMs: null, durationMs })
      .then(() => true);
  }
  return submit(() => {
    const hold = settleSql[0].get(s.id) as { amount: bigint } | undefined;
    const released = hold?.amount ?? 0n;
    settleSql[1].get(s.keyId);
    settleSql[2].run(released, cost, cost, s.keyId);
    const durationMs = performance.now() - s.startedAt;
    if (ROWS) {
      const { endpoint, outcome } = productFields(s, status);
      settleSql[3].run(s.id, s.keyId, endpoint, s.model, PROVIDER, s.model, 'native', input, output, 0, 0, 0, cost, cost, 0n, status, outcome, 0, isoTime(Date.now() - durationMs), null, durationMs);
    } else settleSql[3].run(s.id, s.keyId, s.model, input, output, cost, cost, status, isoTime(Date.now()), durationMs);
    return true;
  });
};
const dispatch = (ctx: Context): Promise<void> => {
  const s = ctx.state as FloorState;
  ctx.respond = false;
  // The floor serves two endpoints, told apart by their path once.
  const stream = STREAM_OF[ctx.path === '/v1/messages' ? 'messages' : 'chat_completions'];
  return new Promise((done) => {
    const timers = STREAMS ? new UpstreamTimers(DEFAULT_TIMEOUTS) : undefined;
    if (timers) (ctx.req as Proxied)[ON_REQUEST] = (proxyReq: ClientRequest): void => timers.watch(proxyReq);
    (ctx.req as Proxied)[ON_RESPONSE] = (proxyRes: IncomingMessage): void => {
      const status = proxyRes.statusCode ?? 502;
      const contentType = proxyRes.headers['content-type'] ?? 'application/json';
      ctx.res.writeHead(status, { 'content-type': contentType, 'x-request-id': s.id });
      if (timers && status < 300 && contentType.startsWith('text/event-stream')) {
        timers.responded(proxyRes);
        relayStream(ctx, s, stream, proxyRes, contentType, timers, () => done());
        return;
      }
      // Usage: the lines (or the body) that say "usage", parsed as they pass.
      let tail = '';
      let input = 0;
      let output = 0;
      proxyRes.on('data', (chunk: Buffer) => {
        const text = tail + chunk.toString('latin1');
        const end = text.lastIndexOf('\n');
        for (let at = text.indexOf('"usage"'); at !== -1 && at < end; at = text.indexOf('"usage"', at + 7)) {
          const line = text.slice(text.lastIndexOf('\n', at) + 1, text.indexOf('\n', at));
          input = Math.max(input, Number(/"(?:input|prompt)_tokens":(\d+)/.exec(line)?.[1] ?? 0));
          output = Math.max(output, Number(/"(?:output|completion)_tokens":(\d+)/.exec(line)?.[1] ?? 0));
        }
        tail = end === -1 ? text : text.slice(end + 1);
      });
      proxyRes.on('end', () => {
        for (const match of tail.matchAll(/"(input|prompt|output|completion)_tokens":(\d+)/g)) {
          if (match[1] === 'input' || match[1] === 'prompt') input = Math.max(input, Number(match[2]));
          else output = Math.max(output, Number(match[2]));
        }
        void settle(s, status, input, output).then(() => done());
      });
      proxyRes.pipe(ctx.res);
    };
    const headers = stream.endpoint === 'messages'
      ? { 'content-type': 'application/json', 'x-api-key': 'sim', 'anthropic-version': '2023-06-01', 'content-length': String(s.raw.length) }
      : { 'content-type': 'application/json', authorization: 'Bearer sim', 'content-length': String(s.raw.length) };
    ctx.req.headers = headers;
    // The target parsed once, and its path on the request for the length of web(), as Junction's
    // passthrough does (src/proxy/passthrough.ts): http-proxy-3 parses neither.
    const clientUrl = ctx.req.url;
    ctx.req.url = stream.path;
    proxy.web(ctx.req, ctx.res, { target: stream.target, buffer: bufferStream(s.raw) }, () => {
      // No answer came (a refused connection, or the first-byte deadline): the client is told, in
      // its own format as Junction tells it, and the hold released, charging nothing. Once an
      // answer began, its own handlers end it.
      if (ctx.res.headersSent) return done();
      const fired = timers?.fired;
      const err = fired ? ERR.upstreamTimeout(PROVIDER, fired.kind, fired.ms) : ERR.upstreamUnreachable(PROVIDER);
      writeErrorResponse(ctx.res, stream.surface, err, s.id);
      void settle(s, err.status, 0, 0).then(() => done());
    });
    ctx.req.url = clientUrl;
  });
};

/**
 * FLOOR_STREAMS=on (the `floor-streams` arm; issue #17, twentieth session): a stream relayed as the
 * product's standards require of any gateway, with Junction's own parts. Whole events only, and a
 * stream cut, stalled or malformed ends with an in-band error, never a clean end (the stream
 * guard); the first-byte and idle deadlines, so no stream is left hanging (the upstream timers);
 * usage read exactly, a usage key's value as JSON reads it, not by pattern (the usage tap). Still
 * no failover, first-event read, limits, metrics or logs.
 */
function relayStream(ctx: Context, s: FloorState, stream: FloorStream, proxyRes: IncomingMessage, contentType: string, timers: UpstreamTimers, done: () => void): void {
  const res = ctx.res;
  const guard = new SseGuard(stream.format, stream.terminator);
  const tap = usageTapFor(stream.endpoint, contentType);
  // Junction's own in-band error frame, in the client's format (sse/encode.ts).
  const cut = (): void => {
    if (res.writableEnded) return;
    const fired = timers.fired;
    res.end(streamErrorFrame(stream.surface, fired ? ERR.upstreamTimeout(PROVIDER, fired.kind, fired.ms) : ERR.upstreamInterrupted(PROVIDER), s.id));
  };
  proxyRes.on('error', () => undefined); // every ending is read from 'close'
  proxyRes.on('pause', () => timers.hold());
  proxyRes.on('resume', () => timers.resume());
  proxyRes.on('data', (chunk: Buffer) => {
    timers.touch();
    const events = guard.push(chunk);
    tap?.push(chunk, guard.takeText(chunk));
    if (events.length > 0 && !res.write(events)) proxyRes.pause();
    if (guard.malformed) {
      proxyRes.destroy();
      cut();
    }
  });
  res.on('drain', () => proxyRes.resume());
  proxyRes.on('end', () => {
    if (guard.pending || !guard.terminated) cut();
    else res.end();
  });
  proxyRes.on('close', () => {
    if (!proxyRes.complete) cut();
    const usage = tap?.finish(proxyRes.readableEnded);
    // A cut stream is charged at least the content events that passed, as Junction charges it (finish.ts).
    const whole = proxyRes.readableEnded && guard.terminated && !guard.malformed;
    const output = whole ? (usage?.output ?? guard.contentEvents) : Math.max(usage?.output ?? 0, guard.contentEvents);
    void settle(s, proxyRes.statusCode ?? 502, usage?.input ?? 0, output).then(done);
  });
}
/** What a stream is relayed with, per endpoint, worked out once (the floor's bodies carry no `n`). */
const streamOf = (endpoint: 'messages' | 'chat_completions', surface: Surface) => {
  const target = new URL(`${upstream}${PATH_OF[endpoint]}`);
  return { endpoint, surface, format: FORMAT_OF[endpoint], terminator: terminatorOf(endpoint, undefined), target, path: upstreamPath(target) } as const;
};
const STREAM_OF = { messages: streamOf('messages', 'messages'), chat_completions: streamOf('chat_completions', 'chat') };
type FloorStream = ReturnType<typeof streamOf>;
/** The upstream's name in the errors the floor reports. */
const PROVIDER = 'simulator';

/** http-proxy-3's `buffer` option pipes a stream: the body's chunks written together, as Junction's. */
const bufferStream = (bytes: BodyBytes): BodySource => new BodySource(bytes);

const router = new Router();
router.post('/v1/messages', auth, version, body('messages'), resolve, reserve, dispatch);
router.post('/v1/chat/completions', auth, body('chat_completions'), resolve, reserve, dispatch);
app.use(context);
app.use(errors);
app.use(router.routes());

/**
 * FLOOR_KOA=off: the same middleware, composed by hand over a minimal context, to measure what
 * Koa and @koa/router cost (their context objects, delegation, routing, response handling).
 */
function bareHandler(): http.RequestListener {
  type Step = (ctx: Context, next: Next) => Promise<void> | void;
  const chains = new Map<string, Step[]>([
    ['/v1/messages', [context, errors, auth, version, body('messages'), resolve, reserve, dispatch]],
    ['/v1/chat/completions', [context, errors, auth, body('chat_completions'), resolve, reserve, dispatch]],
  ]);
  return (req, res) => {
    const chain = chains.get(req.url ?? '');
    if (!chain || req.method !== 'POST') {
      res.writeHead(404).end();
      return;
    }
    const ctx = {
      req,
      res,
      path: req.url,
      state: {},
      respond: true,
      set: (name: string, value: string) => res.setHeader(name, value),
      throw: (status: number) => {
        throw Object.assign(new Error(String(status)), { status });
      },
      status: 200,
      body: undefined as unknown,
    };
    const run = (i: number): Promise<void> => Promise.resolve((chain[i] as Step)(ctx as unknown as Context, () => run(i + 1)));
    void run(0).then(() => {
      if (ctx.respond && !res.headersSent) res.writeHead(ctx.status).end(JSON.stringify(ctx.body ?? {}));
    });
  };
}

const server = http.createServer(process.env['FLOOR_KOA'] === 'off' ? bareHandler() : app.callback());
server.keepAliveTimeout = 120_000;
server.listen(0, '127.0.0.1', () => console.log(`PORT ${(server.address() as { port: number }).port}`));
process.on('SIGTERM', () => {
  server.close();
  db.close();
  void productStore?.close();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
});
