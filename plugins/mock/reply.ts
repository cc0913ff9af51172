import type { ClientRequest } from '../../src/plugin-host/api.ts';
import { forcedToolCall, type MockToolCall } from './tool-call.ts';

/**
 * The demo model's deterministic answer: the same request always gets the same words. "Tokens"
 * are words on output and about four characters each on input, so counts are easy to check.
 */
export interface MockReply {
  /** Output words, each one token; already cut to the request's token limit. */
  readonly words: readonly string[];
  readonly truncated: boolean;
  readonly inputTokens: number;
  /** A tool call instead of words, when the request forces one. */
  readonly toolCall?: MockToolCall;
  /** Output tokens: the words, or about four characters of tool input each. */
  readonly outputTokens: number;
}

const SNIPPET_CHARS = 120;

/** The requests the demo text model answers. */
export type TextRequest = Extract<ClientRequest, { endpoint: 'messages' | 'count_tokens' | 'chat_completions' }>;

export function replyTo(request: TextRequest): MockReply {
  const texts = inputTexts(request);
  const last = texts.at(-1)?.replace(/\s+/g, ' ').trim() ?? '';
  const snippet = last.length > SNIPPET_CHARS ? `${last.slice(0, SNIPPET_CHARS)}…` : last;
  const text = `This is Junction's offline demo model. It received ${texts.length} text part${
    texts.length === 1 ? '' : 's'
  }; the last one reads: "${snippet}"`;
  const all = text.split(' ').map((word, i) => (i === 0 ? word : ` ${word}`));
  const inputTokens = estimateTokens(texts);
  const toolCall = forcedToolCall(request, snippet);
  if (toolCall) {
    return { words: [], truncated: false, inputTokens, toolCall, outputTokens: Math.max(1, Math.ceil(JSON.stringify(toolCall.input).length / 4)) };
  }
  const limit = maxTokens(request);
  const words = limit === undefined ? all : all.slice(0, limit);
  return { words, truncated: words.length < all.length, inputTokens, outputTokens: words.length };
}

export function estimateTokens(texts: readonly string[]): number {
  return texts.reduce((sum, t) => sum + Math.ceil(t.length / 4), 0);
}

function maxTokens(request: TextRequest): number | undefined {
  if (request.endpoint === 'messages') return request.body.max_tokens;
  if (request.endpoint === 'chat_completions') {
    return request.body.max_completion_tokens ?? request.body.max_tokens ?? undefined;
  }
  return undefined;
}

/** Every piece of text in the request, system prompt and tool results included, in order. */
export function inputTexts(request: TextRequest): string[] {
  const out: string[] = [];
  const collect = (content: unknown): void => {
    if (typeof content === 'string') out.push(content);
    else if (Array.isArray(content)) {
      for (const part of content) {
        if (typeof part !== 'object' || part === null) continue;
        if ('text' in part && typeof part.text === 'string') out.push(part.text);
        // A tool result's text counts, as a Chat tool message's content does.
        else if ('type' in part && part.type === 'tool_result' && 'content' in part) collect(part.content);
      }
    }
  };
  if (request.endpoint !== 'chat_completions') collect(request.body.system);
  for (const message of request.body.messages) collect(message.content);
  return out;
}
