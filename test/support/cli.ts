import { main } from '../../src/cli/main.ts';

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a `junction` command in this process, with what it writes captured: the same code as the
 * bin minus a Node start-up (about a second of CPU each: issue #12). `serve` only for what it
 * refuses before starting: once started it installs signal handlers and keeps running, so tests
 * spawn it (support/serve-process.ts); `test/cli/cli.test.ts` runs the real bin.
 */
export async function junction(...args: string[]): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, { out: (text) => void (stdout += text), err: (text) => void (stderr += text) });
  return { code, stdout, stderr };
}
