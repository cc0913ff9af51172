// `npm run bench [-- --quick] [-- --rounds N]`: Junction side by side with a bare proxy (issue #6).
// Arms: (a) the simulator directly, (b) a bare keep-alive http-proxy-3, (c) Junction on a native
// route, (d) Junction on a translated route. Rounds interleave the arms; medians over rounds; every
// ratio is taken within a round. Method: ../shared/reference/performance.md §4.
// Peer column, when installed: (e) Portkey's open-source gateway. It lives in a bench-only folder,
// never a project dependency; install it with `npm --prefix bench/peers ci`.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { holdStreams, latency, median, pinned, startServer, throughput } from './load.mjs';
import { writePartialReport, writeReport, writeMediaReport } from './report.mjs';
import { mediaScenario } from './media.mjs';
import { claudeCode, fixture, HEADERS, KEY, PATH, SIM, small, smallResponses } from './requests.mjs';
import { metricsOverhead } from './metrics-overhead.mjs';

const DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.join(DIR, '..');
const QUICK = process.argv.includes('--quick');
// `--only chat-small,claude-code`: those scenarios alone, for an A/B of one change (issue #17). A
// partial run prints its table and writes results-partial.json, never RESULTS.md.
const onlyArg = process.argv.indexOf('--only');
const ONLY = onlyArg > 0 ? new Set(process.argv[onlyArg + 1].split(',')) : null;
// Only issue #13's media runs (upload and speech), reported in their own section of RESULTS.md.
const MEDIA_ONLY = process.argv.includes('--media');
const roundsArg = process.argv.indexOf('--rounds');
const ROUNDS = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : QUICK ? 1 : 5;
const CONCURRENCY = 32;
const SECONDS = QUICK ? 0.8 : 4;
const SEQUENTIAL = QUICK ? 120 : 600;
const HELD = QUICK ? 200 : 1000;
const LONG = 'sim-c600-g1000-l0'; // one event a second: streams that stay open
const PORTKEY_PKG = path.join(DIR, 'peers/node_modules/@portkey-ai/gateway/package.json');
const PORTKEY = existsSync(PORTKEY_PKG) ? JSON.parse(readFileSync(PORTKEY_PKG, 'utf8')).version : null;
if (!PORTKEY) process.stderr.write('Portkey column skipped: not installed (npm --prefix bench/peers ci).\n');

if (pinned) spawnSync('taskset', ['-p', '-c', '0', String(process.pid)]); // the load generator shares core 0 with the simulator

const start = (core, cmd, args, env = {}) => startServer(core, cmd, args, { env, cwd: ROOT });

