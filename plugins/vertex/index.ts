import { z } from 'zod';
import { definePlugin, type CallContext, type MessagesRequest, type Translator, type UpstreamRequest, type UpstreamResponse } from '../../src/plugin-host/api.ts';
import { geminiFormat } from '../gemini/format.ts';
import { SignatureStore } from '../gemini/signatures.ts';
import { adaptForPlatform, type PlatformRules } from '../shared/anthropic-platform.ts';
import { lowerCaseKeys } from '../shared/options.ts';
import { TokenSource } from './auth.ts';
import { vertexError } from './errors.ts';

const vertexOptions = z.strictObject({
  project: z.string().min(1),
  /** A region (`us-east5`), a multi-region (`us`, `eu`) or `global`. */
  location: z.string().regex(/^[a-z0-9-]+$/, 'a Vertex location, e.g. global, us-east5 or europe-west1').default('global'),
  /** A service-account (or other Google credentials) JSON file; without it, Application Default Credentials. */
  credentials_file: z.string().min(1).optional(),
  /** Betas to let through to Claude besides the built-in list, as Vertex adds them. */
  betas: z.array(z.string().min(1)).optional(),
  default_max_tokens: z.number().int().min(1).optional(),
  headers: z.record(z.string(), z.string()).optional(),
});
type VertexOptions = z.infer<typeof vertexOptions>;

/** Claude on Vertex: the body's version (providers.md §2.2). */
const VERTEX_VERSION = 'vertex-2023-10-16';
/**
 * Betas Vertex takes in the `anthropic-beta` header. It refuses prompt-caching ones, scoped
 * caching, web search on count-tokens, effort and adaptive thinking ones (vercel/ai#4431,
 * BerriAI/litellm#14293, #19984, anthropics/claude-code#21625, #12429, #34802).
 */
const VERTEX_BETAS = [
  'interleaved-thinking-2025-05-14',
  'context-1m-2025-08-07',
  'context-management-2025-06-27',
  'token-efficient-tools-2025-02-19',
  'output-128k-2025-02-19',
  'fine-grained-tool-streaming-2025-05-14',
  'computer-use-2024-10-22',
  'computer-use-2025-01-24',
];
/** The Messages body fields Vertex passes to Claude (`model` goes in the path, `stream` stays). */
const FIELDS = ['max_tokens', 'messages', 'system', 'stop_sequences', 'temperature', 'top_p', 'top_k', 'tools', 'tool_choice', 'thinking', 'metadata', 'output_config', 'context_management', 'stream'];
const TOOL_TYPES = ['computer_', 'bash_', 'text_editor_', 'web_search_'];
const CLAUDE = /claude/i;

/** Vertex's host for a location (providers.md §2.1). */
function hostOf(location: string): string {
  if (location === 'global') return 'https://aiplatform.googleapis.com';
  if (location === 'us' || location === 'eu') return `https://aiplatform.${location}.rep.googleapis.com`;
  return `https://${location}-aiplatform.googleapis.com`;
}

/**
 * `vertex`: Google Vertex AI (issue #15; providers.md §2). Claude models go through rawPredict and
 * streamRawPredict with the Messages body adapted for Vertex (its version, the model in the path,
 * betas narrowed to Vertex's); count_tokens through Vertex's count-tokens. Gemini models go
 * through generateContent in Gemini's own format (the `gemini` plugin's codec). OAuth tokens come
 * from a service-account file or Application Default Credentials (auth.ts). `base_url` replaces
 * the location's host; `/v1/projects/…` is appended.
 */
export default definePlugin<VertexOptions>({
  name: 'vertex',
  apiVersion: '^1.5.0',
  optionsSchema: vertexOptions,
  create(provider) {
    const { project, location } = provider.options;
    const base = `${provider.baseUrl ?? hostOf(location)}/v1/projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(location)}/publishers`;
    const fixed = lowerCaseKeys(provider.options.headers);
    const tokens = new TokenSource(provider.options.credentials_file, provider.configDir);
    const authorized = async (url: string, body: unknown, extra: Record<string, string> = {}): Promise<UpstreamRequest> => ({ url, headers: { ...fixed, ...extra, ...(await tokens.headers()) }, body });
    // A 401 is a token revoked or expired early: drop it and send the request once more.
    const retry = (response: UpstreamResponse): Promise<boolean> => (response.status === 401 ? tokens.invalidate() : Promise.resolve(false));
    const rules: PlatformRules = { platform: 'Vertex', betas: new Set([...VERTEX_BETAS, ...(provider.options.betas ?? [])]), fields: new Set(FIELDS), toolTypes: TOOL_TYPES };

    const claudeRequest = (body: MessagesRequest, ctx: CallContext): Promise<UpstreamRequest> => {
      const model = encodeURIComponent(String(body.model));
      const adapted = adaptForPlatform(body as unknown as Record<string, unknown>, ctx.header('anthropic-beta'), rules, ctx.log);
      const betas = adapted.betas.length > 0 ? { 'anthropic-beta': adapted.betas.join(',') } : undefined;
      if (ctx.endpoint === 'count_tokens') {
        // Vertex's count-tokens takes the Anthropic body with its model (ASDK vertex-sdk).
        return authorized(`${base}/anthropic/models/count-tokens:rawPredict`, { ...adapted.body, model: body.model, anthropic_version: VERTEX_VERSION }, betas);
      }
      const method = ctx.stream ? 'streamRawPredict' : 'rawPredict';
      return authorized(`${base}/anthropic/models/${model}:${method}`, { anthropic_version: VERTEX_VERSION, ...adapted.body }, betas);
    };
    const claude: Translator = {
      upstream: 'messages',
      endpoints: ['messages', 'count_tokens', 'chat_completions', 'responses'],
      dialect: provider.options.default_max_tokens === undefined ? {} : { defaultMaxTokens: provider.options.default_max_tokens },
      request: claudeRequest,
      inputTokens: (answer) => Number(answer['input_tokens']),
      error: vertexError,
      retry,
    };
    const signatures = new SignatureStore();
    const gemini: Translator = {
      upstream: 'custom',
      endpoints: ['messages', 'count_tokens', 'chat_completions', 'responses'],
      format: geminiFormat(signatures),
      request: (body, ctx) => {
        const { model, ...rest } = body;
        const url = `${base}/google/models/${encodeURIComponent(String(model))}`;
        if (ctx.endpoint === 'count_tokens') {
          // Vertex's countTokens takes contents, system and tools at the top level (providers.md §2.3).
          const { contents, systemInstruction, tools } = rest;
          return authorized(`${url}:countTokens`, { contents, ...(systemInstruction !== undefined && { systemInstruction }), ...(tools !== undefined && { tools }) });
        }
        return authorized(`${url}:${ctx.stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`, rest);
      },
      inputTokens: (answer) => Number(answer['totalTokens']),
      error: vertexError,
      retry,
    };
    return { translateFor: (model) => (CLAUDE.test(model) ? claude : gemini) };
  },
});
