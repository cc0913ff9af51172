import type { CanonicalAnswer, CanonicalBlock, CanonicalStop, CanonicalUsage } from '../../src/plugin-host/api.ts';
import type { ConverseState } from './converse-request.ts';
import { obj, type Json } from '../shared/json.ts';

const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/** Converse's stop reasons as canonical ones (providers.md §1.5). */
export function stopOf(reason: unknown, state: ConverseState): CanonicalStop {
  switch (reason) {
    case 'tool_use':
      return state.jsonTool ? 'end_turn' : 'tool_use';
    case 'max_tokens':
      return 'max_tokens';
    case 'stop_sequence':
      return 'stop_sequence';
    case 'guardrail_intervened':
    case 'content_filtered':
      return 'refusal';
    case 'model_context_window_exceeded':
      return 'model_context_window_exceeded';
    default:
      return 'end_turn';
  }
}

/** Converse usage: `inputTokens` excludes cache reads and writes, as Junction's `input` does. */
export function usageOf(usage: unknown): CanonicalUsage {
  const u = obj(usage);
  return { input: num(u['inputTokens']), output: num(u['outputTokens']), cacheRead: num(u['cacheReadInputTokens']), cacheWrite: num(u['cacheWriteInputTokens']), reasoning: 0 };
}

/** A Converse content block as canonical blocks: the JSON tool's input is the answer's text. */
export function blockOf(block: Json, state: ConverseState): CanonicalBlock[] {
  if (typeof block['text'] === 'string') return [{ type: 'text', text: block['text'] }];
  const reasoning = obj(block['reasoningContent']);
  if (typeof reasoning['redactedContent'] === 'string') return [{ type: 'opaque_reasoning', data: reasoning['redactedContent'] }];
  const text = obj(reasoning['reasoningText']);
  if (typeof text['text'] === 'string') return [{ type: 'reasoning', text: text['text'], ...(typeof text['signature'] === 'string' && { signature: text['signature'] }) }];
  const use = obj(block['toolUse']);
  if (typeof use['name'] === 'string') {
    const args = JSON.stringify(use['input'] ?? {});
    if (use['name'] === state.jsonTool) return [{ type: 'text', text: args }];
    return [{ type: 'tool_call', id: String(use['toolUseId'] ?? ''), name: state.names.get(use['name']) ?? use['name'], arguments: args }];
  }
  return [];
}

export function decodeConverseAnswer(body: Json, state: ConverseState): CanonicalAnswer {
  const content = (obj(obj(body['output'])['message'])['content'] as unknown[] | undefined) ?? [];
  return {
    id: undefined,
    model: '',
    blocks: content.flatMap((block) => blockOf(obj(block), state)),
    stop: stopOf(body['stopReason'], state),
    stopSequence: typeof obj(body['additionalModelResponseFields'])['stop_sequence'] === 'string' ? String(obj(body['additionalModelResponseFields'])['stop_sequence']) : undefined,
    usage: usageOf(body['usage']),
  };
}
