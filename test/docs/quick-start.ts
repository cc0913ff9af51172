// The README's quick-start commands, read out of its shell block and run with the real curl, as a
// reader would paste them, against a gateway on another port.
import { execFile } from 'node:child_process';
import type { CodeBlock } from './markdown.ts';

export const DOC_ORIGIN = 'http://127.0.0.1:8080';

export interface QuickStartCommand {
  /** The comment above the command (what the README says it does), for the test title. */
  readonly title: string;
  /** The command as written, continuation lines joined. */
  readonly command: string;
  /** The block's shell variable assignments (`KEY=…`), which every command needs. */
  readonly prelude: string;
}

/** The curl commands of a shell block, each with the comment that introduces it. */
export function curlCommands(block: CodeBlock): QuickStartCommand[] {
  const logical = block.body.replace(/\\\n\s*/g, ' ').split('\n');
  const prelude = logical.filter((line) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(line)).join('\n');
  const commands: QuickStartCommand[] = [];
  // Commands under one comment share it: the comment lines since the previous command.
  let comment: string[] = [];
  let afterCommand = false;
  for (const line of logical) {
    const text = line.trim();
    if (text.startsWith('#')) {
      if (afterCommand) comment = [];
      afterCommand = false;
      comment.push(text.replace(/^#\s*/, ''));
    } else if (text.startsWith('curl ')) {
      commands.push({ title: comment.join(' '), command: text, prelude });
      afterCommand = true;
    }
  }
  return commands;
}

export interface CurlResult {
  readonly status: number;
  readonly contentType: string;
  readonly requestId: string;
  /** What curl wrote to stdout: the body, or the headers with `-D -`, or nothing with `-o`. */
  readonly output: string;
  readonly stderr: string;
}

// The line curl's -w adds after the output; `|` because a content type may hold spaces.
const MARK = '@@junction-docs-test|';

/**
 * Runs one command in `cwd` with bash, the way it reads in the README, with the documented origin
 * replaced by `origin` and options added right after `curl`: quiet but for errors, no proxy (the
 * gateway is on loopback), a deadline, and a last line that reports the status, content type and
 * request id.
 */
export function runCurl(command: QuickStartCommand, origin: string, cwd: string, substitutions: Record<string, string> = {}): Promise<CurlResult> {
  let line = command.command.split(DOC_ORIGIN).join(origin);
  for (const [from, to] of Object.entries(substitutions)) line = line.split(from).join(to);
  const extra = `-sS --noproxy '*' --max-time 20 -w '\\n${MARK}%{http_code}|%{content_type}|%header{x-request-id}\\n'`;
  const script = `set -e\n${command.prelude}\n${line.replace(/^curl /, `curl ${extra} `)}`;
  return new Promise((resolve, reject) => {
    execFile('bash', ['-c', script], { cwd, timeout: 30_000, maxBuffer: 32 * 1024 * 1024 }, (err, stdout, stderr) => {
      const at = stdout.lastIndexOf(`\n${MARK}`);
      if (err || at < 0) return reject(new Error(`${line}\n${err?.message ?? 'curl wrote no status line'}\n${stderr}`));
      const [status, contentType, requestId] = stdout.slice(at + MARK.length + 1).trim().split('|');
      resolve({ status: Number(status), contentType: contentType ?? '', requestId: requestId ?? '', output: stdout.slice(0, at), stderr });
    });
  });
}
