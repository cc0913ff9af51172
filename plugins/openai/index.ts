import { definePlugin } from '../../src/plugin-host/api.ts';
import { httpProviderOptions, lowerCaseKeys, type HttpProviderOptions } from '../shared/options.ts';

const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/**
 * `openai`: any upstream that speaks OpenAI Chat Completions (OpenAI, OpenRouter, DeepSeek, Groq,
 * vLLM, Ollama…). Chat Completions go through natively, byte for byte. `base_url` follows the
 * OpenAI SDK's convention: it includes `/v1` (or the vendor's equivalent prefix).
 */
export default definePlugin<HttpProviderOptions>({
  name: 'openai',
  apiVersion: '^1.0.0',
  optionsSchema: httpProviderOptions,
  create(provider) {
    const base = provider.baseUrl ?? DEFAULT_BASE_URL;
    return {
      native: {
        endpoints: { chat_completions: `${base}/chat/completions` },
        headers: {
          ...lowerCaseKeys(provider.options.headers),
          ...(provider.apiKey === undefined ? {} : { authorization: `Bearer ${provider.apiKey}` }),
        },
        forwardHeaders: provider.options.forward_headers?.map((h) => h.toLowerCase()) ?? [],
      },
    };
  },
});
