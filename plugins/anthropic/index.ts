import { definePlugin, ProviderConfigError } from '../../src/plugin-host/api.ts';
import { httpProviderOptions, lowerCaseKeys, type HttpProviderOptions } from '../shared/options.ts';

const DEFAULT_BASE_URL = 'https://api.anthropic.com';

/**
 * `anthropic`: any upstream that speaks the Anthropic Messages API (api.anthropic.com or a
 * compatible server). Messages and count_tokens go through natively, byte for byte.
 * `base_url` follows the Anthropic SDK's convention: without `/v1`.
 */
export default definePlugin<HttpProviderOptions>({
  name: 'anthropic',
  apiVersion: '^1.0.0',
  optionsSchema: httpProviderOptions,
  create(provider) {
    const base = provider.baseUrl ?? DEFAULT_BASE_URL;
    if (/\/v1$/.test(base)) {
      throw new ProviderConfigError('base_url', `must not end in /v1 (Anthropic SDK convention): use ${base.slice(0, -3)}`);
    }
    return {
      native: {
        endpoints: { messages: `${base}/v1/messages`, count_tokens: `${base}/v1/messages/count_tokens` },
        headers: {
          ...lowerCaseKeys(provider.options.headers),
          ...(provider.apiKey === undefined ? {} : { 'x-api-key': provider.apiKey }),
        },
        forwardHeaders: provider.options.forward_headers?.map((h) => h.toLowerCase()) ?? [],
      },
    };
  },
});