const ask = (proc, message) =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer to ${message}`)), 10_000);
    proc.child.once('message', (answer) => {
      clearTimeout(timer);
      resolve(answer);
    });
    proc.child.send(message);
  });

// Request bodies (requests.mjs): the same bytes for every arm of a scenario.
// About 150 KB: the Claude Code request's system prompt and tools, its first turn repeated.
const big = (model) => {
  const first = fixture.messages[0];
  const messages = [first];
  const size = () => JSON.stringify({ model, system: fixture.system, tools: fixture.tools, messages }).length;
  while (size() < 150 * 1024) messages.push({ role: 'assistant', content: 'Noted.' }, first);
  return Buffer.from(JSON.stringify({ model, system: fixture.system, tools: fixture.tools, messages }));
};

// A client format's own upstream, and another one (Responses: a Messages upstream, Codex CLI on Claude).
const NATIVE = { messages: 'a/', chat: 'o/', responses: 'r/' };
const FOREIGN = { messages: 'o/', chat: 'a/', responses: 'a/' };

const SCENARIOS = [
  { id: 'chat-small', title: '1. Small Chat request, whole', format: 'chat', body: (p) => small(`${p}${SIM}`, false) },
  { id: 'messages-stream', title: '2/4. Messages stream, 64 events (translated arm: through a Chat upstream)', format: 'messages', stream: true, body: (p) => small(`${p}${SIM}`, true) },
  { id: 'claude-code', title: '3. Claude Code request, 76 KB, whole', format: 'messages', body: (p) => claudeCode(`${p}${SIM}`, false) },
  { id: 'claude-code-stream', title: '3. Claude Code request, 76 KB, streamed', format: 'messages', stream: true, body: (p) => claudeCode(`${p}${SIM}`, true) },
  { id: 'chat-stream', title: '5. Chat stream, 64 events (translated arm: through a Messages upstream)', format: 'chat', stream: true, body: (p) => small(`${p}${SIM}`, true) },
  // Issue #14: the Responses front door, native, against native Chat above.
  { id: 'responses-small', title: '8. Small Responses request, whole (translated arm: through a Messages upstream)', format: 'responses', body: (p) => smallResponses(`${p}${SIM}`, false) },
  { id: 'responses-stream', title: '8. Responses stream, 64 events (translated arm: through a Messages upstream)', format: 'responses', stream: true, body: (p) => smallResponses(`${p}${SIM}`, true) },
  // Issue #15: a Messages stream through the gemini plugin's own format, against the native Anthropic route.
  { id: 'gemini-stream', title: '9. Messages stream, 64 events (translated arm: through the gemini plugin)', format: 'messages', stream: true, foreign: 'g/', body: (p) => small(`${p}${SIM}`, true) },
  // Issue #15: a Messages stream from Claude on Bedrock (SigV4 per request, event-stream frames decoded), against the native Anthropic route.
  { id: 'bedrock-stream', title: '10. Messages stream, 64 events (translated arm: Claude on Bedrock, signed, event stream)', format: 'messages', stream: true, foreign: 'b/', body: (p) => small(`${p}${SIM}`, true) },
];

async function measure(proc, scenario, prefix, headers = HEADERS[scenario.format]) {
  const body = scenario.body(prefix);
  const route = PATH[scenario.format];
  // CPU per request of the process under test (issue #17): req/s alone flatters an arm whenever the
  // core running the simulator and the load generator, not the arm's own, is the one that is full.
  const { rps, failed, cpuUs } = await throughput(proc.url, route, headers, body, CONCURRENCY, SECONDS, proc.child.pid);
  const lat = await latency(proc.url, route, headers, body, SEQUENTIAL);
  return { rps, cpuUs, ...lat, failed: failed + lat.failed };
}

const upstream = await start(0, process.execPath, [path.join(DIR, 'upstream.mjs')]);
// Every arm runs as `npm start` runs Junction: with Node 24's young generation on older Nodes too
// (issue #17, YOUNG_GENERATION_FLAG in src/util/gc-settings.ts; a test keeps the two the same),
// so that no arm's ratio comes from a runtime setting another arm could have had. `extra`:
// --expose-gc for scenario 7's fresh processes, whose `live` reading collects first.
const NODE_ARGS = ['--max-semi-space-size=32'];
const startBare = (extra = []) => start(1, process.execPath, [...NODE_ARGS, ...extra, path.join(DIR, 'bare-proxy.mjs'), upstream.url]);
const startJunction = (extra = []) => start(1, process.execPath, [...NODE_ARGS, ...extra, '--import', './bin/register.mjs', path.join(DIR, 'junction-server.ts'), upstream.url, `${SIM},${LONG}`]);
const startPortkey = (extra = []) => start(1, process.execPath, [...NODE_ARGS, ...extra, path.join(DIR, 'peers/portkey-server.mjs')]);
// Issue #17: the least a gateway on the design card's stack must do (floor-server.ts), on the scenarios whose targets it bounds.
const startFloor = (env = {}) => start(1, process.execPath, [...NODE_ARGS, '--import', './bin/register.mjs', path.join(DIR, 'floor-server.ts'), upstream.url], env);
const FLOORED = new Set(['chat-small', 'messages-stream', 'claude-code', 'claude-code-stream']);
// The same floor with streams relayed as the standards require (FLOOR_STREAMS=on: the stream guard,
// the upstream timers and the exact usage tap; issue #17, twentieth session), on the streamed targets.
const STREAM_FLOORED = new Set(['messages-stream', 'claude-code-stream']);
// The same floor keeping the ledger rows the product keeps (FLOOR_LEDGER=rows: Junction's schema and
// statements, the floor's own group commit; issue #17, thirty-second session). On the streamed
// targets it is `floor-streams` keeping those rows (a process of its own, with FLOOR_STREAMS=on
// too; thirty-third session): `floor-streams` writes the floor's narrow rows, which a contended A/B
// put 13 µs a small request below the product's.
const LEDGER_FLOORED = new Set(['chat-small', 'claude-code']);
// Portkey is told per request which provider to speak and where it lives; the client's key rides
// along as the provider key. Same bodies as the other arms (the simulator ignores the model prefix).
// It serves all five scenarios natively (its /v1/messages relays Anthropic streams event by event)
// and the held streams; not scenario 6, local count_tokens being Junction's own. Its stream times
// include a fixed 25 ms sleep before each stream's first event (readStream in its streamHandler).
const portkeyHeaders = (format) => ({
  ...HEADERS[format],
  'x-portkey-provider': format === 'chat' ? 'openai' : 'anthropic',
  'x-portkey-custom-host': `${upstream.url}/v1`,
});
const bare = await startBare();
const junction = await startJunction();
const portkey = PORTKEY && !MEDIA_ONLY ? await startPortkey() : null;
const floor = MEDIA_ONLY ? null : await startFloor();
const floorStreams = MEDIA_ONLY ? null : await startFloor({ FLOOR_STREAMS: 'on' });
const floorLedger = MEDIA_ONLY ? null : await startFloor({ FLOOR_LEDGER: 'rows' });
const floorStreamsLedger = MEDIA_ONLY ? null : await startFloor({ FLOOR_STREAMS: 'on', FLOOR_LEDGER: 'rows' });
const stopAll = () => {
  for (const proc of [junction, bare, portkey, floor, floorStreams, floorLedger, floorStreamsLedger, upstream]) proc?.child.kill('SIGTERM');
};
const results = { rounds: [], countTokens: [], held: [] };
const media = () => mediaScenario({ bare, junction, startBare, startJunction, ask, key: KEY, rounds: ROUNDS, quick: QUICK });
if (MEDIA_ONLY) {
  try {
    results.media = await media();
  } finally {
    stopAll();
  }
  writeMediaReport(results.media, { quick: QUICK, rounds: ROUNDS, pinned, dir: DIR, root: ROOT });
  process.exit(0);
}
try {
  for (let round = 0; round < ROUNDS; round++) {
    const row = {};
    for (const scenario of SCENARIOS.filter((sc) => ONLY === null || ONLY.has(sc.id))) {
      const arms = [
        ['direct', upstream, NATIVE[scenario.format]],
        ['bare', bare, NATIVE[scenario.format]],
        ['native', junction, NATIVE[scenario.format]],
        ...(floor && FLOORED.has(scenario.id) ? [['floor', floor, NATIVE[scenario.format]]] : []),
        ...(floorStreams && STREAM_FLOORED.has(scenario.id) ? [['floor-streams', floorStreams, NATIVE[scenario.format]]] : []),
        ...(floorLedger && LEDGER_FLOORED.has(scenario.id) ? [['floor-ledger', floorLedger, NATIVE[scenario.format]]] : []),
        ...(floorStreamsLedger && STREAM_FLOORED.has(scenario.id) ? [['floor-ledger', floorStreamsLedger, NATIVE[scenario.format]]] : []),
        ...((scenario.foreign ?? FOREIGN[scenario.format]) ? [['translated', junction, scenario.foreign ?? FOREIGN[scenario.format]]] : []),
        ...(portkey && scenario.format !== 'responses' ? [['portkey', portkey, NATIVE[scenario.format], portkeyHeaders(scenario.format)]] : []),
      ];
      // Rotate the order each round so no arm always runs first (warm caches, background load).
      const order = arms.map((_, i) => arms[(i + round) % arms.length]);
      row[scenario.id] = {};
      for (const [arm, proc, prefix, headers] of order) row[scenario.id][arm] = await measure(proc, scenario, prefix, headers);
      process.stderr.write(`round ${round + 1}/${ROUNDS} ${scenario.id} ✓\n`);
    }
    results.rounds.push(row);
    if (ONLY === null) results.countTokens.push(await countTokens());
  }
  if (ONLY !== null) {
    writePartialReport(results, { dir: DIR });
    // process.exit skips the `finally` below: stop the arms here, or they outlive the run (seen:
    // a Node 24 partial run's five servers still up, holding their memory, an hour later).
    stopAll();
    process.exit(0);
  }
  // Each arm in a fresh process, warmed up: RSS freed by earlier work is not returned to the OS,
  // so a process that already served another arm would hide this one's growth.
  const gc = ['--expose-gc'];
  const fresh = { bare: () => startBare(gc), native: () => startJunction(gc), translated: () => startJunction(gc), portkey: () => startPortkey(gc) };
  const heldArms = [['bare', NATIVE.messages], ['native', NATIVE.messages], ['translated', FOREIGN.messages]];
  if (portkey) heldArms.push(['portkey', NATIVE.messages, portkeyHeaders('messages')]);
  for (const [arm, prefix, headers = HEADERS.messages] of heldArms) {
    const proc = await fresh[arm]();
    try {
      await latency(proc.url, PATH.messages, headers, small(`${prefix}${SIM}`, true), 200);
      results.held.push({ arm, ...(await heldStreams(proc, prefix, headers)) });
    } finally {
      proc.child.kill('SIGTERM');
    }
  }
  results.workers = await workersScenario();
  // Issue #16: metrics on against off, both arms on the core under test.
  results.metrics = await metricsOverhead(upstream.url, QUICK ? 2 : ROUNDS + 1, QUICK ? 0.8 : SECONDS, (line) => process.stderr.write(line), (args, env) => start(1, process.execPath, args, env));
  results.media = await media();
  results.bedrockCosts = bedrockCosts();
} finally {
  stopAll();
}
writeMediaReport(results.media, { quick: QUICK, rounds: ROUNDS, pinned, dir: DIR, root: ROOT });
writeReport(results, { portkey: PORTKEY, quick: QUICK, rounds: ROUNDS, concurrency: CONCURRENCY, seconds: SECONDS, sequential: SEQUENTIAL, held: HELD, pinned, dir: DIR, root: ROOT });

/** Issue #15: the Bedrock plugin's SigV4 cost per request and event-stream decoding cost per event, alone. */
function bedrockCosts() {
  const run = spawnSync(process.execPath, ['--import', './bin/register.mjs', path.join(DIR, 'bedrock-costs.ts'), QUICK ? '500' : '4000'], { cwd: ROOT, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`bedrock-costs failed: ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').at(-1));
}

