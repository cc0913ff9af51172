import { definePlugin, ProviderConfigError } from '../../src/plugin-host/api.ts';
import { lowerCaseKeys, messagesProviderOptions, type MessagesProviderOptions } from '../shared/options.ts';

const DEFAULT_BASE_URL = 'https://api.anthropic.com';
/** The version translated requests are written against (protocol.md §A.1). */
const API_VERSION = '2023-06-01';

/**
 * `anthropic`: any upstream that speaks the Anthropic Messages API (api.anthropic.com or a
 * compatible server). Messages and count_tokens go through natively, byte for byte; Chat
 * Completions requests are translated by the core. `base_url` follows the Anthropic SDK's
 * convention: without `/v1`.
 */
export default definePlugin<MessagesProviderOptions>({
  name: 'anthropic',
  apiVersion: '^1.0.0',
  optionsSchema: messagesProviderOptions,
  create(provider) {
    const base = provider.baseUrl ?? DEFAULT_BASE_URL;
    if (/\/v1$/.test(base)) {
      throw new ProviderConfigError('base_url', `must not end in /v1 (Anthropic SDK convention): use ${base.slice(0, -3)}`);
    }
    const headers = {
      ...lowerCaseKeys(provider.options.headers),
      ...(provider.apiKey === undefined ? {} : { 'x-api-key': provider.apiKey }),
    };
    const defaultMaxTokens = provider.options.default_max_tokens;
    return {
      native: {
        endpoints: { messages: `${base}/v1/messages`, count_tokens: `${base}/v1/messages/count_tokens` },
        headers,
        forwardHeaders: provider.options.forward_headers?.map((h) => h.toLowerCase()) ?? [],
      },
      translate: {
        upstream: 'messages',
        endpoints: ['chat_completions', 'responses'],
        dialect: defaultMaxTokens === undefined ? {} : { defaultMaxTokens },
        request: (body) => ({ url: `${base}/v1/messages`, headers: { ...headers, 'anthropic-version': API_VERSION }, body }),
      },
    };
  },
});
