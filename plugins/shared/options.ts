import { z } from 'zod';

/** Options every HTTP provider plugin accepts under `providers[].options`. */
const common = {
  /** Fixed headers sent upstream on every request (e.g. OpenRouter's HTTP-Referer and X-Title). */
  headers: z.record(z.string(), z.string()).optional(),
  /** Extra client request headers to forward upstream on native routes, by name. */
  forward_headers: z.array(z.string().min(1)).optional(),
};

/** A Chat Completions upstream: its dialect, for requests translated from Messages (issue #3). */
export const chatProviderOptions = z
  .strictObject({
    ...common,
    reasoning: z.enum(['openai', 'openrouter', 'deepseek', 'none']).optional(),
    max_tokens_field: z.enum(['max_tokens', 'max_completion_tokens']).optional(),
    top_k: z.boolean().optional(),
    cache_control: z.boolean().optional(),
    pdf: z.enum(['file', 'text']).optional(),
    /**
     * The OpenAI formats the upstream speaks (issue #14): Chat Completions, the Responses API or
     * both. A Responses-only model sits behind `[responses]`.
     */
    formats: z.array(z.enum(['chat_completions', 'responses'])).min(1).optional(),
  })
  .default({});

/**
 * Azure OpenAI (issue #15): a Chat upstream's options, plus `api_version` for the older
 * deployment URLs (`/openai/deployments/{deployment}/…?api-version=…`) instead of the v1 API.
 */
export const azureProviderOptions = z
  .strictObject({
    ...chatProviderOptions.unwrap().shape,
    api_version: z.string().regex(/^[0-9]{4}-[0-9]{2}-[0-9]{2}(-preview)?$/, 'a dated API version, e.g. 2024-10-21 or 2025-04-01-preview').optional(),
  })
  .default({});

/** A Messages upstream, for requests translated from Chat Completions. */
export const messagesProviderOptions = z
  .strictObject({ ...common, default_max_tokens: z.number().int().min(1).optional() })
  .default({});

export type ChatProviderOptions = z.infer<typeof chatProviderOptions>;
export type MessagesProviderOptions = z.infer<typeof messagesProviderOptions>;
export type AzureProviderOptions = z.infer<typeof azureProviderOptions>;

/** Lower-cases header names so later lookups and overrides are exact. */
export function lowerCaseKeys(headers: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) out[name.toLowerCase()] = value;
  return out;
}