/** Scenario 6: local count_tokens on ~150 KB, and other requests' latency and the event loop meanwhile. */
async function countTokens() {
  const body = big(`o/${SIM}`);
  const route = '/v1/messages/count_tokens';
  const alone = await latency(junction.url, route, HEADERS.messages, body, QUICK ? 30 : 100);
  await ask(junction, 'lag-reset');
  const others = latency(junction.url, PATH.chat, HEADERS.chat, small(`o/${SIM}`, false), QUICK ? 150 : 500);
  const counting = throughput(junction.url, route, HEADERS.messages, body, 4, QUICK ? 1 : 3);
  const [other] = await Promise.all([others, counting]);
  const lag = await ask(junction, 'lag-read');
  return { kb: Math.round(body.length / 1024), p50: alone.p50, p99: alone.p99, otherP99: other.p99, ...lag };
}

/**
 * Issue #7's scenario: `junction serve --workers auto` against `--workers 1`, the real CLI on one
 * ledger file, small Chat requests on a native route. Not pinned: using every core is the point.
 * The load generator and the simulator run on the same cores, as they would on one small machine.
 */
async function workersScenario() {
  const dir = mkdtempSync(path.join(tmpdir(), 'junction-bench-workers-'));
  const file = path.join(dir, 'gateway.yaml');
  writeFileSync(
    file,
    `storage: { url: "sqlite://ledger.db" }
log: { level: warn }
auth: { keys: [{ name: bench, key: "${KEY}", balance_usd: 1000000 }] }
providers: [{ id: openai, plugin: openai, base_url: "${upstream.url}/v1", api_key: sim }]
models: [{ id: "o/${SIM}", routes: [{ provider: openai }], pricing: { input: 3, output: 15 }, max_output_tokens: 4096 }]
`,
  );
  const cluster = (workers) =>
    new Promise((resolve, reject) => {
      // Every core: this runner pinned itself (and so its children) to core 0.
      const argv = [path.join(ROOT, 'bin/junction.js'), 'serve', '--config', file, '--port', '0', '--workers', String(workers)];
      const [bin, args] = pinned ? ['taskset', ['-c', `0-${cpus().length - 1}`, process.execPath, ...argv]] : [process.execPath, argv];
      const child = spawn(bin, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on('data', (d) => {
        err += d;
        const port = /listening on http:\/\/[\d.]+:(\d+)/.exec(err)?.[1];
        if (port) resolve({ child, url: `http://127.0.0.1:${port}` });
      });
      child.once('exit', (code) => reject(new Error(`serve --workers ${workers} exited with ${code}: ${err}`)));
    });
  const count = cpus().length; // what --workers auto finds once unpinned
  const one = await cluster(1);
  const all = await cluster('auto');
  const rounds = [];
  try {
    const body = small(`o/${SIM}`, false);
    for (let round = 0; round < ROUNDS; round++) {
      const row = { workers: count };
      for (const [name, proc] of round % 2 === 0 ? [['one', one], ['auto', all]] : [['auto', all], ['one', one]]) {
        row[name] = (await throughput(proc.url, PATH.chat, HEADERS.chat, body, CONCURRENCY * 2, SECONDS)).rps;
      }
      rounds.push(row);
      process.stderr.write(`workers round ${round + 1}/${ROUNDS} ✓\n`);
    }
  } finally {
    for (const proc of [one, all]) proc.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1000));
    rmSync(dir, { recursive: true, force: true });
  }
  return rounds;
}

