import type { ChatCompletion, Message } from '../wire.ts';
import type { ChatDialect, MessagesDialect } from '../convert/dialect.ts';
import type { Json } from '../convert/json.ts';
import { ToolNames } from '../convert/tool-names.ts';
import { decodeChatAnswer, encodeChatAnswer } from './chat-answer.ts';
import { decodeChatRequest } from './chat-request-decode.ts';
import { encodeChatRequest, type ChatRequestEncoding } from './chat-request-encode.ts';
import { ChatStreamDecoder } from './chat-stream-decode.ts';
import { ChatStreamEncoder } from './chat-stream-encode.ts';
import { decodeMessagesAnswer, encodeMessagesAnswer } from './messages-answer.ts';
import { decodeMessagesRequest } from './messages-request-decode.ts';
import { encodeMessagesRequest, type MessagesRequestEncoding } from './messages-request-encode.ts';
import { MessagesStreamDecoder } from './messages-stream-decode.ts';
import { MessagesStreamEncoder } from './messages-stream-encode.ts';
import { translateStream } from './stream.ts';

/**
 * Messages ⇄ Chat as one call each: a decoder and an encoder composed. Nothing here converts on
 * its own; it names the compositions the translation suites (and plugin authors) call.
 */

export function messagesToChatRequest(request: Json, options: { model: string; dialect: ChatDialect; maxOutputTokens: number | null }): ChatRequestEncoding {
  return encodeChatRequest(decodeMessagesRequest(request), options);
}

export function chatToMessagesRequest(request: Json, options: { model: string; dialect: MessagesDialect; maxOutputTokens: number | null }): MessagesRequestEncoding {
  return encodeMessagesRequest(decodeChatRequest(request), options);
}

export function chatToMessage(completion: Json, toolNames: ToolNames): Message {
  return encodeMessagesAnswer(decodeChatAnswer(completion, toolNames));
}

export function messageToChat(message: Json, options: { jsonTool: string | null; created: number }): ChatCompletion {
  return encodeChatAnswer(decodeMessagesAnswer(message, options.jsonTool), options);
}

export function chatChunksToMessagesEvents(
  chunks: AsyncIterable<Json>,
  options: { messageId: string; model: string; inputTokensEstimate: number; toolNames: ToolNames; provider: string },
): AsyncGenerator<Json> {
  return translateStream(chunks, new ChatStreamDecoder(options.toolNames, options.provider), new MessagesStreamEncoder(options));
}

export function messagesEventsToChatChunks(
  events: AsyncIterable<Json>,
  options: { id: string; created: number; includeUsage: boolean; jsonTool: string | null },
): AsyncGenerator<Json> {
  return translateStream(events, new MessagesStreamDecoder(options.jsonTool), new ChatStreamEncoder({ ...options, model: '' }));
}
