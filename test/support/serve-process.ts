import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/junction.js', import.meta.url));

export interface ServedProcess {
  readonly child: ChildProcess;
  readonly url: string;
  stderr(): string;
  /** Resolves once the process has written a line matching `pattern` to stderr (now or later). */
  saidOnStderr(pattern: RegExp): Promise<void>;
}

/**
 * Starts `junction serve --config <file>` on a free port in a child process (plus `args`, such as
 * `--workers 2`); resolves once it says it listens.
 */
export function serveProcess(file: string, args: readonly string[] = [], startMs = 30_000): Promise<ServedProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve', '--config', file, '--port', '0', ...args]);
    let stderr = '';
    // A start that never finishes is killed with its process group's workers, and says what it
    // printed: a child left running would keep mocha from exiting.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`not listening after ${startMs} ms: ${stderr}`));
    }, startMs);
    child.stdout.resume();
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      // A single process's line, or a --workers primary's once every worker listens.
      const match = /junction(?::)? listening on (http:\/\/\S+)/.exec(stderr);
      if (match?.[1]) {
        clearTimeout(timer);
        const saidOnStderr = (pattern: RegExp): Promise<void> =>
          new Promise((said) => {
            const check = (): void => {
              if (!pattern.test(stderr)) return;
              child.stderr.off('data', onData);
              said();
            };
            const onData = (): void => void setImmediate(check);
            child.stderr.on('data', onData);
            check();
          });
        resolve({ child, url: match[1], stderr: () => stderr, saidOnStderr });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code}: ${stderr}`));
    });
  });
}

/** Sends `signal` and resolves with the exit code once the process has exited. */
export function stopProcess(served: ServedProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (served.child.exitCode !== null || served.child.signalCode !== null) return Promise.resolve(served.child.exitCode);
  const exited = new Promise<number | null>((resolve) => served.child.once('exit', (code) => resolve(code)));
  served.child.kill(signal);
  return exited;
}