/**
 * Scenario 7: RSS per open stream, `HELD` streams at once, read as it always was (no collection
 * first). Then what each stream holds (memory.mjs, `live`): the step in the heap and its external
 * memory, after full collections, from those streams to twice as many. RSS also moves with growth
 * that happens once, whoever holds what (issue #17, nineteenth session); the live step does not.
 */
async function heldStreams(proc, prefix, headers) {
  const body = small(`${prefix}${LONG}`, true);
  const before = (await ask(proc, 'rss')).rss;
  const first = await holdStreams(proc.url, PATH.messages, headers, body, HELD);
  let second;
  let during;
  let live;
  let liveDoubled;
  try {
    await new Promise((r) => setTimeout(r, 2000));
    during = (await ask(proc, 'rss')).rss;
    live = (await ask(proc, 'live')).live;
    second = await holdStreams(proc.url, PATH.messages, headers, body, HELD);
    await new Promise((r) => setTimeout(r, 2000));
    liveDoubled = (await ask(proc, 'live')).live;
  } finally {
    first.close();
    second?.close();
  }
  await new Promise((r) => setTimeout(r, 1500));
  return {
    streams: HELD,
    kbPerStream: (during - before) / 1024 / HELD,
    liveKbPerStream: live === null ? NaN : (liveDoubled - live) / 1024 / HELD,
    rssBeforeMb: before / 1048576,
    rssDuringMb: during / 1048576,
  };
}

export { median };
