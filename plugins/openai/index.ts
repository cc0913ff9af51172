import { definePlugin, type ChatDialect } from '../../src/plugin-host/api.ts';
import { chatProviderOptions, lowerCaseKeys, type ChatProviderOptions } from '../shared/options.ts';

const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/** The `reasoning` option names the convention by the vendor that uses it. */
const REASONING_FIELDS = {
  openai: 'reasoning_effort',
  openrouter: 'reasoning_details',
  deepseek: 'reasoning_content',
  none: 'none',
} as const satisfies Record<string, ChatDialect['reasoning']>;

/**
 * `openai`: any upstream that speaks OpenAI Chat Completions (OpenAI, OpenRouter, DeepSeek, Groq,
 * vLLM, Ollama…), and the Responses API where `options.formats` says so (issue #14). The formats it
 * speaks, embeddings, images and audio go through natively, byte for byte; the others are
 * translated by the core, in the dialect the options describe. `base_url` follows the OpenAI
 * SDK's convention: it includes `/v1` (or the vendor's equivalent prefix).
 */
export default definePlugin<ChatProviderOptions>({
  name: 'openai',
  apiVersion: '^1.0.0',
  optionsSchema: chatProviderOptions,
  create(provider) {
    const base = provider.baseUrl ?? DEFAULT_BASE_URL;
    const url = `${base}/chat/completions`;
    const headers = {
      ...lowerCaseKeys(provider.options.headers),
      ...(provider.apiKey === undefined ? {} : { authorization: `Bearer ${provider.apiKey}` }),
    };
    const { reasoning, max_tokens_field, top_k, cache_control, pdf, formats = ['chat_completions'] } = provider.options;
    const chat = formats.includes('chat_completions');
    const dialect: Partial<ChatDialect> = {
      ...(reasoning && { reasoning: REASONING_FIELDS[reasoning] }),
      ...(max_tokens_field && { maxTokensField: max_tokens_field }),
      ...(top_k !== undefined && { topK: top_k }),
      ...(cache_control !== undefined && { cacheControl: cache_control }),
      ...(pdf && { pdf }),
    };
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
        forwardHeaders: provider.options.forward_headers?.map((h) => h.toLowerCase()) ?? [],
      },
      // What the upstream does not speak is translated: to Chat Completions when it has it (the
      // Responses API too, when it has not that), else to the Responses API (a Responses-only model).
      translate: chat
        ? { upstream: 'chat', endpoints: formats.includes('responses') ? ['messages'] : ['messages', 'responses'], dialect, request: (body) => ({ url, headers, body }) }
        : { upstream: 'responses', endpoints: ['messages', 'chat_completions'], request: (body) => ({ url: `${base}/responses`, headers, body }) },
    };
  },
});
