import type { TokenUsage } from '../formats/wire.ts';

/**
 * Usage objects of both formats, read defensively (they come from upstreams), normalised to
 * TokenUsage. Anthropic's input_tokens excludes cache reads and writes; OpenAI's prompt_tokens
 * includes cached tokens (protocol.md §A.7, §B.5, §D.6).
 */

/**
 * Token counts are whole and bounded: an upstream that reports 10.5 or 1e30 tokens must neither
 * crash the bigint price arithmetic nor overflow the ledger's int64 columns. A billion tokens is a
 * thousand times any context window.
 */
const MAX_TOKENS = 1_000_000_000;
const count = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.min(Math.round(value), MAX_TOKENS) : 0;
const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;

/**
 * Whether an upstream's `usage` value is a usage object. `null`, an array or a number is not: the
 * answer then has no usage, and is charged by its estimate, never as zero tokens (issue #17,
 * seventeenth session: a whole answer with `"usage": null` was charged nothing).
 */
export function isUsage(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function emptyUsage(): TokenUsage {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 };
}

/**
 * Folds a Messages `usage` (from message_start, message_delta or a whole Message) into `into`.
 * Fields are cumulative: present values overwrite, absent or null ones keep what was seen, as the
 * SDK's MessageStream accumulator does (protocol.md §A.8, message_delta).
 */
export function applyMessagesUsage(into: TokenUsage, raw: unknown): void {
  const usage = record(raw);
  if (!usage) return;
  if (usage['input_tokens'] != null) into.input = count(usage['input_tokens']);
  if (usage['output_tokens'] != null) into.output = count(usage['output_tokens']);
  if (usage['cache_read_input_tokens'] != null) into.cacheRead = count(usage['cache_read_input_tokens']);
  if (usage['cache_creation_input_tokens'] != null) into.cacheWrite = count(usage['cache_creation_input_tokens']);
  const details = record(usage['output_tokens_details']);
  if (details?.['thinking_tokens'] != null) into.reasoning = count(details['thinking_tokens']);
}

/** Folds a Chat Completions `usage` into `into` (it arrives once, complete). */
export function applyChatUsage(into: TokenUsage, raw: unknown): void {
  const usage = record(raw);
  if (!usage) return;
  const promptDetails = record(usage['prompt_tokens_details']);
  const completionDetails = record(usage['completion_tokens_details']);
  const cached = count(promptDetails?.['cached_tokens']);
  const cacheWrite = count(promptDetails?.['cache_write_tokens']);
  into.input = Math.max(0, count(usage['prompt_tokens']) - cached - cacheWrite);
  into.cacheRead = cached;
  into.cacheWrite = cacheWrite;
  into.output = count(usage['completion_tokens']);
  into.reasoning = count(completionDetails?.['reasoning_tokens']);
  // Audio and image tokens are part of the totals and have their own prices (issue #13; media.md
  // §5.1): moved out of input and output, and set only when present so text usage reads as before.
  const split = (details: Record<string, unknown> | undefined, key: string, from: 'input' | 'output', to: 'inputAudio' | 'inputImage' | 'outputAudio' | 'outputImage'): void => {
    const tokens = Math.min(count(details?.[key]), into[from]);
    if (tokens === 0) return;
    into[to] = tokens;
    into[from] -= tokens;
  };
  split(promptDetails, 'audio_tokens', 'input', 'inputAudio');
  split(promptDetails, 'image_tokens', 'input', 'inputImage');
  split(completionDetails, 'audio_tokens', 'output', 'outputAudio');
  split(completionDetails, 'image_tokens', 'output', 'outputImage');
}

/** Folds a Messages stream event: message_start has input usage, message_delta cumulative totals. */
export function applyMessagesEvent(into: TokenUsage, event: Record<string, unknown>): boolean {
  if (event['type'] === 'message_start') {
    const message = record(event['message']);
    if (!isUsage(message?.['usage'])) return false;
    applyMessagesUsage(into, message['usage']);
    return true;
  }
  if (event['type'] === 'message_delta' && isUsage(event['usage'])) {
    applyMessagesUsage(into, event['usage']);
    return true;
  }
  return false;
}

/** Folds a Chat chunk that carries usage (the `choices: []` chunk, or OpenRouter's with choices). */
export function applyChatChunk(into: TokenUsage, chunk: Record<string, unknown>): boolean {
  if (!isUsage(chunk['usage'])) return false;
  applyChatUsage(into, chunk['usage']);
  return true;
}

