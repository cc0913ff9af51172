import { definePlugin, ProviderConfigError } from '../../src/plugin-host/api.ts';
import { azureProviderOptions, lowerCaseKeys, type AzureProviderOptions } from '../shared/options.ts';
import { chatDialectOf, openaiUpstream } from '../shared/openai-upstream.ts';

/**
 * `azure`: Azure OpenAI (issue #15; providers.md §4). The key goes as `api-key`. A route's `model`
 * is the deployment name.
 * - The v1 API (the default): `base_url` is the whole `https://{resource}.openai.azure.com/openai/v1`
 *   prefix, and Azure speaks OpenAI's API under it: Chat Completions and the Responses API natively
 *   (both by default; `options.formats` narrows it), embeddings, images and audio too, Messages
 *   requests translated. Content-filter fields and errors pass through as Azure sends them.
 * - With `options.api_version`, the older deployment URLs: `base_url` is the resource,
 *   `https://{resource}.openai.azure.com`, and every text request goes to
 *   `/openai/deployments/{deployment}/chat/completions?api-version=…` (the deployment is in the
 *   path, so Chat clients too go through the core, their bodies unchanged but the model).
 * Claude on Azure AI Foundry speaks Messages: it is the `anthropic` plugin's (docs/configuration.md, "Azure").
 */
export default definePlugin<AzureProviderOptions>({
  name: 'azure',
  apiVersion: '^1.4.0',
  optionsSchema: azureProviderOptions,
  create(provider) {
    const base = provider.baseUrl;
    const { api_version: apiVersion } = provider.options;
    if (base === undefined) {
      throw new ProviderConfigError('base_url', apiVersion ? 'the resource URL, e.g. https://my-resource.openai.azure.com' : 'the v1 API prefix, e.g. https://my-resource.openai.azure.com/openai/v1');
    }
    if (apiVersion && /\/openai(\/v1)?$/.test(base)) {
      throw new ProviderConfigError('base_url', 'with options.api_version, the resource URL alone (https://my-resource.openai.azure.com): the deployment path is added');
    }
    if (!apiVersion && !/\/v1$/.test(base)) {
      throw new ProviderConfigError('base_url', 'the v1 API prefix ends in /openai/v1 (https://my-resource.openai.azure.com/openai/v1); for the dated deployment URLs set options.api_version');
    }
    // Older versions refuse stream_options (always sent, for usage) and max_completion_tokens
    // (providers.md §4.1): 2024-10-21 is the first GA version that takes both.
    if (apiVersion && apiVersion < '2024-10-21') {
      throw new ProviderConfigError('options.api_version', `${apiVersion} refuses stream_options, which Junction sends to read usage; use 2024-10-21 or later`);
    }
    const headers = {
      ...lowerCaseKeys(provider.options.headers),
      ...(provider.apiKey === undefined ? {} : { 'api-key': provider.apiKey }),
    };
    if (!apiVersion) return openaiUpstream(base, headers, provider.options, provider.options.formats ?? ['chat_completions', 'responses']);
    const deploymentUrl = (deployment: unknown): string =>
      `${base}/openai/deployments/${encodeURIComponent(String(deployment))}/chat/completions?api-version=${encodeURIComponent(apiVersion)}`;
    return {
      translate: {
        upstream: 'chat',
        endpoints: ['chat_completions', 'messages', 'responses'],
        dialect: chatDialectOf(provider.options),
        request: (body) => ({ url: deploymentUrl(body.model), headers, body }),
      },
    };
  },
});
