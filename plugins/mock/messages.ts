import type { Message, MessagesStreamEvent } from '../../src/formats/wire.ts';
import type { MockReply } from './reply.ts';

/** The demo reply in the Messages format, whole or as the stream events of protocol.md §A.8. */

function usage(reply: MockReply, output: number): Message['usage'] {
  return {
    input_tokens: reply.inputTokens,
    output_tokens: output,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation: null,
    inference_geo: null,
    output_tokens_details: null,
    server_tool_use: null,
    service_tier: 'standard',
    speed: null,
  };
}

function envelope(id: string, model: string, reply: MockReply, output: number): Message {
  return {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content: [],
    container: null,
    diagnostics: null,
    stop_details: null,
    stop_reason: null,
    stop_sequence: null,
    usage: usage(reply, output),
  };
}

const stopReason = (reply: MockReply) => (reply.truncated ? 'max_tokens' : 'end_turn');

export function messagesBody(id: string, model: string, reply: MockReply): Message {
  return {
    ...envelope(id, model, reply, reply.words.length),
    content: [{ type: 'text', text: reply.words.join(''), citations: null }],
    stop_reason: stopReason(reply),
  };
}

export async function* messagesEvents(id: string, model: string, reply: MockReply): AsyncGenerator<MessagesStreamEvent> {
  yield { type: 'message_start', message: envelope(id, model, reply, 1) };
  yield { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '', citations: null } };
  for (const word of reply.words) {
    yield { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: word } };
  }
  yield { type: 'content_block_stop', index: 0 };
  yield {
    type: 'message_delta',
    delta: { stop_reason: stopReason(reply), stop_sequence: null, container: null, stop_details: null },
    usage: {
      input_tokens: reply.inputTokens,
      output_tokens: reply.words.length,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens_details: null,
      server_tool_use: null,
    },
  };
  yield { type: 'message_stop' };
}
