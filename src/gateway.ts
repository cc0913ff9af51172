import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { hostname } from 'node:os';
import type { AddressInfo } from 'node:net';
import type { DestinationStream } from 'pino';
import type Koa from 'koa';
import { createApp } from './app.ts';
import { KeyStore } from './auth/key-store.ts';
import { usdToPico } from './billing/money.ts';
import { Settlements } from './billing/settlements.ts';
import { openStore } from './store/open.ts';
import { loadTokenizer } from './usage/token-count.ts';
import type { InstanceInfo, Store } from './store/store.ts';
import { Catalogue } from './catalogue/catalogue.ts';
import type { GatewayConfig } from './config/types.ts';
import type { GatewayState } from './http/state.ts';
import { createLogger, type Logger } from './log.ts';
import { loadProviders, type LoadedProvider } from './plugin-host/loader.ts';
import { UpstreamAgents } from './proxy/agents.ts';
import { Passthrough } from './proxy/passthrough.ts';
import { LogUsageSink, type UsageSink } from './usage/sink.ts';
import { GatewayMetrics, TeeSink } from './metrics/gateway-metrics.ts';
import { Tracing } from './telemetry/tracing.ts';
import { ERR } from './errors.ts';
import { Breakers } from './routing/breaker.ts';
import { InFlight } from './routing/in-flight.ts';
import { StoreHolds, type Holds } from './billing/holds.ts';
import { RedisHolds } from './billing/redis-holds.ts';
import { openLimiter } from './limits/open-limiter.ts';
import { SYSTEM_CLOCK, type Clock } from './util/clock.ts';
import { tuneGc } from './util/gc-settings.ts';
import { Generation } from './reload/generation.ts';
import { Reloader, type ReloadResult } from './reload/reloader.ts';

export interface GatewayOptions {
  /** Where log lines go; stdout by default. */
  readonly logDestination?: DestinationStream;
  /** Replaces the default usage sink (the request log). */
  readonly sink?: UsageSink;
  /** Time for retry waits and breaker cool-downs; the system clock by default (tests inject one). */
  readonly clock?: Clock;
  /** Wraps what POST /admin/reload runs: a `--workers` worker reloads the others too (issue #16). */
  readonly reload?: (local: () => Promise<ReloadResult>) => Promise<ReloadResult>;
}

/** How often this process tells the store it is alive, and when others count as dead. */
const HEARTBEAT_MS = 15_000;
const STALE_AFTER_MS = 60_000;
/** How long a shutdown waits for cut requests to settle, before and after closing upstream connections. */
const SETTLE_WAIT_MS = 5_000;

export interface Gateway {
  /** The configuration in force now: a reload replaces it, and the app and providers with it. */
  readonly config: GatewayConfig;
  readonly app: Koa<GatewayState>;
  readonly server: http.Server;
  readonly providers: ReadonlyMap<string, LoadedProvider>;
  readonly store: Store;
  readonly instanceId: string;
  readonly log: Logger;
  /**
   * Re-reads the YAML file; if valid, new requests use it at once and requests in flight finish
   * on what they started with (issue #16). Never throws: an invalid file changes nothing.
   */
  reload(): Promise<ReloadResult>;
  /** Starts listening; host and port default to the config's `server` section. */
  listen(host?: string, port?: number): Promise<AddressInfo>;
  /**
   * Resolves true once no request is in flight, each one's charge written to the ledger, or false
   * after `timeoutMs`. A client has its whole answer before its request is settled (the settlement
   * follows the response), so what reads the ledger right after an answer waits for this.
   */
  settled(timeoutMs: number): Promise<boolean>;
  /**
   * Stops accepting connections, lets in-flight requests and streams finish for up to `graceMs`
   * (default 0), ends the rest with an in-band error, settles the ledger, releases plugins.
   */
  close(graceMs?: number): Promise<void>;
}

