import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DestinationStream } from 'pino';
import type Koa from 'koa';
import { createApp } from './app.ts';
import { KeyStore } from './auth/key-store.ts';
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

export interface Gateway {
  readonly config: GatewayConfig;
  readonly app: Koa<GatewayState>;
  readonly server: http.Server;
  readonly providers: ReadonlyMap<string, LoadedProvider>;
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
  const agents = new UpstreamAgents();
  const passthrough = new Passthrough(log, agents);
  const app = createApp({
    config,
    keys: new KeyStore(config.auth.keys),
    catalogue: new Catalogue(config.models, providers),
    providers,
    passthrough,
    agents,
    sink: options.sink ?? new LogUsageSink(log),
    log,
  });
  const server = http.createServer(app.callback());

  return {
    config,
    app,
    server,
    providers,
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
      agents.close();
      for (const provider of providers.values()) await provider.plugin.close?.();
      log.flush();
    },
  };
}
