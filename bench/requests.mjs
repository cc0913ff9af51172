// What the bench scripts send (run.mjs, probe.mjs, idle-gc.mjs): one key, one set of headers and
// one builder per body, so every script's arms send the same bytes for the same scenario.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The key bench/junction-server.ts and the floor accept. */
export const KEY = 'sk-jct-bench-0123456789abcdef';
/** The simulator's default knobs: 64 events, no gap, no latency (bench/upstream.mjs). */
export const SIM = 'sim-c64-g0-l0';

export const HEADERS = {
  messages: { 'content-type': 'application/json', 'x-api-key': KEY, 'anthropic-version': '2023-06-01' },
  chat: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
  responses: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
};
export const PATH = { messages: '/v1/messages', chat: '/v1/chat/completions', responses: '/v1/responses' };

/** The real 76 KB Claude Code request (test/fixtures). */
export const fixture = JSON.parse(readFileSync(path.join(ROOT, 'test/fixtures/claude-code/claude-code-request.json'), 'utf8'));
export const claudeCode = (model, stream) => Buffer.from(JSON.stringify({ ...fixture, model, stream }));
/** A one-word Messages or Chat request (the two share these fields). */
export const small = (model, stream) => Buffer.from(JSON.stringify({ model, max_tokens: 64, stream, messages: [{ role: 'user', content: 'Hi' }] }));
export const smallResponses = (model, stream) => Buffer.from(JSON.stringify({ model, max_output_tokens: 64, stream, input: 'Hi' }));

/**
 * One request per scenario, as [path, body, headers], for the scripts that load a single scenario
 * by name (contended.mjs, instructions.mjs): `o/` routes to the Chat upstream, `a/` to the
 * Anthropic one. The plain names are native (the client's own format); `-translated` ones ask in
 * the other format, so Junction converts both ways (the floor serves native requests only).
 */
export const SCENARIO_REQUESTS = {
  chat: [PATH.chat, small(`o/${SIM}`, false), HEADERS.chat],
  'chat-stream': [PATH.chat, small(`o/${SIM}`, true), HEADERS.chat],
  'messages-stream': [PATH.messages, small(`a/${SIM}`, true), HEADERS.messages],
  'claude-code': [PATH.messages, claudeCode(`a/${SIM}`, false), HEADERS.messages],
  'claude-code-stream': [PATH.messages, claudeCode(`a/${SIM}`, true), HEADERS.messages],
  'messages-stream-translated': [PATH.messages, small(`o/${SIM}`, true), HEADERS.messages],
  'chat-stream-translated': [PATH.chat, small(`a/${SIM}`, true), HEADERS.chat],
};
