import type { ChatCompletion } from '../wire.ts';
import { asArray, asObject, asString, type Json } from '../convert/json.ts';
import { reasoningPieces } from '../convert/reasoning.ts';
import { finishFromStopReason, stopReasonFromFinish } from '../convert/stop-reason.ts';
import { argumentsText, type ToolNames } from '../convert/tool-names.ts';
import { canonicalUsageFromChat, chatUsageOf } from '../convert/usage.ts';
import { imageMarkdown, type CanonicalAnswer, type CanonicalBlock } from './answer.ts';

/** The signature Junction gives Claude's reasoning when it travels as Chat `reasoning_details`. */
export const REASONING_FORMAT = 'anthropic-claude-v1';

/**
 * A Chat completion → canonical (protocol.md §C, §D.4): reasoning first (one block per reasoning
 * item; a signature with no text before it still gets one), then the text and the images made,
 * then a refusal, then the tool calls, their names restored to the client's.
 */
export function decodeChatAnswer(completion: Json, toolNames: ToolNames): CanonicalAnswer {
  const choice = asObject(asArray(completion['choices'])[0]);
  const message = asObject(choice['message']);
  const blocks: CanonicalBlock[] = [];

  let thinking: { block: { type: 'reasoning'; text: string; signature: string }; index: number | undefined } | null = null;
  for (const piece of reasoningPieces(message)) {
    if (piece.kind === 'encrypted') {
      blocks.push({ type: 'opaque_reasoning', data: piece.value });
      thinking = null;
      continue;
    }
    const sameItem = thinking !== null && (piece.index === undefined || thinking.index === undefined || thinking.index === piece.index);
    const fresh = !sameItem || (piece.kind === 'text' && thinking !== null && thinking.block.signature !== '');
    if (thinking === null || fresh) {
      thinking = { block: { type: 'reasoning', text: '', signature: '' }, index: piece.index };
      blocks.push(thinking.block);
    }
    if (piece.kind === 'text') thinking.block.text += piece.value;
    else thinking.block.signature = piece.value;
  }

  const text = textOf(message['content']);
  if (text !== '') blocks.push({ type: 'text', text });
  for (const raw of asArray(message['images'])) {
    const url = asString(asObject(asObject(raw)['image_url'])['url']);
    if (url !== undefined && url !== '') blocks.push({ type: 'image', url });
  }
  const refusal = asString(message['refusal']);
  if (refusal) blocks.push({ type: 'refusal', text: refusal });
  for (const raw of asArray(message['tool_calls'])) {
    const call = asObject(raw);
    const fn = asObject(call['function']);
    blocks.push({ type: 'tool_call', id: asString(call['id']) ?? '', name: toolNames.client(asString(fn['name']) ?? ''), arguments: argumentsText(fn['arguments']) });
  }

  const finish = asString(choice['finish_reason']);
  // vLLM names the stop string that matched (choices[].stop_reason); OpenAI does not, and then a
  // stop sequence cannot be told from a natural end (protocol.md §D.4; peers.md §2 #20).
  const matched = finish === 'stop' ? asString(choice['stop_reason']) : undefined;
  return {
    id: asString(completion['id']),
    model: asString(completion['model']) ?? '',
    blocks,
    stop: refusal ? 'refusal' : matched !== undefined ? 'stop_sequence' : stopReasonFromFinish(finish),
    stopSequence: matched,
    usage: canonicalUsageFromChat(asObject(completion['usage'])),
  };
}

export interface ChatAnswerOptions {
  readonly created: number;
}

/**
 * Canonical → a Chat completion (protocol.md §D.4): texts join into `content`, tool calls keep
 * their ids, reasoning becomes `reasoning` plus OpenRouter-style `reasoning_details` carrying the
 * signatures, so a Chat client can send it back and Claude can continue a tool loop (§D.7).
 */
export function encodeChatAnswer(answer: CanonicalAnswer, options: ChatAnswerOptions): ChatCompletion {
  const texts: string[] = [];
  const toolCalls: Json[] = [];
  const reasoning: string[] = [];
  const details: Json[] = [];
  let refusal: string | null = null;
  for (const block of answer.blocks) {
    switch (block.type) {
      case 'text':
        texts.push(block.text);
        break;
      case 'image':
        texts.push(imageMarkdown(block.url));
        break;
      case 'refusal':
        refusal = (refusal ?? '') + block.text;
        break;
      case 'tool_call':
        toolCalls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: block.arguments } });
        break;
      case 'reasoning':
        reasoning.push(block.text);
        details.push({ type: 'reasoning.text', text: block.text, signature: block.signature, format: REASONING_FORMAT, index: details.length });
        break;
      case 'opaque_reasoning':
        details.push({ type: 'reasoning.encrypted', data: block.data, format: REASONING_FORMAT, index: details.length });
        break;
    }
  }
  const message: Json = { role: 'assistant', content: texts.length > 0 ? texts.join('') : null, refusal };
  if (toolCalls.length > 0) message['tool_calls'] = toolCalls;
  if (reasoning.length > 0) message['reasoning'] = reasoning.join('');
  if (details.length > 0) message['reasoning_details'] = details;
  return {
    id: answer.id ?? 'chatcmpl-gateway',
    object: 'chat.completion',
    created: options.created,
    model: answer.model,
    choices: [
      {
        index: 0,
        message: message as unknown as ChatCompletion['choices'][number]['message'],
        logprobs: null,
        finish_reason: finishFromStopReason(answer.stop),
        // Chat has no field for the matched stop sequence; vLLM's `stop_reason` carries it (peers.md §2 #20).
        ...(answer.stop === 'stop_sequence' && answer.stopSequence !== undefined && { stop_reason: answer.stopSequence }),
      },
    ],
    usage: chatUsageOf(answer.usage),
  };
}

/** A message's text, from a string or text parts. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return asArray(content)
    .map((part) => asString(asObject(part)['text']) ?? '')
    .join('');
}

/**
 * Images a Chat model generated (OpenRouter's `images`, protocol.md §C.4), for a stream's text
 * deltas: most formats' answers cannot hold images, so they become Markdown images (peers.md §2 #34).
 */
export function imagesAsMarkdown(images: unknown): string {
  // Most chunks have none: no arrays and closures per chunk for nothing (issue #17).
  if (!Array.isArray(images) || images.length === 0) return '';
  return images
    .map((raw) => asString(asObject(asObject(raw)['image_url'])['url']))
    .filter((url): url is string => url !== undefined && url !== '')
    .map(imageMarkdown)
    .join('');
}
