import type { ChatUsage, MessagesUsage } from '../wire.ts';
import type { CanonicalUsage } from '../canonical/answer.ts';

/**
 * Usage between the formats (protocol.md §D.6), through the canonical counts (canonical/answer.ts
 * rule 4). OpenAI's prompt_tokens includes cached tokens; Anthropic's input_tokens excludes both
 * cache reads and cache writes.
 */

export interface MessagesUsageCounts {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

/** A count as the wire gives it: a finite number above zero, else zero. */
export const tokenCount = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

export function canonicalUsageFromChat(usage: Partial<ChatUsage> | null | undefined): CanonicalUsage {
  const details = (usage?.prompt_tokens_details ?? {}) as Record<string, unknown>;
  const cacheRead = tokenCount(details['cached_tokens']);
  const cacheWrite = tokenCount(details['cache_write_tokens']); // OpenRouter
  return {
    input: Math.max(0, tokenCount(usage?.prompt_tokens) - cacheRead - cacheWrite),
    output: tokenCount(usage?.completion_tokens),
    cacheRead,
    cacheWrite,
    reasoning: tokenCount((usage?.completion_tokens_details as Record<string, unknown> | null | undefined)?.['reasoning_tokens']),
  };
}

export function canonicalUsageFromMessages(usage: Partial<MessagesUsage> | null | undefined): CanonicalUsage {
  return {
    input: tokenCount(usage?.input_tokens),
    output: tokenCount(usage?.output_tokens),
    cacheRead: tokenCount(usage?.cache_read_input_tokens),
    cacheWrite: tokenCount(usage?.cache_creation_input_tokens),
    reasoning: tokenCount((usage?.output_tokens_details as Record<string, unknown> | null | undefined)?.['thinking_tokens']),
  };
}

/** Only the counts: the fields another format has no value for are left out, never null (issue #12). */
export function messagesUsageOf(usage: CanonicalUsage): MessagesUsageCounts {
  return { input_tokens: usage.input, output_tokens: usage.output, cache_read_input_tokens: usage.cacheRead, cache_creation_input_tokens: usage.cacheWrite };
}

export function chatUsageOf(usage: CanonicalUsage): ChatUsage {
  const prompt = usage.input + usage.cacheRead + usage.cacheWrite;
  return {
    prompt_tokens: prompt,
    completion_tokens: usage.output,
    total_tokens: prompt + usage.output,
    prompt_tokens_details: { cached_tokens: usage.cacheRead, ...(usage.cacheWrite > 0 && { cache_write_tokens: usage.cacheWrite }) },
    completion_tokens_details: { reasoning_tokens: usage.reasoning },
  };
}
