import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/junction.js', import.meta.url));

/** Starts `junction serve --config <file>` on a free port in a child process; resolves once it listens. */
export function serveProcess(file: string): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve', '--config', file, '--port', '0']);
    let stderr = '';
    child.stdout.resume();
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      const match = /listening on (http:\/\/\S+)/.exec(stderr);
      if (match?.[1]) resolve({ child, url: match[1], stderr: () => stderr });
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
}
