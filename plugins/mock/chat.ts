import type { ChatCompletion, ChatCompletionChunk, ChatUsage } from '../../src/formats/wire.ts';
import type { MockReply } from './reply.ts';

/** The demo reply in the Chat Completions format, whole or as chunks (protocol.md §B.5, §B.6). */

function usage(reply: MockReply): ChatUsage {
  return {
    prompt_tokens: reply.inputTokens,
    completion_tokens: reply.outputTokens,
    total_tokens: reply.inputTokens + reply.outputTokens,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
}

const finishReason = (reply: MockReply) => (reply.toolCall ? 'tool_calls' : reply.truncated ? 'length' : 'stop');
const callId = (completionId: string): string => completionId.replace(/^chatcmpl-/, 'call_');

export function chatBody(id: string, model: string, created: number, reply: MockReply): ChatCompletion {
  const call = reply.toolCall;
  return {
    id,
    object: 'chat.completion',
    created,
    model,
    choices: [
      {
        index: 0,
        message: call
          ? {
              role: 'assistant',
              content: null,
              refusal: null,
              tool_calls: [{ id: callId(id), type: 'function', function: { name: call.name, arguments: JSON.stringify(call.input) } }],
            }
          : { role: 'assistant', content: reply.words.join(''), refusal: null },
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
  const call = reply.toolCall;
  if (call) {
    const start = { index: 0, id: callId(id), type: 'function' as const, function: { name: call.name, arguments: '' } };
    yield chunk([{ index: 0, delta: { role: 'assistant', content: null, tool_calls: [start] }, finish_reason: null }]);
    yield chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: JSON.stringify(call.input) } }] }, finish_reason: null }]);
  } else {
    yield chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
    for (const word of reply.words) yield chunk([{ index: 0, delta: { content: word }, finish_reason: null }]);
  }
  yield chunk([{ index: 0, delta: {}, finish_reason: finishReason(reply) }]);
  if (includeUsage) yield { ...chunk([]), usage: usage(reply) };
}
