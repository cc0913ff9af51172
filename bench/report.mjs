// Turns the runner's raw rounds into medians, ratios against the bare proxy and the targets of
// issue #6, printed and written to bench/RESULTS.md (full runs) and a JSON file.
import { execSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { median } from './load.mjs';

// portkey: the peer column, present only when installed (npm --prefix bench/peers ci).
// floor: the least a gateway on the design card's stack must do (floor-server.ts; issue #17);
// floor-streams: the same, its streams relayed as the standards require (FLOOR_STREAMS=on);
// floor-ledger: the same, keeping the ledger rows the product keeps (FLOOR_LEDGER=rows; on the
// streamed targets floor-streams keeping them, FLOOR_STREAMS=on as well).
const ARMS = ['direct', 'bare', 'floor', 'floor-streams', 'floor-ledger', 'native', 'translated', 'portkey'];
const fmt = (v, digits = 2) => (Number.isFinite(v) ? v.toFixed(digits) : 'n/a');

/** Per scenario and arm: medians over rounds of throughput, latency and added latency (arm − direct, within a round). */
const spread = (values) => {
  const finite = values.filter(Number.isFinite);
  return finite.length === 0 ? [NaN, NaN] : [Math.min(...finite), Math.max(...finite)];
};

export function summarise(rounds) {
  const out = {};
  for (const id of Object.keys(rounds[0])) {
    out[id] = {};
    for (const arm of ARMS.filter((a) => rounds[0][id][a])) {
      const per = rounds.map((r) => r[id][arm]);
      const direct = rounds.map((r) => r[id].direct);
      const bare = rounds.map((r) => r[id].bare);
      out[id][arm] = {
        rps: median(per.map((m) => m.rps)),
        rpsVsBare: median(per.map((m, i) => m.rps / bare[i].rps)),
        p50: median(per.map((m) => m.p50)),
        p99: median(per.map((m) => m.p99)),
        addedP50: median(per.map((m, i) => m.p50 - direct[i].p50)),
        addedP99: median(per.map((m, i) => m.p99 - direct[i].p99)),
        addedTtfbP50: median(per.map((m, i) => m.ttfbP50 - direct[i].ttfbP50)),
        addedVsBare: median(per.map((m, i) => (m.p50 - direct[i].p50) / (bare[i].p50 - direct[i].p50))),
        rpsSpread: [Math.min(...per.map((m) => m.rps)), Math.max(...per.map((m) => m.rps))],
        // CPU per request of the arm's own process, and bare's over the arm's within each round (issue #17).
        cpuUs: median(per.map((m) => m.cpuUs ?? NaN)),
        cpuVsBare: median(per.map((m, i) => (bare[i].cpuUs ?? NaN) / (m.cpuUs ?? NaN))),
        cpuVsBareSpread: spread(per.map((m, i) => (bare[i].cpuUs ?? NaN) / (m.cpuUs ?? NaN))),
        failed: per.reduce((sum, m) => sum + m.failed, 0),
      };
    }
  }
  return out;
}

/**
 * One arm's req/s over another's, taken within each round, then the median: as every ratio here.
 * The translated, Gemini and Bedrock checks once divided the medians instead, which a run whose
 * rounds move 2:1 together can drag far from every round's own ratio (issue #17, twenty-sixth
 * session: Chat→Messages 0.52× by medians, 0.70–0.73× in four rounds of five).
 */
const withinRounds = (rounds, id, arm, base = 'native') => median(rounds.map((r) => r[id][arm].rps / r[id][base].rps));

export function targets(s, countTokens, held, rounds, metrics) {
  const ct = { p99: median(countTokens.map((c) => c.p99)), lag: median(countTokens.map((c) => c.lagP99Ms)) };
  const native = held.find((h) => h.arm === 'native');
  const translated = held.find((h) => h.arm === 'translated');
  return [
    // Issue #17's targets, by CPU per request against the bare proxy within each round.
    ['native CPU ×bare ≥ 0.6 (small Chat)', s['chat-small'].native.cpuVsBare, (v) => v >= 0.6],
    ['native CPU ×bare ≥ 0.6 (Messages stream)', s['messages-stream'].native.cpuVsBare, (v) => v >= 0.6],
    ['native CPU ×bare ≥ 0.75 (76 KB Claude Code request)', s['claude-code'].native.cpuVsBare, (v) => v >= 0.75],
    ['native CPU ×bare ≥ 0.75 (76 KB Claude Code request, streamed)', s['claude-code-stream'].native.cpuVsBare, (v) => v >= 0.75],
    ['native added p50 ≤ 1.5× bare added (small Chat, concurrency 1)', s['chat-small'].native.addedVsBare, (v) => v <= 1.5],
    ...(s['chat-small'].portkey ? [['native ≥ 6× Portkey (small Chat, req/s)', withinRounds(rounds, 'chat-small', 'native', 'portkey'), (v) => v >= 6]] : []),
    ['added TTFB p50 ≤ 1 ms (Messages stream, native), ms', s['messages-stream'].native.addedTtfbP50, (v) => v <= 1],
    ['added TTFB p50 ≤ 1 ms (Chat stream, native), ms', s['chat-stream'].native.addedTtfbP50, (v) => v <= 1],
    ['translated stream ≥ 0.6× native (Messages→Chat)', withinRounds(rounds, 'messages-stream', 'translated'), (v) => v >= 0.6],
    ['translated stream ≥ 0.6× native (Chat→Messages)', withinRounds(rounds, 'chat-stream', 'translated'), (v) => v >= 0.6],
    ...(s['responses-small']
      ? [
          ['Responses native ≥ 0.9× native Chat (small, whole)', median(rounds.map((r) => r['responses-small'].native.rps / r['chat-small'].native.rps)), (v) => v >= 0.9],
          ['Responses native ≥ 0.9× native Chat (stream)', median(rounds.map((r) => r['responses-stream'].native.rps / r['chat-stream'].native.rps)), (v) => v >= 0.9],
          ...(s['responses-stream'].translated
            ? [['translated Responses stream ≥ 0.5× native (Responses→Messages)', withinRounds(rounds, 'responses-stream', 'translated'), (v) => v >= 0.5]]
            : []),
        ]
      : []),
    ...(s['gemini-stream']
      ? [['Gemini stream ≥ 0.5× native Anthropic (Messages client, gemini plugin)', withinRounds(rounds, 'gemini-stream', 'translated'), (v) => v >= 0.5]]
      : []),
    ...(s['bedrock-stream']
      ? [['Bedrock-Anthropic stream ≥ 0.5× native Anthropic (Messages client, bedrock plugin)', withinRounds(rounds, 'bedrock-stream', 'translated'), (v) => v >= 0.5]]
      : []),
    ['RSS per open stream ≤ 64 KB (native), KB', native?.kbPerStream, (v) => v <= 64],
    ['RSS per open stream ≤ 64 KB (translated), KB', translated?.kbPerStream, (v) => v <= 64],
    ['count_tokens 150 KB p99 ≤ 25 ms, ms', ct.p99, (v) => v <= 25],
    ['event-loop lag p99 < 20 ms during count_tokens, ms', ct.lag, (v) => v < 20],
    ...(metrics ? [['metrics on ≥ 0.97× metrics off (small Chat, native)', metrics.median, (v) => v >= 0.97]] : []),
  ].map(([name, value, ok]) => ({ name, value, pass: Number.isFinite(value) && ok(value) }));
}

/** `--only`: the scenarios' rows alone, on stdout and in results-partial.json. */
export function writePartialReport(results, options) {
  const s = summarise(results.rounds);
  const lines = [`${results.rounds.length} round(s), Node ${process.version}`, '', '| scenario | arm | req/s | ×bare | CPU µs/req | CPU ×bare (range) | p50 ms | added p50 ×bare |', '|---|---|---|---|---|---|---|---|'];
  for (const [id, arms] of Object.entries(s)) {
    for (const [arm, m] of Object.entries(arms)) {
      lines.push(`| ${id} | ${arm} | ${fmt(m.rps, 0)} | ${fmt(m.rpsVsBare)} | ${fmt(m.cpuUs, 0)} | ${fmt(m.cpuVsBare)} (${fmt(m.cpuVsBareSpread[0])}–${fmt(m.cpuVsBareSpread[1])}) | ${fmt(m.p50, 3)} | ${arm === 'direct' ? '' : fmt(m.addedVsBare)} |`);
    }
  }
  // Issue #17's peer target, for Junction and for each floor beside it: req/s over Portkey's within each round.
  if (s['chat-small']?.portkey) {
    const overPortkey = ['native', 'floor', 'floor-ledger'].filter((arm) => s['chat-small'][arm]).map((arm) => `${arm} ${fmt(withinRounds(results.rounds, 'chat-small', arm, 'portkey'))}×`);
    lines.push('', `small Chat against Portkey, req/s within rounds: ${overPortkey.join(', ')}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  writeFileSync(path.join(options.dir, 'results-partial.json'), JSON.stringify({ summary: s, rounds: results.rounds }, null, 1));
}

export function writeReport(results, options) {
  const s = summarise(results.rounds);
  const checks = targets(s, results.countTokens, results.held, results.rounds, results.metrics);
  const sha = safe(() => execSync('git rev-parse --short HEAD', { cwd: options.root }).toString().trim());
  const lines = [
    '# Benchmark results',
    '',
    `${new Date().toISOString()} · ${sha} · Node ${process.version} · ${cpus().length} × ${cpus()[0]?.model ?? '?'} · load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
    '',
    `${options.quick ? 'Quick' : 'Full'} run: ${options.rounds} round(s), arms interleaved and rotated per round; throughput at concurrency ${options.concurrency} for ${options.seconds} s; latency over ${options.sequential} sequential requests; ${options.held} streams held open (KB per stream: the step in RSS; live: the step in heap and external memory after full collections, from those streams to twice as many). ${options.pinned ? 'Arms under test pinned to core 1, simulator and load generator to core 0.' : 'Not pinned (no taskset).'} Medians over rounds; ratios taken within each round. Every arm's node runs with \`--max-semi-space-size=32\`, as \`npm start\` runs Junction (issue #17). Arms: direct = the simulator, bare = http-proxy-3 with a keep-alive agent, floor = the least a gateway on the design card's stack must do (\`floor-server.ts\`: Koa and @koa/router, a hashed key, Junction's byte-level body checks, a durable group-committed hold and settlement in SQLite, http-proxy-3, usage read; no timers, failover, limits, metrics or logs; issue #17), floor-streams = the same floor with its streams relayed as the product's standards require, by Junction's own stream guard (whole events, an in-band error on a cut), upstream timers and exact usage tap (on the two streamed targets), floor-ledger = the same floor keeping the holds and ledger rows the product keeps (Junction's schema and statements, written by the floor's own group commit; on the two streamed targets, floor-streams keeping them), native/translated = Junction (auth, ledger, usage accounting on; request log off), ${options.portkey ? `portkey = Portkey's open-source gateway @portkey-ai/gateway ${options.portkey} (peer, headless, as shipped, told the simulator's address per request; its streams wait a fixed 25 ms before their first event)` : 'portkey = not installed, so no peer column'}. The peer is a bench-only install, never a project dependency: \`npm --prefix bench/peers ci\`.`,
    '',
    ...(options.quick ? ['**Quick mode is a smoke test, not a measurement**: one short round, JIT warm-up inside the window. Use a full run for figures.', ''] : []),
    'CPU µs/req is the process under test, every thread (`/proc/<pid>/task/*/schedstat`) over the throughput window; CPU ×bare is bare\'s CPU per request over the arm\'s, within each round, then the median (range). For the direct arm it is the simulator.',
    '',
    '| scenario | arm | req/s | ×bare | CPU µs/req | CPU ×bare | p50 ms | p99 ms | added p50 ms | added ×bare | added TTFB p50 ms | failed |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const [id, arms] of Object.entries(s)) {
    for (const [arm, m] of Object.entries(arms)) {
      const added = arm === 'direct' ? ['', '', ''] : [fmt(m.addedP50, 3), arm === 'bare' ? '1' : fmt(m.addedVsBare), fmt(m.addedTtfbP50, 3)];
      const cpu = arm === 'direct' ? [fmt(m.cpuUs, 0), ''] : [fmt(m.cpuUs, 0), arm === 'bare' ? '1' : `${fmt(m.cpuVsBare)} (${fmt(m.cpuVsBareSpread[0])}–${fmt(m.cpuVsBareSpread[1])})`];
      lines.push(`| ${id} | ${arm} | ${fmt(m.rps, 0)} (${fmt(m.rpsSpread[0], 0)}–${fmt(m.rpsSpread[1], 0)}) | ${fmt(m.rpsVsBare)} | ${cpu.join(' | ')} | ${fmt(m.p50, 3)} | ${fmt(m.p99, 3)} | ${added.join(' | ')} | ${m.failed} |`);
    }
  }
  lines.push('', '| count_tokens (local) | body KB | p50 ms | p99 ms | other requests p99 ms | loop lag p99 ms | loop lag max ms |', '|---|---|---|---|---|---|---|');
  for (const c of results.countTokens) lines.push(`| round | ${c.kb} | ${fmt(c.p50)} | ${fmt(c.p99)} | ${fmt(c.otherP99)} | ${fmt(c.lagP99Ms)} | ${fmt(c.lagMaxMs)} |`);
  lines.push('', '| streams held open | streams | RSS before MB | RSS during MB | KB per stream | live KB per stream |', '|---|---|---|---|---|---|');
  for (const h of results.held) lines.push(`| ${h.arm} | ${h.streams} | ${fmt(h.rssBeforeMb, 1)} | ${fmt(h.rssDuringMb, 1)} | ${fmt(h.kbPerStream, 1)} | ${fmt(h.liveKbPerStream, 1)} |`);
  if (results.workers?.length) {
    const w = results.workers;
    const one = median(w.map((r) => r.one));
    const auto = median(w.map((r) => r.auto));
    lines.push(
      '',
      `| serve --workers (issue #7), small Chat, native, concurrency ${options.concurrency * 2}, not pinned | req/s | ×one worker |`,
      '|---|---|---|',
      `| --workers 1 | ${fmt(one, 0)} | 1 |`,
      `| --workers auto (${w[0].workers}) | ${fmt(auto, 0)} | ${fmt(median(w.map((r) => r.auto / r.one)))} |`,
    );
  }
  if (results.metrics) {
    const m = results.metrics;
    lines.push(
      '',
      `| metrics (issue #16), small Chat, native, concurrency 32 | metrics on req/s | off req/s | on/off |`,
      '|---|---|---|---|',
      ...m.rounds.map((r, i) => `| round ${i + 1} | ${fmt(r.on, 0)} | ${fmt(r.off, 0)} | ${fmt(r.ratio, 3)} |`),
      `| median | | | ${fmt(m.median, 3)} |`,
    );
  }
  if (results.bedrockCosts) {
    const b = results.bedrockCosts;
    lines.push(
      '',
      '| Bedrock plugin costs (issue #15), alone, µs | |',
      '|---|---|',
      `| SigV4 per request, small body | ${fmt(b.signSmallUs, 1)} |`,
      `| SigV4 per request, Claude Code body (${b.claudeCodeKb} KB, hashed) | ${fmt(b.signClaudeCodeUs, 1)} |`,
      `| event-stream decoding per event (frame, CRCs, base64; ${b.eventsPerStream}-event streams in 16 KB reads) | ${fmt(b.decodePerEventUs, 2)} |`,
    );
  }
  lines.push('', '| target | measured | |', '|---|---|---|');
  for (const c of checks) lines.push(`| ${c.name} | ${fmt(c.value)} | ${c.pass ? 'met' : '**missed**'} |`);
  const text = `${lines.join('\n')}\n`;
  process.stdout.write(text);
  const json = JSON.stringify({ summary: s, checks, ...results, options: { ...options, dir: undefined, root: undefined } }, null, 1);
  if (options.quick) {
    writeFileSync(path.join(options.dir, 'results-quick.json'), json);
    return;
  }
  writeFileSync(path.join(options.dir, 'results.json'), json);
  // The generated part of RESULTS.md is replaced; the record of what each fix bought is kept.
  const file = path.join(options.dir, 'RESULTS.md');
  const previous = existsSync(file) ? readFileSync(file, 'utf8') : `${START}\n${END}\n\n## What each fix bought\n`;
  const [before, rest = ''] = previous.split(START);
  const after = rest.includes(END) ? rest.slice(rest.indexOf(END) + END.length) : rest;
  writeFileSync(file, `${before}${START}\n${text}${END}${after}`);
}

const START = '<!-- generated by npm run bench: start -->';
const END = '<!-- generated by npm run bench: end -->';

function safe(fn) {
  try {
    return fn();
  } catch {
    return 'unknown';
  }
}

const MEDIA_START = '<!-- generated by npm run bench (media): start -->';
const MEDIA_END = '<!-- generated by npm run bench (media): end -->';

/** Issue #13's media runs: medians over rounds, ratios within a round, its three targets. */
export function writeMediaReport(media, options) {
  const rounds = media.rounds;
  const up = (arm) => median(rounds.map((r) => r.upload[arm].mbPerS));
  const vsBare = (arm) => median(rounds.map((r) => r.upload[arm].mbPerS / r.upload.bare.mbPerS));
  const failed = (arm) => rounds.reduce((n, r) => n + r.upload[arm].failed, 0);
  const ttfb = (arm) => median(rounds.map((r) => r.speech[arm].ttfbP50));
  const addedTtfb = median(rounds.map((r) => r.speech.junction.ttfbP50 - r.speech.bare.ttfbP50));
  const rss = (arm) => media.rss.find((r) => r.arm === arm);
  const sha = safe(() => execSync('git rev-parse --short HEAD', { cwd: options.root }).toString().trim());
  const checks = [
    ['transcription upload throughput ≥ 0.6× bare (10 MB, streamed)', vsBare('streamed'), (v) => v >= 0.6],
    ['RSS growth per concurrent upload ≤ 256 KB (streamed), KB', rss('streamed')?.kbPerUpload, (v) => v <= 256],
    ['speech first audio byte ≤ 1 ms later than bare (p50), ms', addedTtfb, (v) => v <= 1],
  ].map(([name, value, ok]) => ({ name, value, pass: Number.isFinite(value) && ok(value) }));
  const lines = [
    '## Media (issue #13)',
    '',
    `${new Date().toISOString()} · ${sha} · Node ${process.version} · ${cpus().length} × ${cpus()[0]?.model ?? '?'} · load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
    '',
    `${options.quick ? 'Quick' : 'Full'} run: ${options.rounds} round(s), arms interleaved and rotated per round, ratios within a round, medians. ${options.pinned ? 'Proxies pinned to core 1, simulator and load generator to core 0.' : 'Not pinned.'} Uploads: a 10 MB multipart transcription form, 4 at a time, to a simulator that reads it whole and answers with usage. \`streamed\` sends \`model\` before the file (it flows through as it arrives); \`spooled\` sends it after the file, as the openai SDK does, so Junction keeps the file in a temporary file until it can route. RSS: uploads held open half-sent in a fresh process. Speech: sequential requests for 64 KB of audio in 4 KB chunks; time to the first audio byte.`,
    '',
    '| upload | MB/s | ×bare | failed |',
    '|---|---|---|---|',
    ...['bare', 'streamed', 'spooled'].map((arm) => `| ${arm} | ${fmt(up(arm), 0)} | ${arm === 'bare' ? '1' : fmt(vsBare(arm))} | ${failed(arm)} |`),
    '',
    '| uploads held open | uploads | RSS before MB | RSS during MB | KB per upload |',
    '|---|---|---|---|---|',
    ...media.rss.map((r) => `| ${r.arm} | ${r.uploads} | ${fmt(r.rssBeforeMb, 1)} | ${fmt(r.rssDuringMb, 1)} | ${fmt(r.kbPerUpload, 1)} |`),
    '',
    '| speech | first byte p50 ms | p99 ms (last round) |',
    '|---|---|---|',
    ...['bare', 'junction'].map((arm) => `| ${arm} | ${fmt(ttfb(arm), 3)} | ${fmt(rounds.at(-1).speech[arm].ttfbP99, 3)} |`),
    '',
    '| target | measured | |',
    '|---|---|---|',
    ...checks.map((c) => `| ${c.name} | ${fmt(c.value)} | ${c.pass ? 'met' : '**missed**'} |`),
  ];
  const text = `${lines.join('\n')}\n`;
  process.stdout.write(text);
  const json = JSON.stringify({ checks, ...media }, null, 1);
  if (options.quick) {
    writeFileSync(path.join(options.dir, 'results-media-quick.json'), json);
    return;
  }
  writeFileSync(path.join(options.dir, 'results-media.json'), json);
  const file = path.join(options.dir, 'RESULTS.md');
  const previous = readFileSync(file, 'utf8');
  if (previous.includes(MEDIA_START)) {
    const [before, rest] = previous.split(MEDIA_START);
    writeFileSync(file, `${before}${MEDIA_START}\n${text}${rest.slice(rest.indexOf(MEDIA_END))}`);
  } else {
    const at = previous.indexOf(END) + END.length;
    writeFileSync(file, `${previous.slice(0, at)}\n\n${MEDIA_START}\n${text}${MEDIA_END}${previous.slice(at)}`);
  }
}
