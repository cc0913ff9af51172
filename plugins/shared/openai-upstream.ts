import type { ChatDialect, ProviderPlugin } from '../../src/plugin-host/api.ts';
import type { ChatProviderOptions } from './options.ts';

/** The `reasoning` option names the convention by the vendor that uses it. */
const REASONING_FIELDS = {
  openai: 'reasoning_effort',
  openrouter: 'reasoning_details',
  deepseek: 'reasoning_content',
  none: 'none',
} as const satisfies Record<string, ChatDialect['reasoning']>;

/** The Chat dialect the options describe, for requests translated to Chat Completions. */
export function chatDialectOf(options: ChatProviderOptions): Partial<ChatDialect> {
  const { reasoning, max_tokens_field, top_k, cache_control, pdf } = options;
  return {
    ...(reasoning && { reasoning: REASONING_FIELDS[reasoning] }),
    ...(max_tokens_field && { maxTokensField: max_tokens_field }),
    ...(top_k !== undefined && { topK: top_k }),
    ...(cache_control !== undefined && { cacheControl: cache_control }),
    ...(pdf && { pdf }),
  };
}

/**
 * An upstream with OpenAI's API under `base` (which includes `/v1` or the vendor's equivalent):
 * the formats it speaks, embeddings, images and audio natively, byte for byte; the other text
 * formats translated, to Chat Completions when it has it, else to the Responses API (issue #14).
 * Shared by the `openai` and `azure` plugins, which differ in how they authenticate.
 */
export function openaiUpstream(base: string, headers: Readonly<Record<string, string>>, options: ChatProviderOptions, formats: readonly ('chat_completions' | 'responses')[]): ProviderPlugin {
  const url = `${base}/chat/completions`;
  const chat = formats.includes('chat_completions');
  return {
    native: {
      endpoints: {
        ...(chat && { chat_completions: url }),
        ...(formats.includes('responses') && { responses: `${base}/responses`, responses_input_tokens: `${base}/responses/input_tokens` }),
        embeddings: `${base}/embeddings`,
        images_generations: `${base}/images/generations`,
        images_edits: `${base}/images/edits`,
        audio_speech: `${base}/audio/speech`,
        audio_transcriptions: `${base}/audio/transcriptions`,
        audio_translations: `${base}/audio/translations`,
      },
      headers,
      forwardHeaders: options.forward_headers?.map((h) => h.toLowerCase()) ?? [],
    },
    translate: chat
      ? { upstream: 'chat', endpoints: formats.includes('responses') ? ['messages'] : ['messages', 'responses'], dialect: chatDialectOf(options), request: (body) => ({ url, headers, body }) }
      : { upstream: 'responses', endpoints: ['messages', 'chat_completions'], request: (body) => ({ url: `${base}/responses`, headers, body }) },
  };
}
