import type { Message } from '../wire.ts';
import { asArray, asObject, asString, type Json } from './json.ts';
import { reasoningPieces } from './reasoning.ts';
import { stopReasonFromFinish } from './stop-reason.ts';
import { argumentsText, safeToolUseId, type ToolNames } from './tool-names.ts';
import { messagesUsageFromChat } from './usage.ts';

/**
 * A Chat completion → a Message (protocol.md §D.4): thinking first, then text, then tool_use.
 * A thinking block keeps the upstream's signature when it is Anthropic's and otherwise has an
 * empty one: a signature is never invented (§D.7). Fields with no value are left out, not null:
 * strict clients reject `citations: null` (issue #12).
 */
export function chatToMessage(completion: Json, toolNames: ToolNames): Message {
  const choice = asObject(asArray(completion['choices'])[0]);
  const message = asObject(choice['message']);
  const content: Json[] = [];

  // One thinking block per reasoning item; a signature with no text before it still gets one.
  let thinking: { block: Json; index: number | undefined } | null = null;
  for (const piece of reasoningPieces(message)) {
    if (piece.kind === 'encrypted') {
      content.push({ type: 'redacted_thinking', data: piece.value });
      thinking = null;
      continue;
    }
    const sameItem = thinking !== null && (piece.index === undefined || thinking.index === undefined || thinking.index === piece.index);
    const fresh = !sameItem || (piece.kind === 'text' && thinking !== null && thinking.block['signature'] !== '');
    if (thinking === null || fresh) {
      thinking = { block: { type: 'thinking', thinking: '', signature: '' }, index: piece.index };
      content.push(thinking.block);
    }
    if (piece.kind === 'text') thinking.block['thinking'] = String(thinking.block['thinking']) + piece.value;
    else thinking.block['signature'] = piece.value;
  }

  const text = textOf(message['content']) + imagesAsMarkdown(message['images']);
  if (text !== '') content.push({ type: 'text', text });
  const refusal = asString(message['refusal']);
  if (refusal) content.push({ type: 'text', text: refusal });

  for (const raw of asArray(message['tool_calls'])) {
    const call = asObject(raw);
    const fn = asObject(call['function']);
    content.push({
      type: 'tool_use',
      id: safeToolUseId(asString(call['id'])),
      name: toolNames.client(asString(fn['name']) ?? ''),
      input: parseArguments(argumentsText(fn['arguments'])),
    });
  }

  const finish = asString(choice['finish_reason']);
  // vLLM names the stop string that matched (choices[].stop_reason); OpenAI does not, and then a
  // stop sequence cannot be told from a natural end (protocol.md §D.4; peers.md §2 #20).
  const matched = finish === 'stop' ? asString(choice['stop_reason']) : undefined;
  return {
    id: asString(completion['id']) ?? 'msg_gateway',
    type: 'message',
    role: 'assistant',
    model: asString(completion['model']) ?? '',
    content: content as unknown as Message['content'],
    stop_reason: refusal ? 'refusal' : matched !== undefined ? 'stop_sequence' : stopReasonFromFinish(finish),
    stop_sequence: matched ?? null,
    // Only the counts: the fields a Chat upstream has no value for are left out, as
    // api.anthropic.com leaves them out, never sent as null (issue #12).
    usage: messagesUsageFromChat(asObject(completion['usage'])),
  };
}

/**
 * Images a Chat model generated (OpenRouter's `images`, protocol.md §C.4). Messages answers cannot
 * hold images, so they become Markdown images in the text, data and all (peers.md §2 #34).
 */
export function imagesAsMarkdown(images: unknown): string {
  return asArray(images)
    .map((raw) => asString(asObject(asObject(raw)['image_url'])['url']))
    .filter((url): url is string => url !== undefined && url !== '')
    .map((url) => `\n\n![image](${url})`)
    .join('');
}

export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return asArray(content)
    .map((part) => asString(asObject(part)['text']) ?? '')
    .join('');
}

/**
 * Tool arguments are a JSON string that may be invalid (protocol.md §B.3). Anthropic's input is
 * an object: anything else is kept, not dropped, under `raw_arguments`.
 */
export function parseArguments(text: string): Json {
  if (text.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Json) : { raw_arguments: text };
  } catch {
    return { raw_arguments: text };
  }
}
