import { definePlugin } from '../../src/plugin-host/api.ts';
import { z } from 'zod';
import { lowerCaseKeys } from '../shared/options.ts';
import { geminiFormat } from './format.ts';
import { SignatureStore } from './signatures.ts';

const DEFAULT_BASE_URL = 'https://generativelanguage.googleapis.com';

/**
 * `gemini`: the Gemini API's own `generateContent` format (issue #15; providers.md §3), through the
 * public plugin API's format codec: Messages, Chat and Responses clients reach Gemini models with
 * tools, thinking (thought summaries as reasoning), images and files, structured output and usage,
 * and the thought signatures multi-turn tool use needs carried across turns (signatures.ts). The
 * key goes as `x-goog-api-key`; `base_url` replaces the host, `/v1beta/models/…` is appended.
 */
/** Fixed headers are the only option: the rest is in the request (the model, streaming) or the key. */
const geminiOptions = z.strictObject({ headers: z.record(z.string(), z.string()).optional() }).default({});

export default definePlugin<z.infer<typeof geminiOptions>>({
  name: 'gemini',
  apiVersion: '^1.5.0',
  optionsSchema: geminiOptions,
  create(provider) {
    const base = provider.baseUrl ?? DEFAULT_BASE_URL;
    const headers = {
      ...lowerCaseKeys(provider.options.headers),
      ...(provider.apiKey === undefined ? {} : { 'x-goog-api-key': provider.apiKey }),
    };
    const signatures = new SignatureStore();
    return {
      translate: {
        upstream: 'custom',
        endpoints: ['messages', 'count_tokens', 'chat_completions', 'responses'],
        format: geminiFormat(signatures),
        // The model and streaming are in the URL; the body carries neither.
        request: (body, ctx) => {
          const { model, ...rest } = body;
          const url = `${base}/v1beta/models/${encodeURIComponent(String(model))}`;
          // countTokens takes the whole request in this form, so system and tools count (providers.md §3.7).
          if (ctx.endpoint === 'count_tokens') return { url: `${url}:countTokens`, headers, body: { generateContentRequest: { model: `models/${String(model)}`, ...rest } } };
          return { url: `${url}:${ctx.stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`, headers, body: rest };
        },
        inputTokens: (answer) => Number(answer['totalTokens']),
      },
    };
  },
});
