import type { Message, MessagesStreamEvent, WireContentBlock } from '../../src/formats/wire.ts';
import type { MockReply } from './reply.ts';

/**
 * The demo reply in the Messages format, whole or as the stream events of protocol.md §A.8, in
 * the shape api.anthropic.com sends: fields with no value left out, not null (issue #12).
 */

function usage(reply: MockReply, output: number): Message['usage'] {
  return {
    input_tokens: reply.inputTokens,
    output_tokens: output,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
    service_tier: 'standard',
  };
}

function envelope(id: string, model: string, reply: MockReply, output: number): Message {
  return { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: usage(reply, output) };
}

const stopReason = (reply: MockReply) => (reply.toolCall ? 'tool_use' : reply.truncated ? 'max_tokens' : 'end_turn');
const toolUseId = (messageId: string): string => messageId.replace(/^msg_/, 'toolu_');

function block(id: string, reply: MockReply): WireContentBlock {
  return reply.toolCall
    ? { type: 'tool_use', id: toolUseId(id), name: reply.toolCall.name, input: reply.toolCall.input }
    : { type: 'text', text: reply.words.join('') };
}

export function messagesBody(id: string, model: string, reply: MockReply): Message {
  return { ...envelope(id, model, reply, reply.outputTokens), content: [block(id, reply)], stop_reason: stopReason(reply) };
}

export async function* messagesEvents(id: string, model: string, reply: MockReply): AsyncGenerator<MessagesStreamEvent> {
  yield { type: 'message_start', message: envelope(id, model, reply, 1) };
  if (reply.toolCall) {
    yield { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: toolUseId(id), name: reply.toolCall.name, input: {} } };
    yield { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(reply.toolCall.input) } };
  } else {
    yield { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } };
    for (const word of reply.words) {
      yield { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: word } };
    }
  }
  yield { type: 'content_block_stop', index: 0 };
  yield {
    type: 'message_delta',
    delta: { stop_reason: stopReason(reply), stop_sequence: null },
    usage: { input_tokens: reply.inputTokens, output_tokens: reply.outputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
  yield { type: 'message_stop' };
}
