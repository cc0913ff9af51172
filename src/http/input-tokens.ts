import { countInputTokens } from '../usage/token-count.ts';
import { checkedInputTokens } from '../usage/checked-text.ts';
import { jsonText } from './json-text.ts';
import type { GatewayState } from './state.ts';
import type { ValueRange } from './json-scan.ts';

/**
 * The request's input-token estimate (issue #4), counted once per request: the rate limiter, the
 * hold and a local count_tokens answer all use this. Remembered counts are scoped by API key.
 *
 * Tool schemas are counted as the bytes the client sent (`tools`' range from the body scan),
 * not re-serialised from the parsed body: Claude Code sends about 40 KB of them on every turn, and
 * JSON.stringify of those was the largest cost of counting a remembered request (issue #6
 * profile). The estimate differs from a re-serialisation only by the whitespace the client sent.
 */
/**
 * Which text of each endpoint's body is its input: a form's `prompt` (an edit's instructions, a
 * transcription's context) is counted as an image prompt is, when it came before routing.
 */
export const COUNTED_AS = {
  messages: 'messages',
  count_tokens: 'messages',
  chat_completions: 'chat',
  responses: 'responses',
  responses_input_tokens: 'responses',
  embeddings: 'embeddings',
  images_generations: 'images',
  images_edits: 'images',
  audio_speech: 'speech',
  audio_transcriptions: 'images',
  audio_translations: 'images',
} as const;

/**
 * The estimate, once per request. A number, not a promise, when it is known at once: counted
 * before, or a checked body whose every element was counted before (a coding agent's repeated
 * turn), so the hold's path makes no promises for it (issue #17).
 */
export function inputTokensOf(state: GatewayState): number | Promise<number> {
  if (state.inputTokens !== undefined) return state.inputTokens;
  const { route, raw, scan, key, elements } = state;
  if (!route) return 0;
  const tools = scan?.fields.get('tools');
  const format = COUNTED_AS[route.endpoint];
  const scope = String(key?.id ?? '');
  if (elements && raw && (format === 'messages' || format === 'chat' || format === 'responses')) {
    // A checked body: its elements are read from the bytes, never the whole body (issue #17). A
    // Responses continuation whose input Junction replays has none: it is counted from its new body.
    // Each element's count is kept with it, so a repeated element is not counted again.
    const counted = checkedInputTokens(format, raw, elements, scope, tools);
    if (typeof counted === 'number') return (state.inputTokens = counted);
    return counted.then((tokens) => (state.inputTokens = tokens));
  }
  return parsedInputTokens(state, format, scope, tools);
}

async function parsedInputTokens(state: GatewayState, format: (typeof COUNTED_AS)[keyof typeof COUNTED_AS], scope: string, tools: ValueRange | undefined): Promise<number> {
  const body = state.body;
  if (!body) return 0;
  const raw = state.raw;
  // Read as jsonText reads a body: a non-ASCII character becomes its `\u` escape, a few tokens more
  // for the estimate, and the 40 KB stays a one-byte string, 5× faster to make (issue #17).
  const toolsText = raw && tools ? jsonText(raw.view(tools.start, tools.end)) : undefined;
  state.inputTokens = await countInputTokens(format, body, scope, toolsText);
  return state.inputTokens;
}
