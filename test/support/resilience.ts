import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { FIXTURES, type Reply } from './fake-upstream.ts';
import { CHAT_HEADERS, KEYS, MESSAGES_HEADERS } from './gateway.ts';

/**
 * Shared pieces of the resilience suites (issue #5): a config with short timers, and the ways a
 * request meets an upstream: Messages and Chat clients each on a native and a translated route,
 * and Responses clients on both translated routes (issue #14).
 */

export const TIMERS = { firstByteMs: 700, idleMs: 600, keepaliveMs: 150 } as const;

export function resilienceConfig(url: string, routing = 'retries: 1, backoff_ms: 20, max_retry_after_s: 3, circuit_breaker: { failures: 1000 }'): string {
  const timeouts = `timeouts: { first_byte_ms: ${TIMERS.firstByteMs}, idle_ms: ${TIMERS.idleMs} }`;
  return `
log: { level: info }
server: { keepalive_s: ${TIMERS.keepaliveMs / 1000} }
routing: { ${routing} }
auth:
  keys:
    - { name: alice, key: "${KEYS.alice}", balance_usd: 100 }
providers:
  - { id: anthropic, plugin: anthropic, base_url: "${url}", api_key: sk-ant-test, ${timeouts} }
  - { id: openai, plugin: openai, base_url: "${url}/v1", api_key: sk-oai-test, ${timeouts} }
models:
  - { id: claude-x, routes: [{ provider: anthropic }], pricing: { input: 3, output: 15 } }
  - { id: gpt-x, routes: [{ provider: openai }], pricing: { input: 2.5, output: 10 } }
  # A native route with a translated fallback, for each client format.
  - { id: claude-fb, routes: [{ provider: anthropic, model: primary }, { provider: openai, model: backup }], pricing: { input: 3, output: 15 } }
  - { id: gpt-fb, routes: [{ provider: openai, model: primary }, { provider: anthropic, model: backup }], pricing: { input: 2.5, output: 10 } }
`;
}

export interface Combo {
  readonly name: string;
  readonly surface: 'messages' | 'chat' | 'responses';
  readonly model: string;
  /** The upstream's format. */
  readonly upstream: 'messages' | 'chat';
}

export const COMBOS: readonly Combo[] = [
  { name: 'Messages client, native route', surface: 'messages', model: 'claude-x', upstream: 'messages' },
  { name: 'Messages client, Chat upstream', surface: 'messages', model: 'gpt-x', upstream: 'chat' },
  { name: 'Chat client, native route', surface: 'chat', model: 'gpt-x', upstream: 'chat' },
  { name: 'Chat client, Messages upstream', surface: 'chat', model: 'claude-x', upstream: 'messages' },
  { name: 'Responses client, Messages upstream', surface: 'responses', model: 'claude-x', upstream: 'messages' },
  { name: 'Responses client, Chat upstream', surface: 'responses', model: 'gpt-x', upstream: 'chat' },
];

/** A healthy recorded stream in the upstream's format. */
export const streamOf = (format: 'messages' | 'chat'): string => (format === 'messages' ? FIXTURES.anthropicTextSse() : FIXTURES.openaiTextSse());

/** An upstream error body in the upstream's own format. */
export function errorReply(format: 'messages' | 'chat', status: number, headers: Record<string, string> = {}): Reply {
  const type = status === 429 ? 'rate_limit_error' : status === 529 ? 'overloaded_error' : 'api_error';
  const body =
    format === 'messages'
      ? { type: 'error', error: { type, message: `upstream says ${status}` } }
      : { error: { message: `upstream says ${status}`, type: status === 429 ? 'rate_limit_exceeded' : 'server_error', code: null } };
  return { status, headers, body };
}

/** An in-band error event after the stream began, in the upstream's format. */
export function inBandErrorStream(format: 'messages' | 'chat'): string {
  const events = streamOf(format).split(/(?<=\n\n)/).slice(0, 3).join('');
  return format === 'messages'
    ? `${events}event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n`
    : `${events}data: {"error":{"message":"Overloaded","code":529}}\n\n`;
}

/** A stream whose fourth event is cut-off JSON. */
export function malformedStream(format: 'messages' | 'chat'): string {
  const events = streamOf(format).split(/(?<=\n\n)/);
  const bad = format === 'messages' ? 'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": {"ty\n\n' : 'data: {"id":"x","choices":[{"delta":{"cont\n\n';
  return [...events.slice(0, 3), bad, ...events.slice(3)].join('');
}

export function requestBody(combo: Combo, stream: boolean, model = combo.model): Record<string, unknown> {
  if (combo.surface === 'responses') return { model, max_output_tokens: 64, stream, input: 'hi', store: false };
  return { model, max_tokens: 64, stream, messages: [{ role: 'user', content: 'hi' }] };
}

export function pathOf(combo: Combo): string {
  return { messages: '/v1/messages', chat: '/v1/chat/completions', responses: '/v1/responses' }[combo.surface];
}

export function headersOf(combo: Combo): Record<string, string> {
  return { 'content-type': 'application/json', ...(combo.surface === 'messages' ? MESSAGES_HEADERS : CHAT_HEADERS) };
}

/** A raw request: the status, the whole body as text, and how long it took. */
export async function rawCall(base: string, combo: Combo, stream: boolean, model?: string): Promise<{ status: number; headers: Headers; text: string; ms: number }> {
  const start = performance.now();
  const res = await fetch(`${base}${pathOf(combo)}`, { method: 'POST', headers: headersOf(combo), body: JSON.stringify(requestBody(combo, stream, model)) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, ms: performance.now() - start };
}

/** Runs a stream to its end through the combo's official SDK accumulator; resolves with the text or the error it raised. */
export async function sdkStream(base: string, combo: Combo, model?: string): Promise<{ ok: true; text: string } | { ok: false; error: Error }> {
  try {
    if (combo.surface === 'messages') {
      const client = new Anthropic({ baseURL: base, apiKey: KEYS.alice, maxRetries: 0 });
      const message = await client.messages.stream({ model: model ?? combo.model, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
      return { ok: true, text: message.content.map((b) => (b.type === 'text' ? b.text : '')).join('') };
    }
    const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: KEYS.alice, maxRetries: 0 });
    if (combo.surface === 'responses') {
      const response = await client.responses.stream({ model: model ?? combo.model, input: 'hi', store: false }).finalResponse();
      return { ok: true, text: response.output_text };
    }
    const completion = await client.chat.completions.stream({ model: model ?? combo.model, messages: [{ role: 'user', content: 'hi' }] }).finalChatCompletion();
    return { ok: true, text: completion.choices[0]?.message.content ?? '' };
  } catch (error) {
    return { ok: false, error: error as Error };
  }
}

/** What a complete stream in the caller's format contains. */
export function cleanEndOf(combo: Combo): string {
  return { messages: 'event: message_stop', chat: 'data: [DONE]', responses: 'event: response.completed' }[combo.surface];
}

/** True when a raw stream ended in the caller's in-band error and never claimed success. */
export function endsInBandError(combo: Combo, text: string): boolean {
  const lastEvent = text.trimEnd().split(/\n\n/).at(-1) ?? '';
  if (combo.surface === 'responses') return !text.includes('event: response.completed') && lastEvent.startsWith('event: response.failed\n');
  const clean = combo.surface === 'messages' ? text.includes('event: message_stop') : text.includes('data: [DONE]');
  return !clean && (combo.surface === 'messages' ? lastEvent.startsWith('event: error\ndata: {"type":"error"') : lastEvent.startsWith('data: {"error":'));
}
