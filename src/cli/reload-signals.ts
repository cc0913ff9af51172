import cluster from 'node:cluster';
import type { ReloadResult } from '../reload/reloader.ts';
import { watchConfigFile } from '../reload/watch.ts';

/** Messages between the `--workers` supervisor and its workers (issue #16). */
export const RELOAD_MESSAGE = 'junction:reload';
/** A worker reloaded on POST /admin/reload: the supervisor reloads the others. */
export const RELOAD_OTHERS_MESSAGE = 'junction:reload-others';

/** What a watch that could not start or broke says; the other triggers still work. */
export function watchFailure(file: string, err: Error): string {
  return `server.watch_config: cannot watch ${file} (${err.message}); SIGHUP still reloads it`;
}

/** One stderr line for a reload's outcome; the log has the details. */
export function describeReload(trigger: string, result: ReloadResult): string {
  if (!result.ok) return `junction: ${trigger}: the configuration was not reloaded, nothing changed:\n  ${result.problems.join('\n  ')}\n`;
  const { providers, models, restartRequired } = result.changes;
  const counts = `${models.added.length} models added, ${models.changed.length} changed, ${models.removed.length} removed; ${providers.added.length + providers.changed.length + providers.removed.length} providers changed`;
  const restart = restartRequired.length > 0 ? `; needs a restart to apply: ${restartRequired.join(', ')}` : '';
  return `junction: ${trigger}: configuration reloaded (${counts}${restart})\n`;
}

/**
 * A single gateway, or one worker: SIGHUP, the supervisor's message and, with
 * `server.watch_config`, a change of the file reload it.
 */
export function reloadOnSignals(reload: () => Promise<ReloadResult>, file: string, watchFile: boolean): void {
  const run = (trigger: string): void => void reload().then((result) => process.stderr.write(describeReload(trigger, result)));
  process.on('SIGHUP', () => run('SIGHUP'));
  if (cluster.isWorker) {
    process.on('message', (message: unknown) => {
      if (isMessage(message, RELOAD_MESSAGE)) run(`worker ${process.pid}`);
    });
  } else if (watchFile) {
    watchConfigFile(file, () => run('file changed'), (err) => process.stderr.write(`junction: ${watchFailure(file, err)}\n`));
  }
}

/**
 * POST /admin/reload in a worker: this worker reloads and answers, and the supervisor reloads the
 * others, so every worker serves the same file.
 */
export function reloadEveryWorker(local: () => Promise<ReloadResult>): Promise<ReloadResult> {
  return local().then((result) => {
    if (result.ok && cluster.isWorker && process.connected) process.send?.({ type: RELOAD_OTHERS_MESSAGE }, undefined, undefined, () => undefined);
    return result;
  });
}

export function isMessage(message: unknown, type: string): boolean {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type;
}
