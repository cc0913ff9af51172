import { isObject, type Json } from './json.ts';

/**
 * Reasoning state from non-Anthropic models (Gemini's thought signatures, OpenAI's encrypted
 * reasoning, via OpenRouter) must go back to the upstream unchanged on the next turn, or tool
 * turns fail (peers.md §2 #10). A Messages client echoes a thinking block's signature and a
 * redacted_thinking block's data without looking inside, so the original reasoning_details item
 * travels there, marked so it is never mistaken for (or sent to) Anthropic as a real signature.
 */
const PREFIX = 'junction.reasoning.v1:';

export function wrapReasoningDetail(item: Json): string {
  return PREFIX + Buffer.from(JSON.stringify(item)).toString('base64url');
}

/** The original item, or undefined when the value is not one of ours (a real Anthropic signature). */
export function unwrapReasoningDetail(value: unknown): Json | undefined {
  if (typeof value !== 'string' || !value.startsWith(PREFIX)) return undefined;
  try {
    const item: unknown = JSON.parse(Buffer.from(value.slice(PREFIX.length), 'base64url').toString('utf8'));
    return isObject(item) ? item : undefined;
  } catch {
    return undefined;
  }
}
