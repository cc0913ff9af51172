import type { Message } from '../wire.ts';
import { decodeChatAnswer } from '../canonical/chat-answer.ts';
import { encodeMessagesAnswer } from '../canonical/messages-answer.ts';
import { imageMarkdown } from '../canonical/answer.ts';
import { asArray, asObject, asString, type Json } from './json.ts';
import type { ToolNames } from './tool-names.ts';

export { textOf } from '../canonical/chat-answer.ts';
export { parseArguments } from '../canonical/messages-answer.ts';

/**
 * A Chat completion → a Message (protocol.md §D.4), through the canonical form
 * (canonical/answer.ts): thinking first, then text, then tool_use.
 */
export function chatToMessage(completion: Json, toolNames: ToolNames): Message {
  return encodeMessagesAnswer(decodeChatAnswer(completion, toolNames));
}

/**
 * Images a Chat model generated (OpenRouter's `images`, protocol.md §C.4), for a stream's text
 * deltas: Messages answers cannot hold images, so they become Markdown images (peers.md §2 #34).
 */
export function imagesAsMarkdown(images: unknown): string {
  return asArray(images)
    .map((raw) => asString(asObject(asObject(raw)['image_url'])['url']))
    .filter((url): url is string => url !== undefined && url !== '')
    .map(imageMarkdown)
    .join('');
}