/**
 * Folds an Images `usage` (media.md §1.3): input tokens split into text and image by
 * `input_tokens_details`, output into image and text by `output_tokens_details`. Without output
 * details every output token is an image token: the Images endpoints often leave them out, and
 * pricing image output at the text rate under-charged elsewhere (media.md §1.3, LiteLLM#31142).
 */
export function applyImagesUsage(into: TokenUsage, raw: unknown): void {
  const usage = record(raw);
  if (!usage) return;
  const input = count(usage['input_tokens']);
  const output = count(usage['output_tokens']);
  const inDetails = record(usage['input_tokens_details']);
  const outDetails = record(usage['output_tokens_details']);
  into.inputImage = Math.min(input, count(inDetails?.['image_tokens']));
  into.input = input - into.inputImage;
  into.outputImage = outDetails ? Math.min(output, count(outDetails['image_tokens'])) : output;
  into.output = output - into.outputImage;
}

/**
 * A transcription's usage (media.md §3.2): `{type: "duration", seconds}` for models priced by the
 * minute, `{type: "tokens", input_tokens, input_token_details: {audio_tokens, text_tokens},
 * output_tokens}` for those priced by tokens. Returns whether it held either.
 */
export function applyTranscriptionUsage(into: TokenUsage, raw: unknown): boolean {
  const usage = record(raw);
  if (!usage) return false;
  if (usage['type'] === 'duration' && typeof usage['seconds'] === 'number') {
    into.audioMs = audioMsOf(usage['seconds']);
    return true;
  }
  if (typeof usage['input_tokens'] !== 'number') return false;
  const input = count(usage['input_tokens']);
  into.inputAudio = Math.min(input, count(record(usage['input_token_details'])?.['audio_tokens']));
  into.input = input - into.inputAudio;
  into.output = count(usage['output_tokens']);
  return true;
}

/** A whole transcription body: its `usage`, else a verbose answer's `duration` (seconds). */
export function applyTranscriptionBody(into: TokenUsage, body: Record<string, unknown>): boolean {
  if (applyTranscriptionUsage(into, body['usage'])) return true;
  if (typeof body['duration'] !== 'number') return false;
  into.audioMs = audioMsOf(body['duration']);
  return true;
}

/** Seconds reported, as whole milliseconds; a value that is not a finite count (1e400 parses as Infinity) counts as none. */
function audioMsOf(seconds: number): number {
  return Number.isFinite(seconds) && seconds > 0 ? Math.round(seconds * 1000) : 0;
}

/** A transcription stream's `transcript.text.done` event carries the usage. */
export function applyTranscriptionEvent(into: TokenUsage, event: Record<string, unknown>): boolean {
  return event['type'] === 'transcript.text.done' && applyTranscriptionUsage(into, event['usage']);
}

/**
 * A Responses `usage` (responses-api.md §3): `input_tokens` includes the cached ones and
 * `output_tokens` the reasoning ones, as in Chat; Junction's `input` excludes cached tokens.
 */
export function applyResponsesUsage(into: TokenUsage, raw: unknown): boolean {
  const usage = record(raw);
  if (!usage || typeof usage['input_tokens'] !== 'number') return false;
  const input = count(usage['input_tokens']);
  const inDetails = record(usage['input_tokens_details']);
  into.cacheRead = Math.min(input, count(inDetails?.['cached_tokens']));
  into.cacheWrite = Math.min(input - into.cacheRead, count(inDetails?.['cache_write_tokens']));
  into.input = input - into.cacheRead - into.cacheWrite;
  into.output = count(usage['output_tokens']);
  into.reasoning = Math.min(into.output, count(record(usage['output_tokens_details'])?.['reasoning_tokens']));
  return true;
}

const RESPONSES_TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/** A Responses stream reports usage once, on its terminal event's `response`. */
export function applyResponsesEvent(into: TokenUsage, event: Record<string, unknown>): boolean {
  return typeof event['type'] === 'string' && RESPONSES_TERMINAL.has(event['type']) && applyResponsesUsage(into, record(event['response'])?.['usage']);
}

/** Adds the token counts of `from` to `into` (a stream's usage reported per image; issue #13). */
export function addUsage(into: TokenUsage, from: TokenUsage): void {
  into.input += from.input;
  into.output += from.output;
  into.cacheRead += from.cacheRead;
  into.cacheWrite += from.cacheWrite;
  into.reasoning += from.reasoning;
  for (const key of ['inputImage', 'outputImage', 'inputAudio', 'outputAudio'] as const) {
    if (from[key] !== undefined) into[key] = (into[key] ?? 0) + from[key];
  }
}
