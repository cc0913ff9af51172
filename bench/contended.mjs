// A contended A/B (issue #17, thirteenth session): two servers pinned to the same core and loaded at
// the same time, each at concurrency 16, their CPU per request read over the same windows. Machines
// of this kind drift by ±20% from one window to the next; loaded side by side, both arms meet the
// same drift, so their per-window difference varies far less than bench/probe.mjs's, which loads
// one arm after the other (a standard error of 3–11 µs in 8 rounds on small Chat here, against 20–28 µs in 24).
// The arms slow each other, so absolute figures are higher than the bench's: read the difference.
//
//   node bench/contended.mjs <scenarios> [rounds=8] [seconds=3] [dirA=.] [dirB=.] [scriptB=bench/junction-server.ts]
//   scenarios: chat, chat-stream, messages-stream, claude-code, claude-code-stream, and
//   messages-stream-translated and chat-stream-translated (Junction's arms only); comma-separated
//   ENV_A / ENV_B: an arm's environment, e.g. ENV_B=JUNCTION_BENCH_METRICS=off
//   ARGS_A / ARGS_B: node flags of an arm's own, space-separated, after the ones every arm gets
// Every arm runs with `--max-semi-space-size=32`, as `npm start` and bench/run.mjs run them (issue
// #17, nineteenth session); before the thirty-third session the A/Bs here ran without it.
// dirA and dirB are checkouts (a git worktree of the commit before a change, with node_modules
// linked). The arm started first measured 7–21 µs dearer in A/A runs: run both orders and average
// (A − B in one, B − A in the other).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { envOf, pinned, startServer, throughput } from './load.mjs';
import { SCENARIO_REQUESTS, SIM } from './requests.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [list = 'chat', roundsArg = '8', secondsArg = '3', dirA = ROOT, dirB = ROOT, scriptB = 'bench/junction-server.ts'] = process.argv.slice(2);
if (pinned) spawnSync('taskset', ['-p', '-c', '0', String(process.pid)]);

// bench/run.mjs's NODE_ARGS, which a test holds to `npm start`'s flag (YOUNG_GENERATION_FLAG).
const NODE_ARGS = ['--max-semi-space-size=32'];
const argsOf = (text = '') => text.split(' ').filter(Boolean);
const server = (script, dir, env, args) => startServer(1, process.execPath, [...NODE_ARGS, ...args, '--import', './bin/register.mjs', script, upstream.url, SIM], { cwd: path.resolve(dir), env });

const upstream = await startServer(0, process.execPath, ['bench/upstream.mjs'], { cwd: ROOT });
// SCRIPT_A=bench/floor-server.ts runs the floor as arm A, to take the other start order against Junction.
const a = await server(process.env.SCRIPT_A ?? 'bench/junction-server.ts', dirA, envOf(process.env.ENV_A), argsOf(process.env.ARGS_A));
const b = await server(scriptB, dirB, envOf(process.env.ENV_B), argsOf(process.env.ARGS_B));
const median = (values) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];
const mean = (values) => values.reduce((x, y) => x + y, 0) / values.length;
const stderr = (values) => Math.sqrt(values.reduce((x, y) => x + (y - mean(values)) ** 2, 0) / (values.length - 1) / values.length);
try {
  for (const id of list.split(',')) {
    const [route, body, headers] = SCENARIO_REQUESTS[id] ?? [];
    if (!route) throw new Error(`unknown scenario ${id}`);
    const run = (arm, seconds) => throughput(arm.url, route, headers, body, 16, seconds, arm.child.pid);
    await Promise.all([run(a, 4), run(b, 4)]);
    const [cpuA, cpuB, diff] = [[], [], []];
    for (let round = 0; round < Number(roundsArg); round++) {
      // Which arm's load starts first alternates, so neither is always ahead.
      const [ra, rb] = round % 2 === 0 ? await Promise.all([run(a, Number(secondsArg)), run(b, Number(secondsArg))]) : (await Promise.all([run(b, Number(secondsArg)), run(a, Number(secondsArg))])).reverse();
      cpuA.push(ra.cpuUs);
      cpuB.push(rb.cpuUs);
      diff.push(ra.cpuUs - rb.cpuUs);
    }
    const fixed = (value) => value.toFixed(1);
    console.log(`${id}: A ${median(cpuA).toFixed(0)} µs, B ${median(cpuB).toFixed(0)} µs per request (contended); A − B median ${fixed(median(diff))}, mean ${fixed(mean(diff))} ± ${fixed(stderr(diff))} (standard error) µs; by round ${diff.map((d) => d.toFixed(0)).join(' ')}`);
  }
} finally {
  await Promise.all([a, b].map((arm) => new Promise((done) => {
    arm.child.once('exit', done);
    arm.child.kill('SIGTERM');
  })));
  upstream.child.kill('SIGTERM');
}
