// Issue #16: small Chat requests (native) through Junction with its metrics on and off, side by side,
// interleaved rounds at concurrency 32; the median on/off ratio must stay ≥ 0.97. `npm run bench`
// runs it as one of its scenarios; alone: node bench/metrics-overhead.mjs [rounds] [seconds]
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, throughput } from './load.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SIM = 'sim-c64-g0-l0';

function start(args, env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
    child.stdout.on('data', (d) => {
      const m = /PORT (\d+)/.exec(String(d));
      if (m) resolve({ child, url: `http://127.0.0.1:${m[1]}` });
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
}

/**
 * Rounds of metrics on against off against the simulator at `upstreamUrl`; each round's req/s and
 * ratio. `launch(args, env)` starts a Junction process (the bench pins it to its core).
 */
export async function metricsOverhead(upstreamUrl, rounds, seconds, log = () => undefined, launch = start) {
  const server = (env) => launch(['--import', './bin/register.mjs', 'bench/junction-server.ts', upstreamUrl, SIM], env);
  const on = await server({});
  const off = await server({ JUNCTION_BENCH_METRICS: 'off' });
  const body = Buffer.from(JSON.stringify({ model: `o/${SIM}`, max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] }));
  const headers = { 'content-type': 'application/json', authorization: 'Bearer sk-jct-bench-0123456789abcdef' };
  const results = [];
  try {
    for (const t of [on, off]) await throughput(t.url, '/v1/chat/completions', headers, body, 32, 1);
    for (let i = 0; i < rounds; i++) {
      const r = {};
      for (const t of i % 2 ? [on, off] : [off, on]) r[t === on ? 'on' : 'off'] = (await throughput(t.url, '/v1/chat/completions', headers, body, 32, seconds)).rps;
      results.push({ ...r, ratio: r.on / r.off });
      log(`metrics round ${i + 1}/${rounds}: on ${r.on.toFixed(0)} req/s, off ${r.off.toFixed(0)} req/s, on/off ${(r.on / r.off).toFixed(3)}\n`);
    }
  } finally {
    for (const p of [on, off]) p.child.kill('SIGTERM');
  }
  return { rounds: results, median: median(results.map((r) => r.ratio)) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const up = await start(['bench/upstream.mjs']);
  try {
    const result = await metricsOverhead(up.url, Number(process.argv[2] ?? 6), Number(process.argv[3] ?? 3), (line) => process.stdout.write(line));
    console.log('median on/off', result.median.toFixed(3));
  } finally {
    up.child.kill('SIGTERM');
  }
}
