import { ConfigError, loadConfig } from '../config/load.ts';
import type { GatewayConfig } from '../config/types.ts';
import type { Logger } from '../log.ts';
import { closeProviders, loadProviders, PluginLoadError, type LoadedProvider } from '../plugin-host/loader.ts';
import type { UpstreamAgents } from '../proxy/agents.ts';
import { diffConfigs, effectiveConfig, type ConfigChanges } from './config-diff.ts';
import type { Generation } from './generation.ts';

/** A reload that applied (with what it changed), or one that changed nothing, with why. */
export type ReloadResult = { readonly ok: true; readonly changes: ConfigChanges } | { readonly ok: false; readonly problems: readonly string[] };

export interface ReloadParts {
  readonly log: Logger;
  readonly agents: UpstreamAgents;
  current(): Generation;
  /** True once shutdown has begun: a reload then changes nothing. */
  closing(): boolean;
  /** Builds a generation without serving it; throws if its catalogue cannot be built. */
  build(config: GatewayConfig, providers: ReadonlyMap<string, LoadedProvider>): Generation;
  /** Brings the config's keys and settings into force, then serves the generation to new requests. */
  install(next: Generation): Promise<void>;
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * Re-reads the YAML file and, if it is valid, serves new requests from it (issue #16). Reloads run
 * one at a time. Providers whose settings did not change keep their plugin instance (credentials
 * cached, connections warm); changed and new ones are created afresh, and the old instances are
 * closed, with their connection pools, once the requests that started on them have finished.
 */
export class Reloader {
  readonly #parts: ReloadParts;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(parts: ReloadParts) {
    this.#parts = parts;
  }

  reload(): Promise<ReloadResult> {
    // Never rejects: whatever goes wrong is a refused reload (a SIGHUP must not crash the process).
    const run = this.#queue.then(() => this.#reload()).catch((err: unknown) => this.#refused(err));
    this.#queue = run;
    return run;
  }

  /** Resolves once no reload is under way (shutdown waits for it). */
  async settled(): Promise<void> {
    await this.#queue;
  }

  async #reload(): Promise<ReloadResult> {
    const { log, agents } = this.#parts;
    if (this.#parts.closing()) return { ok: false, problems: ['the gateway is shutting down'] };
    const old = this.#parts.current();
    // A file or plugin that cannot be used throws here; reload() turns it into a refusal.
    const read = loadConfig(old.config.file, this.#parts.env);
    const changes = diffConfigs(old.config, read);
    const config = effectiveConfig(old.config, read);
    const renewed = new Set([...changes.providers.added, ...changes.providers.changed]);
    const fresh = await loadProviders(config.providers.filter((p) => renewed.has(p.id)), config.dir, log);
    const providers = new Map<string, LoadedProvider>();
    for (const provider of config.providers) {
      const loaded = fresh.get(provider.id) ?? old.providers.get(provider.id);
      // Every provider is either new, changed (so loaded above) or unchanged (so in the old map).
      if (!loaded) throw new Error(`provider ${provider.id} was neither loaded nor kept`);
      providers.set(provider.id, { ...loaded, config: provider });
    }
    let next: Generation;
    try {
      next = this.#parts.build(config, providers);
      await this.#parts.install(next);
    } catch (err) {
      await closeProviders(fresh.values(), log);
      return this.#refused(err);
    }
    // Old instances of changed and removed providers: new requests no longer reach them.
    const retired = [...changes.providers.changed, ...changes.providers.removed];
    agents.retire(retired);
    // Once every request that could use them has ended (older generations included, which share
    // unchanged plugins): a removed provider's pool made since by a retry of an old request is
    // retired too, and the replaced plugins are closed.
    void old.idle().then(async () => {
      agents.retire(changes.providers.removed.filter((id) => !this.#parts.current().providers.has(id)));
      await closeProviders(retired.flatMap((id) => old.providers.get(id) ?? []), log);
    });
    log.info({ file: config.file, ...flatten(changes) }, 'configuration reloaded');
    if (changes.restartRequired.length > 0) {
      log.warn({ settings: changes.restartRequired }, 'these settings changed but need a restart; their running values stay in force');
    }
    return { ok: true, changes };
  }

  #refused(err: unknown): ReloadResult {
    if (!(err instanceof ConfigError || err instanceof PluginLoadError)) {
      const problems = [err instanceof Error ? err.message : String(err)];
      this.#parts.log.error({ problems }, 'configuration reload failed; nothing changed');
      return { ok: false, problems };
    }
    this.#parts.log.error({ problems: err.problems }, 'configuration reload refused; nothing changed');
    return { ok: false, problems: err.problems };
  }
}

function flatten(changes: ConfigChanges): Record<string, string[]> {
  return {
    providers_added: changes.providers.added,
    providers_changed: changes.providers.changed,
    providers_removed: changes.providers.removed,
    models_added: changes.models.added,
    models_changed: changes.models.changed,
    models_removed: changes.models.removed,
  };
}
