// A paired A/B probe (issue #17): CPU per request of Junction, of a second arm, and of the bare
// proxy, side by side in the same interleaved rounds, at concurrency 32. Quicker than `npm run bench`
// for one change; the figures in bench/RESULTS.md marked "paired probe" come from it.
//
//   node bench/probe.mjs <scenarios> [rounds=3] [seconds=3]
//   scenarios: chat (small Chat), messages-stream, claude-code (76 KB), messages-translated
//              (Messages stream through a Chat upstream), chat-translated, chat-stream, responses (small,
//              native), gemini and bedrock (a Messages stream through those plugins); comma-separated
// The second arm, when PROBE_B is set (its environment, e.g. PROBE_B="FLOOR_LEDGER=off"):
//   PROBE_B_SCRIPT  the server to run instead of bench/junction-server.ts (bench/floor-server.ts)
//   PROBE_B_DIR     another checkout to run it from (a git worktree of the commit before a change)
//   PROBE_B_NODE_ARGS  its node arguments instead of `--import ./bin/register.mjs` (an older checkout: `--import tsx/esm`)
// Arms are pinned to core 1, the simulator and the load generator to core 0, as in run.mjs.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, pinned, startServer, throughput } from './load.mjs';
import { claudeCode, HEADERS, SIM, small, smallResponses } from './requests.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [list = 'chat', roundsArg = '3', secondsArg = '3'] = process.argv.slice(2);
if (pinned) spawnSync('taskset', ['-p', '-c', '0', String(process.pid)]);

const start = (core, args, env = {}, cwd = ROOT) => startServer(core, process.execPath, args, { env, cwd });

const upstream = await start(0, ['bench/upstream.mjs']);
const bare = await start(1, ['bench/bare-proxy.mjs', upstream.url]);
const junction = await start(1, ['--import', './bin/register.mjs', 'bench/junction-server.ts', upstream.url, SIM]);
let second = null;
if (process.env.PROBE_B !== undefined) {
  const env = {};
  for (const pair of process.env.PROBE_B.split(',').filter(Boolean)) {
    const [name, value = ''] = pair.split('=');
    env[name] = value;
  }
  const nodeArgs = (process.env.PROBE_B_NODE_ARGS ?? '--import ./bin/register.mjs').split(' ');
  second = await start(1, [...nodeArgs, process.env.PROBE_B_SCRIPT ?? 'bench/junction-server.ts', upstream.url, SIM], env, process.env.PROBE_B_DIR ?? ROOT);
}

const SCENARIOS = {
  chat: ['chat', '/v1/chat/completions', small(`o/${SIM}`, false)],
  'messages-stream': ['messages', '/v1/messages', small(`a/${SIM}`, true)],
  'claude-code': ['messages', '/v1/messages', claudeCode(`a/${SIM}`, false)],
  'messages-translated': ['messages', '/v1/messages', small(`o/${SIM}`, true)],
  'chat-translated': ['chat', '/v1/chat/completions', small(`a/${SIM}`, true)],
  'chat-stream': ['chat', '/v1/chat/completions', small(`o/${SIM}`, true)],
  responses: ['responses', '/v1/responses', smallResponses(`r/${SIM}`, false)],
  gemini: ['messages', '/v1/messages', small(`g/${SIM}`, true)],
  bedrock: ['messages', '/v1/messages', small(`b/${SIM}`, true)],
};

const rows = {};
try {
  for (let round = 0; round < Number(roundsArg); round++) {
    for (const id of list.split(',')) {
      const [format, route, body] = SCENARIOS[id] ?? [];
      if (!route) throw new Error(`unknown scenario ${id}`);
      const arms = [['bare', bare], ['junction', junction], ...(second ? [['B', second]] : [])];
      // Rotated each round, so no arm always runs first.
      const order = arms.map((_, i) => arms[(i + round) % arms.length]);
      const row = {};
      for (const [name, arm] of order) row[name] = await throughput(arm.url, route, HEADERS[format], body, 32, Number(secondsArg), arm.child.pid);
      (rows[id] ??= []).push(row);
      const failed = Object.entries(row).filter(([, m]) => m.failed > 0).map(([name, m]) => `${name} failed ${m.failed}`);
      console.log(`round ${round + 1} ${id}: ${Object.entries(row).map(([name, m]) => `${name} ${m.cpuUs.toFixed(0)} µs`).join(', ')}${failed.length ? ` (${failed.join(', ')})` : ''}`);
    }
  }
} finally {
  for (const proc of [junction, second, bare, upstream]) proc?.child.kill('SIGTERM');
}

const fmt = (v) => v.toFixed(2);
for (const [id, per] of Object.entries(rows)) {
  const ratio = (arm) => per.map((r) => r.bare.cpuUs / r[arm].cpuUs);
  const line = [`${id}: junction ${median(per.map((r) => r.junction.cpuUs)).toFixed(0)} µs, ${fmt(median(ratio('junction')))}× bare by CPU`];
  if (second) {
    line.push(`B ${median(per.map((r) => r.B.cpuUs)).toFixed(0)} µs, ${fmt(median(ratio('B')))}× bare`);
    line.push(`B − junction, paired: ${median(per.map((r) => r.B.cpuUs - r.junction.cpuUs)).toFixed(0)} µs`);
  }
  console.log(line.join('; '));
}
process.exit(0);
