import type { ChatCompletion } from '../wire.ts';
import { encodeChatAnswer, type ChatAnswerOptions } from '../canonical/chat-answer.ts';
import { decodeMessagesAnswer } from '../canonical/messages-answer.ts';
import type { Json } from './json.ts';

export { REASONING_FORMAT } from '../canonical/chat-answer.ts';
export type MessagesToChatOptions = ChatAnswerOptions;

/**
 * A Message → a Chat completion (protocol.md §D.4), through the canonical form
 * (canonical/answer.ts): texts join into `content`, tool_use becomes `tool_calls`, thinking
 * becomes `reasoning` plus `reasoning_details` carrying the signatures (§D.7).
 */
export function messageToChat(message: Json, options: MessagesToChatOptions): ChatCompletion {
  return encodeChatAnswer(decodeMessagesAnswer(message), options);
}
