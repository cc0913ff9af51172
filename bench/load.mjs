// The load generator's measurements (issue #6): closed-loop throughput at a fixed concurrency,
// sequential latency at concurrency 1, time to the first content byte of a stream, and many
// streams held open at once. Keep-alive connections throughout, as real clients use them.
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';

/**
 * An arm's environment from `NAME=value,NAME=value` (ENV_A / ENV_B of the A/B scripts), each pair
 * split at its first `=` only: NODE_OPTIONS=--max-semi-space-size=32 is one pair.
 */
export function envOf(text = '') {
  return Object.fromEntries(text.split(',').filter(Boolean).map((pair) => {
    const at = pair.indexOf('=');
    return at === -1 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)];
  }));
}

/** Whether arms can be pinned to cores (taskset); the runners pin themselves to core 0 when so. */
export const pinned = spawnSync('taskset', ['-V']).status === 0;

/**
 * Starts a server that prints `PORT <n>` once listening, pinned to `core` when taskset exists.
 * Resolves with { child, url }.
 */
export function startServer(core, cmd, args, { env = {}, cwd } = {}) {
  const [bin, argv] = pinned ? ['taskset', ['-c', String(core), cmd, ...args]] : [cmd, args];
  const child = spawn(bin, argv, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const port = /PORT (\d+)/.exec(out)?.[1];
      if (port) resolve({ child, url: `http://127.0.0.1:${port}` });
    });
    child.once('exit', (code) => reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}`)));
  });
}

/** One POST, read to its end. Resolves with { ms, ttfbMs, bytes, ok }. */
export function post(agent, url, path, headers, body) {
  return new Promise((resolve) => {
    const start = performance.now();
    let ttfbMs = NaN;
    let bytes = 0;
    const req = http.request(url + path, { method: 'POST', agent, headers: { ...headers, 'content-length': body.length } }, (res) => {
      res.on('data', (chunk) => {
        if (bytes === 0) ttfbMs = performance.now() - start;
        bytes += chunk.length;
      });
      res.on('end', () => resolve({ ms: performance.now() - start, ttfbMs, bytes, ok: res.statusCode === 200 }));
      res.on('error', () => resolve({ ms: NaN, ttfbMs, bytes, ok: false }));
    });
    req.on('error', () => resolve({ ms: NaN, ttfbMs, bytes, ok: false }));
    req.end(body);
  });
}

/**
 * CPU time a process has used, in microseconds: every thread's, from /proc/<pid>/task/<tid>/schedstat
 * (its first field is nanoseconds on a CPU), so V8's GC helper threads count too (issue #17).
 * Null where /proc has no such file (not Linux).
 */
export function cpuMicros(pid) {
  try {
    let ns = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
      } catch {
        // The thread ended between the listing and the read.
      }
    }
    return ns / 1000;
  } catch {
    return null;
  }
}

/**
 * Requests per second at `concurrency` over `seconds`, after a short warm-up; with `pid`, also the
 * CPU the process under test spent per request over the same window (`cpuUs`).
 */
export async function throughput(url, path, headers, body, concurrency, seconds, pid) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const run = async (ms) => {
    const end = performance.now() + ms;
    let done = 0;
    let failed = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < end) {
          const r = await post(agent, url, path, headers, body);
          if (r.ok) done++;
          else failed++;
        }
      }),
    );
    return { done, failed };
  };
  await run(Math.min(1000, seconds * 300));
  const cpuBefore = pid === undefined ? null : cpuMicros(pid);
  const start = performance.now();
  const { done, failed } = await run(seconds * 1000);
  const elapsed = (performance.now() - start) / 1000;
  const cpuAfter = pid === undefined ? null : cpuMicros(pid);
  agent.destroy();
  const cpuUs = cpuBefore === null || cpuAfter === null || done === 0 ? null : (cpuAfter - cpuBefore) / done;
  return { rps: done / elapsed, failed, cpuUs };
}

/** Sequential requests: p50 and p99 of the whole request and of the first byte. */
export async function latency(url, path, headers, body, count) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  for (let i = 0; i < Math.min(50, count); i++) await post(agent, url, path, headers, body);
  const ms = [];
  const ttfb = [];
  let failed = 0;
  for (let i = 0; i < count; i++) {
    const r = await post(agent, url, path, headers, body);
    if (!r.ok) failed++;
    ms.push(r.ms);
    ttfb.push(r.ttfbMs);
  }
  agent.destroy();
  return { p50: percentile(ms, 50), p99: percentile(ms, 99), ttfbP50: percentile(ttfb, 50), ttfbP99: percentile(ttfb, 99), failed };
}

/** Opens `count` streams and resolves once each has sent its first byte; `close()` aborts them all. */
export async function holdStreams(url, path, headers, body, count) {
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const requests = [];
  let opened = 0;
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${opened} of ${count} streams opened`)), 60_000);
    for (let i = 0; i < count; i++) {
      const req = http.request(url + path, { method: 'POST', agent, headers: { ...headers, 'content-length': body.length } }, (res) => {
        res.once('data', () => {
          if (++opened === count) {
            clearTimeout(timer);
            resolve();
          }
        });
        res.on('error', () => undefined);
      });
      req.on('error', () => undefined);
      req.end(body);
      requests.push(req);
    }
  });
  return { close: () => { for (const req of requests) req.destroy(); agent.destroy(); } };
}

export function percentile(values, p) {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export const median = (values) => percentile(values, 50);
