import { randomUUID } from 'node:crypto';
import { UpstreamError, type CanonicalBlock, type CanonicalStop, type CanonicalUsage } from '../../src/plugin-host/api.ts';
import type { SignatureStore } from './signatures.ts';

import { obj, type Json } from '../shared/json.ts';
const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

const REFUSALS = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'LANGUAGE']);

/** A finish reason as a stop (providers.md §3.5): `STOP` with calls is a tool use. */
export function stopOf(finish: unknown, called: boolean): CanonicalStop {
  if (called) return 'tool_use';
  if (finish === 'MAX_TOKENS') return 'max_tokens';
  if (typeof finish === 'string' && REFUSALS.has(finish)) return 'refusal';
  return 'end_turn';
}

/** `promptTokenCount` includes the cached tokens; `candidatesTokenCount` excludes the thoughts. */
export function usageOf(metadata: unknown): CanonicalUsage {
  const usage = obj(metadata);
  const prompt = num(usage['promptTokenCount']);
  const cached = Math.min(prompt, num(usage['cachedContentTokenCount']));
  const thoughts = num(usage['thoughtsTokenCount']);
  return { input: prompt - cached, output: num(usage['candidatesTokenCount']) + thoughts, cacheRead: cached, cacheWrite: 0, reasoning: thoughts };
}

/** A function call's id: Gemini's when it sent one (it often does not), else a fresh one. */
export function callIdOf(call: Json): string {
  return typeof call['id'] === 'string' && call['id'] !== '' ? call['id'] : `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
}

/** A prompt Gemini blocked, said as a refusal rather than an empty answer. */
export function blockedText(body: Json): string | undefined {
  const reason = obj(body['promptFeedback'])['blockReason'];
  return typeof reason === 'string' ? `The request was blocked by Gemini's safety system (${reason}).` : undefined;
}

/**
 * Gemini gave up on a function call it was forming (providers.md §3.5): with nothing else said, an
 * empty end_turn would read as success, so it is the upstream's failure (a 502 that can fail over,
 * in-band once a stream has started).
 */
const CALL_FAILURES = new Set(['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL', 'TOO_MANY_TOOL_CALLS']);
export function callFailure(finish: unknown, said: boolean): UpstreamError | undefined {
  if (said || typeof finish !== 'string' || !CALL_FAILURES.has(finish)) return undefined;
  return new UpstreamError(502, `Gemini ended the turn with ${finish}: the model could not form its function call`);
}

/** A Gemini error (a bare `{"error": …}` chunk, or an answer that is one) with its HTTP status. */
export function reportedError(error: Json): UpstreamError {
  const code = typeof error['code'] === 'number' ? error['code'] : 502;
  return new UpstreamError(code, String(error['message'] ?? 'Gemini reported an error'));
}

/** A whole answer's first candidate as canonical blocks; function calls' signatures are kept. */
export function decodeGeminiAnswer(body: Json, signatures: SignatureStore, model: string): { blocks: CanonicalBlock[]; stop: CanonicalStop; usage: CanonicalUsage } {
  const candidate = obj((body['candidates'] as unknown[] | undefined)?.[0]);
  const blocks: CanonicalBlock[] = [];
  const blocked = blockedText(body);
  if (blocked !== undefined) return { blocks: [{ type: 'refusal', text: blocked }], stop: 'refusal', usage: usageOf(body['usageMetadata']) };
  for (const raw of (obj(candidate['content'])['parts'] as unknown[] | undefined) ?? []) {
    const part = obj(raw);
    if (part['functionCall'] !== undefined) {
      const call = obj(part['functionCall']);
      const id = callIdOf(call);
      if (typeof part['thoughtSignature'] === 'string') signatures.remember(model, id, part['thoughtSignature']);
      blocks.push({ type: 'tool_call', id, name: String(call['name'] ?? ''), arguments: JSON.stringify(call['args'] ?? {}) });
    } else if (typeof part['text'] === 'string' && part['text'] !== '') {
      const last = blocks.at(-1);
      const kind = part['thought'] === true ? 'reasoning' : 'text';
      if (last?.type === kind) blocks[blocks.length - 1] = { ...last, text: last.text + part['text'] };
      else blocks.push(kind === 'reasoning' ? { type: 'reasoning', text: part['text'] } : { type: 'text', text: part['text'] });
    }
  }
  const called = blocks.some((b) => b.type === 'tool_call');
  const failure = callFailure(candidate['finishReason'], blocks.length > 0);
  if (failure) throw failure;
  return { blocks, stop: stopOf(candidate['finishReason'], called), usage: usageOf(body['usageMetadata']) };
}
