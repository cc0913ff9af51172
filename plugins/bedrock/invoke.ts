import { PluginRequestError, type CallContext, type MessagesRequest, type PluginLogger, type SseEvent, type UpstreamRequest } from '../../src/plugin-host/api.ts';
import { adaptForPlatform, type PlatformRules } from '../shared/anthropic-platform.ts';

/**
 * Claude on Bedrock through InvokeModel and InvokeModelWithResponseStream (providers.md §1.2):
 * the Messages body with `anthropic_version: bedrock-2023-05-31`, the betas in the body as
 * `anthropic_beta`, and the model in the path; `count_tokens` through CountTokens.
 */
const BEDROCK_VERSION = 'bedrock-2023-05-31';

/** LiteLLM's list (BerriAI/litellm#19877), and the fine-grained tool streaming the AI SDK sends. */
export const BEDROCK_BETAS = [
  'computer-use-2024-10-22',
  'computer-use-2025-01-24',
  'token-efficient-tools-2025-02-19',
  'interleaved-thinking-2025-05-14',
  'output-128k-2025-02-19',
  'context-1m-2025-08-07',
  'context-management-2025-06-27',
  'effort-2025-11-24',
  'tool-search-tool-2025-10-19',
  'tool-examples-2025-10-29',
  'fine-grained-tool-streaming-2025-05-14',
];
/** What InvokeModel takes at the top level: anything else is `Extra inputs are not permitted` (LiteLLM's BedrockInvokeAnthropicMessagesRequest). */
const FIELDS = ['max_tokens', 'messages', 'system', 'stop_sequences', 'temperature', 'top_p', 'top_k', 'tools', 'tool_choice', 'thinking', 'metadata', 'output_config', 'context_management'];
/** Anthropic-defined client tools Bedrock runs; its server tools (web search, code execution) it does not. */
const TOOL_TYPES = ['computer_', 'bash_', 'text_editor_'];

export function bedrockRules(extraBetas: readonly string[]): PlatformRules {
  return { platform: 'Bedrock', betas: new Set([...BEDROCK_BETAS, ...extraBetas]), fields: new Set(FIELDS), toolTypes: TOOL_TYPES };
}

/** A cross-region inference profile's geography prefix: CountTokens takes foundation-model ids only. */
const GEOGRAPHY = /^(us|eu|apac|jp|au|ca|global|us-gov)\./;

/** The id as one path segment: `:` and `/` (ARNs, `…-v1:0`) escaped, as the SDKs send it. */
export const modelSegment = (model: string): string => encodeURIComponent(model);
/** The foundation model of an inference profile id: what CountTokens takes. */
export const foundationModel = (model: string): string => model.replace(GEOGRAPHY, '');

/**
 * Bedrock does not fetch media by URL (providers.md §1.2): such a request is refused here, naming
 * the block, rather than sent for Bedrock's own 400.
 */
function refuseUrlSources(body: MessagesRequest): void {
  for (const [i, message] of body.messages.entries()) {
    if (!Array.isArray(message.content)) continue;
    for (const [j, block] of message.content.entries()) {
      const source = (block as { source?: { type?: unknown } }).source;
      const field = `messages[${i}].content[${j}].source`;
      // Messages errors have no param field: the message names it.
      if (source?.type === 'url') throw new PluginRequestError(400, `${field}: Bedrock takes images and documents as base64 data, not by URL`, field);
    }
  }
}

export function invokeRequest(body: MessagesRequest, ctx: CallContext, base: string, rules: PlatformRules, headers: Readonly<Record<string, string>>): UpstreamRequest {
  const model = String(body.model);
  refuseUrlSources(body);
  const adapted = adaptForPlatform(body as unknown as Record<string, unknown>, ctx.header('anthropic-beta'), rules, ctx.log);
  const invokeBody: Record<string, unknown> = { anthropic_version: BEDROCK_VERSION, ...(adapted.betas.length > 0 && { anthropic_beta: adapted.betas }), ...adapted.body };
  if (ctx.endpoint === 'count_tokens') {
    // The Invoke body as Bedrock would take it: max_tokens is required there (and must exceed a
    // thinking budget), and counts nothing.
    const budget = (body.thinking as { budget_tokens?: unknown } | undefined)?.budget_tokens;
    const counted = { ...invokeBody, max_tokens: invokeBody['max_tokens'] ?? (typeof budget === 'number' ? budget + 1 : 1) };
    const encoded = Buffer.from(JSON.stringify(counted)).toString('base64');
    return { url: `${base}/model/${modelSegment(foundationModel(model))}/count-tokens`, headers, body: { input: { invokeModel: { body: encoded } } } };
  }
  const method = ctx.stream ? 'invoke-with-response-stream' : 'invoke';
  return { url: `${base}/model/${modelSegment(model)}/${method}`, headers: ctx.stream ? { ...headers, 'x-amzn-bedrock-accept': 'application/json' } : headers, body: invokeBody };
}

const METRICS = 'amazon-bedrock-invocationMetrics';
const BYTES_KEY = Buffer.from('"bytes":"');

/** `{"bytes":"` at the payload's start. */
function keyFirst(body: Buffer): boolean {
  if (body.length <= BYTES_KEY.length || body[0] !== 0x7b) return false;
  for (let i = 0; i < BYTES_KEY.length; i++) if (body[i + 1] !== BYTES_KEY[i]) return false;
  return true;
}

/**
 * The `bytes` member of a chunk's payload, `{"bytes":"<base64>"}` (perhaps with a padding member):
 * base64 holds no quote or escape, so it is found between its quotes without a JSON parse, which
 * is per event (bench/bedrock-costs.ts). Anything else is parsed as JSON.
 */
function base64Of(payload: Uint8Array): string {
  const body = Buffer.isBuffer(payload) ? payload : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  // Bedrock writes `bytes` first, right after the brace: that is compared in place, cheaper than a
  // search (a call into C++), and it is where the search would have found it.
  const start = keyFirst(body) ? 1 : body.indexOf(BYTES_KEY);
  const end = start < 0 ? -1 : body.indexOf(0x22, start + BYTES_KEY.length);
  if (end > 0) return body.toString('latin1', start + BYTES_KEY.length, end);
  const bytes = (JSON.parse(body.toString('utf8')) as { bytes?: unknown }).bytes;
  if (typeof bytes !== 'string') throw new Error('a Bedrock chunk has no bytes');
  return bytes;
}

/**
 * One `chunk` event of an Invoke stream: its `bytes` are the base64 of one Anthropic stream event,
 * passed on as that event. Bedrock's invocation metrics on `message_stop` are not Anthropic's and
 * are taken off (usage is read from message_start and message_delta, as from Anthropic).
 */
export function invokeEvent(type: string, payload: Uint8Array, out: SseEvent[], log: PluginLogger): void {
  if (type !== 'chunk') {
    log.debug({ event: type }, 'Bedrock stream event ignored');
    return;
  }
  let data = Buffer.from(base64Of(payload), 'base64').toString('utf8');
  if (data.includes(METRICS)) {
    const event = JSON.parse(data) as Record<string, unknown>;
    delete event[METRICS];
    data = JSON.stringify(event);
  }
  out.push({ event: undefined, data });
}
