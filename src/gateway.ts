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

export interface GatewayOptions {
  /** Where log lines go; stdout by default. */
  readonly logDestination?: DestinationStream;
  /** Replaces the default usage sink (the request log). */
  readonly sink?: UsageSink;
}

/** How often this process tells the store it is alive, and when others count as dead. */
const HEARTBEAT_MS = 15_000;
const STALE_AFTER_MS = 60_000;
/** How long a shutdown waits for cut requests to settle, before and after closing upstream connections. */
const SETTLE_WAIT_MS = 5_000;

export interface Gateway {
  readonly config: GatewayConfig;
  readonly app: Koa<GatewayState>;
  readonly server: http.Server;
  readonly providers: ReadonlyMap<string, LoadedProvider>;
  readonly store: Store;
  readonly instanceId: string;
  readonly log: Logger;
  /** Starts listening; host and port default to the config's `server` section. */
  listen(host?: string, port?: number): Promise<AddressInfo>;
  /** Stops accepting connections, ends open ones and releases plugins. */
  close(): Promise<void>;
}

/** Builds a gateway from a validated config: loads plugins (failing on any problem), wires the app. */
export async function createGateway(config: GatewayConfig, options: GatewayOptions = {}): Promise<Gateway> {
  const log = createLogger(config.log.level, options.logDestination);
  const providers = await loadProviders(config.providers, config.dir, log);
  const store = await openStore(config.storage.url);
  await store.syncConfigKeys(
    config.auth.keys.map((k) => ({ name: k.name, sha256: k.sha256, balance: k.balanceUsd === null ? null : usdToPico(k.balanceUsd), models: k.models })),
  );
  // Holds left by a process that died mid-request are settled before this one serves (issue #4).
  const instance = { id: randomUUID(), host: hostname(), pid: process.pid };
  const reconcile = async (): Promise<void> => {
    const count = await store.reconcile((other) => isAlive(other, instance), new Date(Date.now() - STALE_AFTER_MS));
    if (count > 0) log.warn({ holds: count }, 'settled holds left by a process that stopped mid-request');
  };
  await store.registerInstance(instance);
  await reconcile();
  const settlements = new Settlements(store, log);
  const heartbeat = setInterval(() => {
    void store
      .heartbeat(instance.id)
      .then(reconcile)
      .then(() => settlements.retryFailed())
      .catch((err: unknown) => log.error({ err }, 'heartbeat failed'));
  }, HEARTBEAT_MS);
  heartbeat.unref();
  const keys = new KeyStore(store);
  await keys.start();
  await loadTokenizer(); // every hold counts tokens (issue #4)
  const agents = new UpstreamAgents();
  const passthrough = new Passthrough(log, agents);
  const app = createApp({
    config,
    keys,
    catalogue: new Catalogue(config.models, providers),
    providers,
    passthrough,
    agents,
    sink: options.sink ?? new LogUsageSink(log),
    settlements,
    store,
    instanceId: instance.id,
    log,
  });
  const server = http.createServer(app.callback());

  return {
    config,
    app,
    server,
    providers,
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
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Graceful draining of long streams is issue #5; for now open connections are ended.
        server.closeAllConnections();
      });
      // Every request cut above is charged before the store closes (issue #4). Closing the
      // upstream pools ends any that still wait on an upstream.
      const settled = await settlements.idle(SETTLE_WAIT_MS);
      agents.close();
      if (!settled) await settlements.idle(SETTLE_WAIT_MS);
      clearInterval(heartbeat);
      await settlements.retryFailed();
      if (settlements.pending > 0) log.error({ requests: settlements.pending }, 'closing with unsettled requests; their holds are reconciled at the next start');
      keys.stop();
      for (const provider of providers.values()) await provider.plugin.close?.();
      await store.close();
      log.flush();
    },
  };
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
