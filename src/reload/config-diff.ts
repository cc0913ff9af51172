import { isDeepStrictEqual } from 'node:util';
import type { GatewayConfig, ModelConfig, ProviderConfig } from '../config/types.ts';

/** What a reload changes: providers by id, models by id, and the settings it cannot apply. */
export interface ConfigChanges {
  readonly providers: { readonly added: string[]; readonly changed: string[]; readonly removed: string[] };
  readonly models: { readonly added: string[]; readonly changed: string[]; readonly removed: string[] };
  /** YAML paths whose new values wait for a restart; the running values stay in force. */
  readonly restartRequired: string[];
}

/**
 * Settings a running process cannot take (issue #16): its listening socket, its store and Redis
 * connections, whether it keeps metrics at all, and its trace exporter. Each is a YAML path and a
 * way to read it.
 */
const RESTART_ONLY: readonly [string, (c: GatewayConfig) => unknown][] = [
  ['server.host', (c) => c.server.host],
  ['server.port', (c) => c.server.port],
  ['server.metrics', (c) => c.server.metrics === 'off'],
  ['server.watch_config', (c) => c.server.watchConfig],
  ['storage.url', (c) => c.storage.url],
  ['redis.url', (c) => c.redis?.url],
  ['redis.prefix', (c) => c.redis?.prefix],
  ['telemetry', (c) => c.telemetry],
];

export function diffConfigs(running: GatewayConfig, next: GatewayConfig): ConfigChanges {
  return {
    providers: diffById(running.providers, next.providers, providerEqual),
    models: diffById(running.models, next.models, modelEqual),
    restartRequired: RESTART_ONLY.filter(([, read]) => !isDeepStrictEqual(read(running), read(next))).map(([path]) => path),
  };
}

/**
 * The config a reload runs on: the new file, except for the settings that need a restart, which
 * keep their running values so that everything reading the config sees what is really in force.
 * (`server.metrics` may still move between `admin` and `public`: only turning it off or on waits.)
 */
export function effectiveConfig(running: GatewayConfig, next: GatewayConfig): GatewayConfig {
  const metricsSwitch = (running.server.metrics === 'off') !== (next.server.metrics === 'off');
  return {
    ...next,
    server: {
      ...next.server,
      host: running.server.host,
      port: running.server.port,
      watchConfig: running.server.watchConfig,
      metrics: metricsSwitch ? running.server.metrics : next.server.metrics,
    },
    storage: running.storage,
    redis: running.redis,
    telemetry: running.telemetry,
  };
}

/** Providers are compared by what they are, not where the file lists them. */
function providerEqual(a: ProviderConfig, b: ProviderConfig): boolean {
  return isDeepStrictEqual({ ...a, yamlPath: '' }, { ...b, yamlPath: '' });
}

/** `created` defaults to the file's modification time, which every save changes. */
function modelEqual(a: ModelConfig, b: ModelConfig): boolean {
  return isDeepStrictEqual({ ...a, created: null }, { ...b, created: null });
}

function diffById<T extends { readonly id: string }>(before: readonly T[], after: readonly T[], equal: (a: T, b: T) => boolean): ConfigChanges['providers'] {
  const old = new Map(before.map((item) => [item.id, item]));
  const added: string[] = [];
  const changed: string[] = [];
  for (const item of after) {
    const was = old.get(item.id);
    if (!was) added.push(item.id);
    else if (!equal(was, item)) changed.push(item.id);
  }
  const kept = new Set(after.map((item) => item.id));
  return { added, changed, removed: before.filter((item) => !kept.has(item.id)).map((item) => item.id) };
}