/** Builds a gateway from a validated config: loads plugins (failing on any problem), wires the app. */
export async function createGateway(config: GatewayConfig, options: GatewayOptions = {}): Promise<Gateway> {
  tuneGc(); // before any request: V8's defaults made large requests cost up to 2× CPU on Node 24 (issue #17)
  const log = createLogger(config.log.level, options.logDestination);
  const clock = options.clock ?? SYSTEM_CLOCK;
  const providers = await loadProviders(config.providers, config.dir, log);
  // Redis first: a deployment configured to share limits does not start without them.
  const limits = await openLimiter(config, log);
  const store = await openStore(config.storage.url).catch(async (err: unknown) => {
    await limits.close();
    throw err;
  });
  await syncKeys(store, config);
  // Holds left by a process that died mid-request are settled before this one serves (issue #4).
  const instance = { id: randomUUID(), host: hostname(), pid: process.pid };
  const alive = (other: InstanceInfo): boolean => isAlive(other, instance);
  // With Redis, holds live there and are reconciled against the ledger; otherwise they are rows.
  const holds: Holds =
    limits.redis === null
      ? new StoreHolds(store)
      : new RedisHolds(limits.redis, store, {
          prefix: config.redis?.prefix ?? '',
          log,
          instances: () => store.instances(alive, new Date(Date.now() - STALE_AFTER_MS)),
        });
  const reconcile = async (): Promise<void> => {
    // Redis holds first: the store's reconciliation forgets the dead instances it settles.
    const count = (await holds.reconcile()) + (await store.reconcile(alive, new Date(Date.now() - STALE_AFTER_MS)));
    if (count > 0) log.warn({ holds: count }, 'settled holds left by a process that stopped mid-request');
  };
  await store.registerInstance(instance);
  await reconcile();
  const settlements = new Settlements(store, log, holds);
  const heartbeat = setInterval(() => {
    void store
      .heartbeat(instance)
      .then(reconcile)
      .then(() => settlements.retryFailed())
      // Responses past `responses.retention_days` are forgotten (issue #14); reads skip them already.
      .then(() => store.purgeResponses(new Date()))
      .catch((err: unknown) => log.error({ err }, 'heartbeat failed'));
  }, HEARTBEAT_MS);
  heartbeat.unref();
  const keys = new KeyStore(store);
  await keys.start();
  await loadTokenizer(); // every hold counts tokens (issue #4)
  const agents = new UpstreamAgents();
  const passthrough = new Passthrough(log, agents);
  const inFlight = new InFlight();
  const lifecycle = { draining: false };
  // Breaker state survives a reload unless its settings change (issue #16).
  let breakers = new Breakers(config.routing.breakerFailures, config.routing.breakerCooldownMs, clock);
  const metrics =
    config.server.metrics === 'off'
      ? undefined
      : new GatewayMetrics(
          config.models.map((m) => m.id),
          { inFlight: () => settlements.inFlight, settlementsPending: () => settlements.pending, breakersOpen: () => breakers.openByProvider() },
        );
  const logSink = options.sink ?? new LogUsageSink(log);
  const sink = metrics ? new TeeSink([logSink, metrics]) : logSink;
  const tracing = config.telemetry ? new Tracing(config.telemetry) : undefined;
  // Shared by every generation: a reload must not forget who holds a concurrency slot.
  const limiter = limits.limiter;
  const build = (next: GatewayConfig, loaded: ReadonlyMap<string, LoadedProvider>, nextBreakers: Breakers, previous?: Generation): Generation => {
    const app = createApp({
      config: next,
      keys,
      catalogue: new Catalogue(next.models, loaded),
      providers: loaded,
      passthrough,
      agents,
      sink,
      ...(metrics && { metrics }),
      ...(tracing && { tracing }),
      settlements,
      holds,
      store,
      instanceId: instance.id,
      breakers: nextBreakers,
      inFlight,
      lifecycle,
      log,
      limiter,
      clock,
      reload: () => (options.reload ? options.reload(() => reloader.reload()) : reloader.reload()),
    });
    return new Generation(next, loaded, app, nextBreakers, previous);
  };
  let current = build(config, providers, breakers);
  const reloader = new Reloader({
    log,
    agents,
    current: () => current,
    closing: () => lifecycle.draining,
    build(next, loaded) {
      // Nothing shared changes here: a reload that fails after this leaves the breakers in force.
      const routing = current.config.routing;
      const same = routing.breakerFailures === next.routing.breakerFailures && routing.breakerCooldownMs === next.routing.breakerCooldownMs;
      return build(next, loaded, same ? breakers : new Breakers(next.routing.breakerFailures, next.routing.breakerCooldownMs, clock), current);
    },
    async install(next) {
      // The one step that can fail, and it comes before anything else changes.
      await syncKeys(store, next.config);
      // The keys are in the store now; a failed re-read only leaves them to the next poll.
      await keys.refresh().catch((err: unknown) => log.warn({ err: String(err) }, 'reloaded keys are stored; they apply at the next poll'));
      breakers = next.breakers;
      metrics?.addModels(next.config.models.map((m) => m.id));
      server.headersTimeout = next.config.server.headersTimeoutMs;
      server.requestTimeout = next.config.server.requestTimeoutMs;
      log.level = next.config.log.level;
      current = next;
    },
  });
  // Timeouts below are enforced by a periodic sweep; Node's default sweep is every 30 s. TCP
  // keepalive probes keep a connection waiting minutes for a whole (non-streamed) answer alive
  // through NATs and idle-cutting middleboxes, where HTTP has nothing to send (reliability.md §2.2).
  let closing: Promise<void> | undefined;
  // The sweep runs every second, or more often for timeouts under 4 s, so a cut comes within a
  // quarter of the timeout past it (tests set them short: issue #12).
  const sweepMs = Math.max(50, Math.min(1_000, config.server.headersTimeoutMs / 4, config.server.requestTimeoutMs / 4));
  const server = http.createServer({ connectionsCheckingInterval: sweepMs, keepAlive: true, keepAliveInitialDelay: 30_000 }, (req, res) => current.handle(req, res));
  // Slowloris: a client must send its headers, then its whole body, in bounded time (issue #5;
  // reliability.md §5.7). Node checks both every connectionsCheckingInterval (30 s by default).
  server.headersTimeout = config.server.headersTimeoutMs;
  server.requestTimeout = config.server.requestTimeoutMs;
  // Must outlast a load balancer's idle timeout, or it reuses a connection we are closing (a 502).
  server.keepAliveTimeout = 65_000;

  return {
    get config() {
      return current.config;
    },
    get app() {
      return current.app;
    },
    server,
    get providers() {
      return current.providers;
    },
    reload: () => reloader.reload(),
    store,
    instanceId: instance.id,
    log,
    listen(host = config.server.host, port = config.server.port) {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve(server.address() as AddressInfo);
        });
      });
    },
    settled: (timeoutMs) => settlements.idle(timeoutMs),
    close(graceMs = 0) {
      // Idempotent: a second call (a second signal) waits for the same drain.
      closing ??= drain(graceMs);
      return closing;
    },
  };

  /** Stops accepting, waits out the grace, ends and settles the rest, then releases everything. */
  async function drain(graceMs: number): Promise<void> {
    // Stop taking work: no new connections, idle keep-alive ones closed, and a request that
    // still arrives on a busy one is refused with 503 (issue #5; reliability.md §2.5).
    lifecycle.draining = true;
    // A reload under way finishes first (new ones are refused), so the providers closed below are
    // the last ones in force.
    await reloader.settled();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    // In-flight requests and streams may finish within the grace; the rest are ended with an
    // in-band error (routing/in-flight.ts) and settled.
    if (!(await settlements.idle(graceMs))) {
      log.warn({ requests: settlements.pending, grace_ms: graceMs }, 'shutdown grace over: ending the remaining requests');
      inFlight.abortAll(ERR.shuttingDown());
    }
    // Every request is charged before the store closes (issue #4). Closing the upstream pools
    // ends any that still wait on an upstream.
    const settled = await settlements.idle(SETTLE_WAIT_MS);
    server.closeAllConnections();
    agents.close();
    if (!settled) await settlements.idle(SETTLE_WAIT_MS);
    await closed;
    clearInterval(heartbeat);
    await settlements.retryFailed();
    if (settlements.pending > 0) log.error({ requests: settlements.pending }, 'closing with unsettled requests; their holds are reconciled at the next start');
    keys.stop();
    for (const provider of current.providers.values()) await provider.plugin.close?.();
    // Spans still buffered go out before the process ends.
    await tracing?.shutdown().catch((err: unknown) => log.warn({ err: String(err) }, 'traces could not be sent at shutdown'));
    await limits.close();
    await store.close();
    log.flush();
  }
}

/** The file's `auth.keys` into the store: new ones added, edited ones updated, removed ones retired. */
function syncKeys(store: Store, config: GatewayConfig): Promise<void> {
  return store.syncConfigKeys(
    config.auth.keys.map((k) => ({ name: k.name, sha256: k.sha256, balance: k.balanceUsd === null ? null : usdToPico(k.balanceUsd), models: k.models, limits: k.limits })),
  );
}

/** Another gateway process is alive if it is this one, or runs on this host with its pid still there. */
function isAlive(other: InstanceInfo, self: InstanceInfo): boolean {
  if (other.id === self.id) return true;
  if (other.host !== self.host) return true; // judged by its heartbeat instead
  try {
    process.kill(other.pid, 0);
    return other.pid !== self.pid;
  } catch {
    return false;
  }
}
