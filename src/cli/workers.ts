import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import type { GatewayConfig } from '../config/types.ts';
import { serveClusterMetrics } from '../metrics/cluster-metrics.ts';
import { UsageError } from './usage-error.ts';
import { youngGenerationFlags } from '../util/gc-settings.ts';
import { ConfigError, loadConfig } from '../config/load.ts';
import { watchConfigFile } from '../reload/watch.ts';
import { describeReload, isMessage, watchFailure, RELOAD_MESSAGE, RELOAD_OTHERS_MESSAGE } from './reload-signals.ts';

/** A worker that dies this soon after starting is failing to start, not crashing under load. */
const STARTUP_MS = 5_000;
/** Restarts of a crash-looping worker slow down to this. */
const MAX_BACKOFF_MS = 10_000;

/** `--workers N` or `auto` (one per core). */
export function workerCount(value: string): number {
  const count = value === 'auto' ? availableParallelism() : Number(value);
  if (!Number.isInteger(count) || count < 1 || count > 256) throw new UsageError(`--workers must be an integer from 1 to 256 or "auto", got "${value}"`);
  return count;
}

/**
 * `serve --workers N` (issue #7): this process is the primary; it forks N workers, each a whole
 * gateway, which share the port (node:cluster hands connections out in turn). Each worker has its
 * own store connection and upstream pools; what they share lives in the store (the ledger) and,
 * with `redis`, in Redis (the limits). The primary serves nothing itself.
 * - SIGTERM or SIGINT drains every worker gracefully (each does what a single `serve` does), then
 *   the primary exits with the worst exit code.
 * - A worker that crashes is replaced, after a back-off if it keeps crashing. Its holds are settled
 *   by the replacement's start-up reconciliation (its pid is gone); its Redis concurrency slots
 *   lapse with their lease.
 * - A worker that fails while starting (a bad plugin, an unreachable database) stops the whole
 *   group: that failure would repeat.
 */
export function runPrimary(count: number, started: GatewayConfig, configFile: string): Promise<number> {
  let config = started;
  if (config.storage.url === 'sqlite://:memory:') throw new UsageError('--workers needs a shared store: sqlite://:memory: would give each worker its own ledger');
  const say = (line: string): void => void process.stderr.write(`junction: ${line}\n`);
  if (config.redis === null && count > 1) {
    say(`no redis configured: each of the ${count} workers enforces rate limits on its own (up to ${count}× a key's limits)`);
  }
  // A scrape on any worker is answered with the sum over all of them (issue #16).
  if (config.server.metrics !== 'off') serveClusterMetrics();
  return new Promise((resolve) => {
    const startedAt = new Map<Worker, number>();
    const listening = new Set<Worker>();
    let announced = false;
    let stopping = false;
    let worst = 0;
    let backoffMs = 250;

    const fork = (): void => {
      startedAt.set(cluster.fork(), Date.now());
    };
    cluster.on('listening', (worker, address) => {
      listening.add(worker);
      if (!announced && listening.size === count) {
        announced = true;
        const host = address.addressType === 6 ? `[${address.address}]` : address.address;
        say(`listening on http://${host}:${address.port} (${count} workers, ${config.models.length} models, ${configFile})`);
      }
    });
    cluster.on('exit', (worker, code, signal) => {
      const lived = Date.now() - (startedAt.get(worker) ?? 0);
      const served = listening.has(worker);
      startedAt.delete(worker);
      listening.delete(worker);
      if (stopping) {
        worst = Math.max(worst, code ?? 1);
        if (startedAt.size === 0) resolve(worst);
        return;
      }
      // Before the group first served, a start-up failure would repeat: stop. A replacement that
      // fails later (the database briefly away) is retried with the back-off below instead.
      if (!served && !announced) {
        worst = Math.max(worst, code ?? 1);
        say(`a worker failed to start (${signal ?? `exit code ${code}`}); stopping`);
        stop('startup failure');
        return;
      }
      // A crash loop backs off; a worker that lived a while is replaced at once.
      backoffMs = lived < STARTUP_MS ? Math.min(backoffMs * 2, MAX_BACKOFF_MS) : 250;
      say(`worker ${worker.process.pid} exited (${signal ?? `exit code ${code}`}); starting a replacement`);
      setTimeout(() => stopping || fork(), lived < STARTUP_MS ? backoffMs : 0);
    });

    const stop = (reason: string): void => {
      if (stopping) {
        say(`${reason} received, still draining`);
        return;
      }
      stopping = true;
      if (reason !== 'startup failure') say(`${reason} received, draining ${startedAt.size} workers (up to ${config.server.shutdownGraceMs / 1000} s)`);
      if (startedAt.size === 0) resolve(worst);
      for (const worker of startedAt.keys()) worker.process.kill('SIGTERM');
    };
    // SIGHUP, a changed file (server.watch_config) or one worker's POST /admin/reload: every worker
    // reloads (issue #16). The file is checked here first, so a broken one is reported once.
    const reloadWorkers = (trigger: string, except?: Worker): void => {
      if (stopping) return;
      try {
        config = loadConfig(configFile);
      } catch (err) {
        if (except === undefined) process.stderr.write(describeReload(trigger, { ok: false, problems: err instanceof ConfigError ? err.problems : [String(err)] }));
        return;
      }
      if (except === undefined) say(`${trigger}: reloading ${startedAt.size} workers`);
      for (const worker of startedAt.keys()) {
        // A worker on its way out may have closed its channel already: sending would throw.
        if (worker !== except && worker.isConnected()) worker.send({ type: RELOAD_MESSAGE }, undefined, () => undefined);
      }
    };
    process.on('SIGHUP', () => reloadWorkers('SIGHUP'));
    if (config.server.watchConfig) watchConfigFile(configFile, () => reloadWorkers('file changed'), (err) => say(watchFailure(configFile, err)));
    cluster.on('message', (worker, message: unknown) => {
      if (isMessage(message, RELOAD_OTHERS_MESSAGE)) reloadWorkers('POST /admin/reload', worker);
    });
    // A terminal's Ctrl-C reaches the workers too; each drains once whichever signal comes first.
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGTERM', () => stop('SIGTERM'));
    // Workers are forked with node's own arguments; they get the young generation Node 24 would
    // choose on this machine where this Node would choose less and the operator did not size it
    // (issue #17). Kept for the replacements of crashed workers too.
    cluster.setupPrimary({ execArgv: [...process.execArgv, ...youngGenerationFlags()] });
    for (let i = 0; i < count; i++) fork();
  });
}

export const isWorker = (): boolean => cluster.isWorker;
