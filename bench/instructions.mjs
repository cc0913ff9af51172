// Instructions per request under callgrind (issue #17, fourteenth session): a count that does not
// drift with the machine. CPU per request on these shared 2-core machines moves ±20% between
// windows, so a change of 5–10 µs needs many contended rounds (contended.mjs) to see; the number
// of instructions a server runs for the same requests is the same run after run, whatever else
// the machine does (valgrind's own note: /work/.library/env, "callgrind counts instructions").
// It is not time: cache misses, system calls and the kernel's network stack are not in it, and
// V8's background threads are serialised. So it ranks changes to Junction's own code; the bench's
// CPU per request stays the measurement of record.
//
//   node bench/instructions.mjs <scenarios> [requests=1000] [arms=junction,floor]
//   an arm: `junction` (bench/junction-server.ts), `floor` (bench/floor-server.ts), or
//   `<dir>:<script>` for a checkout of another commit (a git worktree with node_modules linked)
//   scenarios: chat, chat-stream, messages-stream, claude-code, claude-code-stream, and
//   messages-stream-translated and chat-stream-translated (Junction's arms only); comma-separated
//   WARMUP (default 15000, at concurrency 8): requests before counting. V8 was still optimising
//     Junction's code 10,000 requests in (--trace-opt, outside valgrind); counted before that,
//     TurboFan's own work was half of every arm's instructions
//   CONCURRENCY (default 1): requests in flight while counting; one at a time, every group
//     commit holds one request, so the count does not depend on how requests happened to batch
//   KEEP=<dir>: keep the dumps there, for callgrind_annotate
//   SERVER_NODE_OPTIONS=--perf-basic-prof: the server writes /tmp/perf-<pid>.map, which names the
//     JIT code that callgrind shows only by address
//   CACHE_SIM=1: callgrind also simulates the caches (its model of this machine's L1 and last
//     level) and reports misses per request beside the instructions: where two arms run about the
//     same instructions and different CPU time, the misses are one thing that can tell them apart
//     (a model, not the hardware's counters, which these machines do not expose)
//
// The server starts under valgrind with instrumentation off (startup and warm-up run about five
// times slower, not fifty), which `callgrind_control -i on` turns on for the counted requests.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { post, startServer } from './load.mjs';
import { SCENARIO_REQUESTS, SIM } from './requests.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [list = 'chat', requestsArg = '1000', armsArg = 'junction,floor'] = process.argv.slice(2);
const REQUESTS = Number(requestsArg);
const WARMUP = Number(process.env.WARMUP ?? 15000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 1);
const CACHE_SIM = process.env.CACHE_SIM === '1';
if (spawnSync('valgrind', ['--version']).status !== 0) throw new Error('valgrind is not installed (apt-get install valgrind)');

const ARMS = { junction: [ROOT, 'bench/junction-server.ts'], floor: [ROOT, 'bench/floor-server.ts'] };
const armOf = (name) => ARMS[name] ?? [path.resolve(name.split(':')[0]), name.split(':')[1] ?? 'bench/junction-server.ts'];

const upstream = await startServer(0, process.execPath, ['bench/upstream.mjs'], { cwd: ROOT });
// KEEP=<dir>: the dumps are kept there, for callgrind_annotate.
const out = process.env.KEEP ?? mkdtempSync(path.join(tmpdir(), 'junction-callgrind-'));

/** `count` requests at CONCURRENCY; throws if any failed, since a failed request costs less. */
async function load(url, [route, body, headers], count, concurrency) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  let next = 0;
  let failed = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) {
      next++;
      if (!(await post(agent, url, route, headers, body)).ok) failed++;
    }
  }));
  agent.destroy();
  if (failed > 0) throw new Error(`${failed} of ${count} requests failed`);
}

