// Issue #16: small Chat requests (native) through Junction with its metrics on and off, side by side,
// six interleaved 3 s rounds at concurrency 32; prints each round and the median on/off ratio.
// Usage: node bench/metrics-overhead.mjs
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { throughput } from './load.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const start = (args, env = {}) => new Promise((resolve) => { const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] }); child.stdout.on('data', (d) => { const m = /PORT (\d+)/.exec(String(d)); if (m) resolve({ child, url: `http://127.0.0.1:${m[1]}` }); }); });
const up = await start(['bench/upstream.mjs']);
const on = await start(['--import', 'tsx/esm', 'bench/junction-server.ts', up.url, 'sim-c64-g0-l0']);
const off = await start(['--import', 'tsx/esm', 'bench/junction-server.ts', up.url, 'sim-c64-g0-l0'], { JUNCTION_BENCH_METRICS: 'off' });
const body = Buffer.from(JSON.stringify({ model: 'o/sim-c64-g0-l0', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] }));
const headers = { 'content-type': 'application/json', authorization: 'Bearer sk-jct-bench-0123456789abcdef' };
for (const t of [on, off]) await throughput(t.url, '/v1/chat/completions', headers, body, 32, 1);
const ratios = [];
for (let i = 0; i < 6; i++) {
  const order = i % 2 ? [on, off] : [off, on];
  const r = {};
  for (const t of order) r[t === on ? 'on' : 'off'] = (await throughput(t.url, '/v1/chat/completions', headers, body, 32, 3)).rps;
  ratios.push(r.on / r.off);
  console.log(`round ${i + 1}: metrics on ${r.on.toFixed(0)} req/s, off ${r.off.toFixed(0)} req/s, on/off ${(r.on / r.off).toFixed(3)}`);
}
ratios.sort((a, b) => a - b);
console.log('median on/off', ((ratios[2] + ratios[3]) / 2).toFixed(3));
for (const p of [on, off, up]) p.child.kill('SIGTERM');
