/**
 * Where a command writes: the process's own streams, or (tests: issue #12) a capture, so that
 * `check-config` and `keys` can run in-process. `serve` writes to its process's stderr: it is a
 * process of its own.
 */
export interface CliOutput {
  out(text: string): void;
  err(text: string): void;
}

export const PROCESS_OUTPUT: CliOutput = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
};
