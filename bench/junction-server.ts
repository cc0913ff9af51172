// Arms (c) and (d): Junction itself, with auth, the ledger (SQLite in a WAL file) and usage accounting
// on, request lines off. Each simulator knob set is a model twice: `a/…` routed to an Anthropic
// upstream, `o/…` to a Chat one, so each client format meets a native and a translated route.
// Usage: node --import ./bin/register.mjs bench/junction-server.ts <upstreamUrl> <knob,knob…>
// (as bench/run.mjs starts it: under tsx's own loader, which keeps function names, each closure made
// per request also calls esbuild's `__name`, which showed in a CPU profile of issue #17's twentieth session)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { answerMemory } from './memory.mjs';
import { parseConfig } from '../src/config/load.ts';
import { createGateway } from '../src/gateway.ts';

export const BENCH_KEY = 'sk-jct-bench-0123456789abcdef';
// The Bedrock arm signs with static credentials from the environment: the AWS chain's first link,
// with nothing probed (no profile file, no instance metadata).
Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', AWS_SESSION_TOKEN: 'bench-session', AWS_EC2_METADATA_DISABLED: 'true' });
const [upstream, knobList = 'sim-c64-g0-l0'] = process.argv.slice(2);
const models = knobList
  .split(',')
  .flatMap((knobs) => [
    `  - { id: "a/${knobs}", routes: [{ provider: anthropic }], pricing: { input: 3, output: 15 }, max_output_tokens: 4096 }`,
    `  - { id: "o/${knobs}", routes: [{ provider: openai }], pricing: { input: 3, output: 15 }, max_output_tokens: 4096 }`,
    // Issue #14: a Responses upstream, served natively to Responses clients.
    `  - { id: "r/${knobs}", routes: [{ provider: openai-responses }], pricing: { input: 3, output: 15 }, max_output_tokens: 4096 }`,
    // Issue #15: the gemini plugin's own format, reached from any client by translation.
    `  - { id: "g/${knobs}", routes: [{ provider: gemini }], pricing: { input: 3, output: 15 }, max_output_tokens: 4096 }`,
    // Issue #15: Claude on Bedrock, SigV4-signed, its binary event stream decoded.
    `  - { id: "b/${knobs}", routes: [{ provider: bedrock, model: "anthropic.claude-${knobs}" }], pricing: { input: 3, output: 15 }, max_output_tokens: 4096 }`,
  ])
  .concat([
    // Issue #13's media runs: a transcription model and a speech model on the Chat upstream.
    '  - { id: "whisper-sim", routes: [{ provider: openai }], pricing: { input: 0, output: 0, audio_minute: 0.006 }, input_modalities: [audio], output_modalities: [text] }',
    '  - { id: "tts-sim", routes: [{ provider: openai }], pricing: { input: 0, characters: 15 }, output_modalities: [audio] }',
  ])
  .join('\n');
// A WAL file like the default config's, not an in-memory database: commits cost what they cost.
const dbFile = path.join(mkdtempSync(path.join(tmpdir(), 'junction-bench-')), 'ledger.db');
// Issue #16: JUNCTION_BENCH_METRICS=off measures the gateway without its metrics (they are on by default).
const metrics = process.env['JUNCTION_BENCH_METRICS'] === 'off' ? 'off' : 'admin';
const yaml = `
log: { level: warn }
server: { metrics: ${metrics} }
storage: { url: "sqlite://${dbFile}" }
auth: { keys: [{ name: bench, key: "${BENCH_KEY}", balance_usd: 1000000 }] } # funded: every hold is checked
providers:
  - { id: anthropic, plugin: anthropic, base_url: "${upstream}", api_key: sim }
  - { id: openai, plugin: openai, base_url: "${upstream}/v1", api_key: sim }
  - { id: openai-responses, plugin: openai, base_url: "${upstream}/v1", api_key: sim, options: { formats: [responses] } }
  - { id: gemini, plugin: gemini, base_url: "${upstream}", api_key: sim }
  - { id: bedrock, plugin: bedrock, base_url: "${upstream}", options: { region: us-east-1 } }
models:
${models}
`;
const dir = path.dirname(fileURLToPath(import.meta.url));
const gateway = await createGateway(parseConfig(yaml, path.join(dir, 'bench.yaml'), {}));
const address = await gateway.listen('127.0.0.1', 0);

// The event loop's responsiveness, read by the runner around the count_tokens scenario.
const lag = monitorEventLoopDelay({ resolution: 1 });
// On only while the runner reads it: its 1 ms timer woke this server's loop through all its other
// scenarios too, 0.7 more epoll_pwait per small Chat request at concurrency 1 (strace -c, issue
// #17's eighteenth session), a cost the bare proxy and the floor never paid.
process.on('message', (msg: unknown) => {
  if (msg === 'lag-reset') {
    lag.disable();
    lag.reset();
    lag.enable();
    process.send?.({ ok: true });
  }
  if (msg === 'lag-read') {
    process.send?.({ lagP99Ms: lag.percentile(99) / 1e6, lagMaxMs: lag.max / 1e6 });
    lag.disable();
  }
  answerMemory(msg);
});
process.on('SIGTERM', () =>
  void gateway.close().then(() => {
    rmSync(path.dirname(dbFile), { recursive: true, force: true });
    process.exit(0);
  }),
);
console.log(`PORT ${address.port}`);