/** Instructions per request of one arm on one scenario, in a fresh server. */
async function count(arm, id) {
  const scenario = SCENARIO_REQUESTS[id];
  const [dir, script] = armOf(arm);
  const file = path.join(out, `${id}-${arm.replace(/\W/g, '_')}.out`);
  const server = await startServer(1, 'valgrind', [
    '--tool=callgrind', '--instr-atstart=no', '--separate-threads=yes', '--smc-check=all-non-file', '--dump-instr=no', `--callgrind-out-file=${file}`,
    ...(CACHE_SIM ? ['--cache-sim=yes'] : []),
    // No memory reducer: under valgrind a server runs about fifty times slower and looks idle to
    // V8, which then starts full collections and shrinks the young generation after them (one
    // mark-compact and 56 scavenges per 1,000 76 KB requests, against none and 2.6 at full speed,
    // --trace-gc, sixteenth session): counts of the same code moved by 60k a request.
    process.execPath, '--no-memory-reducer', '--import', './bin/register.mjs', script, upstream.url, SIM,
  ], { cwd: dir, env: process.env.SERVER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.SERVER_NODE_OPTIONS } : {} });
  try {
    await load(server.url, scenario, WARMUP, 8);
    const pid = String(server.child.pid);
    const control = (flag) => {
      const run = spawnSync('callgrind_control', [flag, pid], { encoding: 'utf8' });
      if (run.status !== 0) throw new Error(`callgrind_control ${flag}: ${run.stderr}`);
    };
    control('--zero');
    control('--instr=on');
    await load(server.url, scenario, REQUESTS, CONCURRENCY);
    control('--dump');
    control('--instr=off');
  } finally {
    server.child.kill('SIGTERM');
    await new Promise((done) => server.child.once('exit', done));
  }
  // The dump is a file per thread (`<file>.1-<thread>`); thread 01 is the main one, where
  // Junction's JavaScript runs. The others are V8's compiler and GC helpers, and libuv's pool.
  const dumps = readdirSync(out).filter((name) => name.startsWith(`${path.basename(file)}.1-`)).sort();
  if (dumps.length === 0) throw new Error(`no dump for ${arm}`);
  let all = 0;
  let main = 0;
  // With CACHE_SIM, each totals line is `Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw` (the events line names them).
  const misses = { I1: 0, D1: 0, LL: 0 };
  for (const name of dumps) {
    const text = readFileSync(path.join(out, name), 'utf8');
    const totals = /^(?:summary|totals): ([\d ]+)/m.exec(text);
    if (!totals) throw new Error(`no totals in ${name}`);
    const values = totals[1].trim().split(/\s+/).map(Number);
    all += values[0];
    if (name.endsWith('-01')) {
      main += values[0];
      if (CACHE_SIM) {
        const events = (/^events: (.*)$/m.exec(text)?.[1] ?? '').trim().split(/\s+/);
        const at = (event) => values[events.indexOf(event)] ?? 0;
        misses.I1 += at('I1mr');
        misses.D1 += at('D1mr') + at('D1mw');
        misses.LL += at('ILmr') + at('DLmr') + at('DLmw');
      }
    }
  }
  return { all: all / REQUESTS, main: main / REQUESTS, misses };
}

try {
  for (const id of list.split(',')) {
    if (!SCENARIO_REQUESTS[id]) throw new Error(`unknown scenario ${id}`);
    const row = [];
    for (const arm of armsArg.split(',')) {
      const { all, main, misses } = await count(arm, id);
      const simulated = CACHE_SIM ? `; main thread misses a request: I1 ${(misses.I1 / REQUESTS).toFixed(0)}, D1 ${(misses.D1 / REQUESTS).toFixed(0)}, LL ${(misses.LL / REQUESTS).toFixed(0)}` : '';
      row.push(`${arm} ${(all / 1000).toFixed(0)}k (main thread ${(main / 1000).toFixed(0)}k${simulated})`);
    }
    console.log(`${id}: instructions per request (${REQUESTS} after ${WARMUP}, concurrency ${CONCURRENCY}): ${row.join(', ')}`);
  }
} finally {
  upstream.child.kill('SIGTERM');
  if (!process.env.KEEP) rmSync(out, { recursive: true, force: true });
}
