import type { ChatCompletion, ChatCompletionChunk, ChatUsage } from '../../src/formats/wire.ts';
import type { MockReply } from './reply.ts';

/** The demo reply in the Chat Completions format, whole or as chunks (protocol.md §B.5, §B.6). */

function usage(reply: MockReply): ChatUsage {
  const completion = reply.words.length;
  return {
    prompt_tokens: reply.inputTokens,
    completion_tokens: completion,
    total_tokens: reply.inputTokens + completion,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
}

const finishReason = (reply: MockReply) => (reply.truncated ? 'length' : 'stop');

export function chatBody(id: string, model: string, created: number, reply: MockReply): ChatCompletion {
  return {
    id,
    object: 'chat.completion',
    created,
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: reply.words.join(''), refusal: null },
        logprobs: null,
        finish_reason: finishReason(reply),
      },
    ],
    usage: usage(reply),
  };
}

export async function* chatChunks(
  id: string,
  model: string,
  created: number,
  reply: MockReply,
  includeUsage: boolean,
): AsyncGenerator<ChatCompletionChunk> {
  const chunk = (choices: ChatCompletionChunk['choices']): ChatCompletionChunk => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices,
    ...(includeUsage ? { usage: null } : {}),
  });
  yield chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
  for (const word of reply.words) yield chunk([{ index: 0, delta: { content: word }, finish_reason: null }]);
  yield chunk([{ index: 0, delta: {}, finish_reason: finishReason(reply) }]);
  if (includeUsage) yield { ...chunk([]), usage: usage(reply) };
}
