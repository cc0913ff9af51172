import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';

/** Editors save in bursts (write, rename, chmod): one reload for the burst. */
const SETTLE_MS = 200;

/**
 * Calls `changed` when the file changes (`server.watch_config`, issue #16). The folder is watched,
 * not the file: editors and `kubectl` ConfigMaps replace a file by renaming another over it, which
 * ends a watch on the file itself.
 */
export function watchConfigFile(file: string, changed: () => void, failed: (err: Error) => void): FSWatcher | undefined {
  const name = path.basename(file);
  let timer: NodeJS.Timeout | undefined;
  let watcher: FSWatcher;
  try {
    watcher = watch(path.dirname(path.resolve(file)), (_event, changedName) => {
      // A ConfigMap swaps a `..data` link and reports that name, not the file's.
      if (changedName !== null && changedName !== name && !changedName.startsWith('..')) return;
      clearTimeout(timer);
      timer = setTimeout(changed, SETTLE_MS);
      timer.unref();
    });
  } catch (err) {
    // Too many watches already (ENOSPC, EMFILE): SIGHUP and POST /admin/reload still work.
    failed(err as Error);
    return undefined;
  }
  // A watch can fail later (the folder removed, inotify exhausted): say so, and serve on.
  watcher.on('error', failed);
  watcher.unref();
  return watcher;
}
