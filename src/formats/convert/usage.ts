import type { ChatUsage, MessagesUsage } from '../wire.ts';

/**
 * Usage between the formats (protocol.md §D.6). OpenAI's prompt_tokens includes cached tokens;
 * Anthropic's input_tokens excludes both cache reads and cache writes.
 */

export interface MessagesUsageCounts {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

export function messagesUsageFromChat(usage: Partial<ChatUsage> | null | undefined): MessagesUsageCounts {
  const details = (usage?.prompt_tokens_details ?? {}) as Record<string, unknown>;
  const cacheRead = num(details['cached_tokens']);
  const cacheWrite = num(details['cache_write_tokens']); // OpenRouter
  return {
    input_tokens: Math.max(0, num(usage?.prompt_tokens) - cacheRead - cacheWrite),
    output_tokens: num(usage?.completion_tokens),
    cache_read_input_tokens: cacheRead,
    cache_creation_input_tokens: cacheWrite,
  };
}

export function chatUsageFromMessages(usage: Partial<MessagesUsage> | null | undefined): ChatUsage {
  const input = num(usage?.input_tokens);
  const cacheRead = num(usage?.cache_read_input_tokens);
  const cacheWrite = num(usage?.cache_creation_input_tokens);
  const output = num(usage?.output_tokens);
  const prompt = input + cacheRead + cacheWrite;
  const thinking = num((usage?.output_tokens_details as Record<string, unknown> | null | undefined)?.['thinking_tokens']);
  return {
    prompt_tokens: prompt,
    completion_tokens: output,
    total_tokens: prompt + output,
    prompt_tokens_details: { cached_tokens: cacheRead, ...(cacheWrite > 0 && { cache_write_tokens: cacheWrite }) },
    completion_tokens_details: { reasoning_tokens: thinking },
  };
}
