import { definePlugin } from '../../src/plugin-host/api.ts';
import { chatProviderOptions, lowerCaseKeys, type ChatProviderOptions } from '../shared/options.ts';
import { openaiUpstream } from '../shared/openai-upstream.ts';

const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/**
 * `openai`: any upstream that speaks OpenAI Chat Completions (OpenAI, OpenRouter, DeepSeek, Groq,
 * vLLM, Ollama…), and the Responses API where `options.formats` says so (issue #14). The formats it
 * speaks, embeddings, images and audio go through natively, byte for byte; the others are
 * translated by the core, in the dialect the options describe. `base_url` follows the OpenAI
 * SDK's convention: it includes `/v1` (or the vendor's equivalent prefix).
 */
export default definePlugin<ChatProviderOptions>({
  name: 'openai',
  // The `responses` translator and formats came with 1.4.0.
  apiVersion: '^1.4.0',
  optionsSchema: chatProviderOptions,
  create(provider) {
    const headers = {
      ...lowerCaseKeys(provider.options.headers),
      ...(provider.apiKey === undefined ? {} : { authorization: `Bearer ${provider.apiKey}` }),
    };
    return openaiUpstream(provider.baseUrl ?? DEFAULT_BASE_URL, headers, provider.options, provider.options.formats ?? ['chat_completions']);
  },
});
