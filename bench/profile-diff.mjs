// Where an arm's CPU goes against another's, by function (issue #17, thirty-fourth session): each
// arm is loaded alone under V8's sampling profiler (`--cpu-prof`, a sample every 100 µs), and the
// samples of the measured window are summed by function (self time), per request. Junction's own
// functions show against nothing in the floor, and a function both run shows what each pays for it.
//
//   node bench/profile-diff.mjs <scenario> [seconds=10] [by=function|file] [rows=40]
//   scenario: chat, chat-stream, messages-stream, claude-code, claude-code-stream (bench/requests.mjs)
//   arm A is Junction (SCRIPT_A, ENV_A to change it), arm B the floor keeping the product's rows
//   (`FLOOR_STREAMS=on,FLOOR_LEDGER=rows`; SCRIPT_B, ENV_B to change it); KEEP=<dir> keeps the profiles.
//
// Read it as a map, not a measurement: the arms run one after the other, so the machine's drift
// between them moves every figure alike (contended.mjs measures a difference), and the profiler
// adds about 10% of CPU. A function's self time includes the builtins and C++ it calls without a
// JavaScript frame between (JSON.parse, a SQLite statement). Functions run once a request cost
// several times here what a loop over them times: in the thirty-fourth session a usage value's
// JSON.parse cost about 4 µs a small Chat request in the server and 0.3 µs in a loop.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { envOf, startServer, throughput } from './load.mjs';
import { SCENARIO_REQUESTS, SIM } from './requests.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [scenario = 'chat', secondsArg = '10', by = 'function', rowsArg = '40'] = process.argv.slice(2);
const request = SCENARIO_REQUESTS[scenario];
if (!request) throw new Error(`unknown scenario ${scenario}`);
const [route, body, headers] = request;
const ARMS = [
  { name: 'A', script: process.env.SCRIPT_A ?? 'bench/junction-server.ts', env: envOf(process.env.ENV_A) },
  { name: 'B', script: process.env.SCRIPT_B ?? 'bench/floor-server.ts', env: envOf(process.env.ENV_B ?? 'FLOOR_STREAMS=on,FLOOR_LEDGER=rows') },
];
const keep = process.env.KEEP;
const dir = keep ? path.resolve(keep) : mkdtempSync(path.join(tmpdir(), 'junction-prof-'));
// The clock V8 stamps samples with (CLOCK_MONOTONIC, in µs) is hrtime's on Linux.
const nowUs = () => Number(process.hrtime.bigint() / 1000n);

/** Self time by key over samples stamped within [from, to], in µs. */
function selfTimes(file, from, to) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const times = new Map();
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i];
    if (at < from || at > to) continue;
    const frame = frames.get(profile.samples[i]);
    const url = frame.url.includes('/node_modules/') ? frame.url.slice(frame.url.lastIndexOf('/node_modules/') + 14) : frame.url.replace(`file://${ROOT}/`, '');
    const key = by === 'file' ? url || '(native)' : `${frame.functionName || '(anonymous)'} ${url}${url ? `:${frame.lineNumber + 1}` : ''}`;
    times.set(key, (times.get(key) ?? 0) + profile.timeDeltas[i]);
  }
  return times;
}

const upstream = await startServer(0, process.execPath, ['bench/upstream.mjs'], { cwd: ROOT });
const results = [];
try {
  for (const arm of ARMS) {
    const out = path.join(dir, arm.name);
    const args = ['--max-semi-space-size=32', '--cpu-prof', '--cpu-prof-interval', '100', '--cpu-prof-dir', out, '--import', './bin/register.mjs', arm.script, upstream.url, SIM];
    const server = await startServer(1, process.execPath, args, { cwd: ROOT, env: arm.env });
    await throughput(server.url, route, headers, body, 16, 5, server.child.pid);
    const start = nowUs();
    const run = await throughput(server.url, route, headers, body, 16, Number(secondsArg), server.child.pid);
    const end = nowUs();
    await new Promise((done) => {
      server.child.once('exit', done);
      server.child.kill('SIGTERM');
    });
    // The main thread's profile is the largest; throughput() warms up for the first second of its window.
    const file = readdirSync(out).map((name) => path.join(out, name)).sort((a, b) => statSync(b).size - statSync(a).size)[0];
    const from = start + Math.min(1000, Number(secondsArg) * 300) * 1000;
    const requests = (run.rps * (end - from)) / 1e6;
    const times = selfTimes(file, from, end);
    const perRequest = new Map([...times].map(([key, us]) => [key, us / requests]));
    const sampled = [...perRequest.values()].reduce((a, b) => a + b, 0);
    console.log(`${arm.name}: ${arm.script} ${JSON.stringify(arm.env)}: ${run.rps.toFixed(0)} req/s, ${run.cpuUs.toFixed(1)} µs CPU a request (every thread), ${sampled.toFixed(1)} µs sampled on the main thread`);
    results.push(perRequest);
  }
} finally {
  upstream.child.kill('SIGTERM');
  if (!keep) rmSync(dir, { recursive: true, force: true });
}
const [a, b] = results;
const keys = [...new Set([...a.keys(), ...b.keys()])].map((key) => [key, (a.get(key) ?? 0) - (b.get(key) ?? 0)]).sort((x, y) => y[1] - x[1]);
const rows = Number(rowsArg);
const line = ([key, diff]) => `${diff.toFixed(2).padStart(8)} ${(a.get(key) ?? 0).toFixed(2).padStart(8)} ${(b.get(key) ?? 0).toFixed(2).padStart(8)}  ${key}`;
console.log(`\nµs a request, self time: A − B, A, B (by ${by}); A's dearest first, then B's`);
for (const entry of keys.slice(0, rows)) console.log(line(entry));
console.log('…');
for (const entry of keys.slice(-Math.min(rows, 12))) console.log(line(entry));
