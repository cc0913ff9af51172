import type { ChatCompletion } from '../wire.ts';
import { asArray, asObject, asString, type Json } from './json.ts';
import { finishFromStopReason } from './stop-reason.ts';
import { chatUsageFromMessages } from './usage.ts';

/**
 * A Message → a Chat completion (protocol.md §D.4). Text blocks join into `content`; tool_use
 * becomes `tool_calls` with JSON `arguments` and the same ids; thinking becomes `reasoning` plus
 * OpenRouter-style `reasoning_details` carrying the signatures, so a Chat client can send the
 * thinking back and Claude can continue a tool loop (§D.7).
 */
export interface MessagesToChatOptions {
  /** The forced tool that emulates response_format: its input is the answer's content. */
  readonly jsonTool: string | null;
  readonly created: number;
}

export const REASONING_FORMAT = 'anthropic-claude-v1';

export function messageToChat(message: Json, options: MessagesToChatOptions): ChatCompletion {
  const texts: string[] = [];
  const toolCalls: Json[] = [];
  const reasoning: string[] = [];
  const details: Json[] = [];
  let answeredByJsonTool = false;
  for (const raw of asArray(message['content'])) {
    const block = asObject(raw);
    switch (block['type']) {
      case 'text':
        texts.push(asString(block['text']) ?? '');
        break;
      case 'tool_use':
        if (options.jsonTool !== null && block['name'] === options.jsonTool) {
          texts.push(JSON.stringify(block['input'] ?? {}));
          answeredByJsonTool = true;
        } else {
          toolCalls.push({
            id: asString(block['id']) ?? '',
            type: 'function',
            function: { name: asString(block['name']) ?? '', arguments: JSON.stringify(block['input'] ?? {}) },
          });
        }
        break;
      case 'thinking':
        reasoning.push(asString(block['thinking']) ?? '');
        details.push({ type: 'reasoning.text', text: block['thinking'], signature: block['signature'], format: REASONING_FORMAT, index: details.length });
        break;
      case 'redacted_thinking':
        details.push({ type: 'reasoning.encrypted', data: block['data'], format: REASONING_FORMAT, index: details.length });
        break;
      default:
        break; // server tool blocks are Anthropic-side bookkeeping with no Chat field
    }
  }
  const out: Json = { role: 'assistant', content: texts.length > 0 ? texts.join('') : null, refusal: null };
  if (toolCalls.length > 0) out['tool_calls'] = toolCalls;
  if (reasoning.length > 0) out['reasoning'] = reasoning.join('');
  if (details.length > 0) out['reasoning_details'] = details;
  const stop = asString(message['stop_reason']);
  return {
    id: asString(message['id']) ?? 'chatcmpl-gateway',
    object: 'chat.completion',
    created: options.created,
    model: asString(message['model']) ?? '',
    choices: [
      {
        index: 0,
        message: out as unknown as ChatCompletion['choices'][number]['message'],
        logprobs: null,
        finish_reason: answeredByJsonTool && stop === 'tool_use' ? 'stop' : finishFromStopReason(stop),
        // Chat has no field for the matched stop sequence; vLLM's `stop_reason` carries it (peers.md §2 #20).
        ...(stop === 'stop_sequence' && typeof message['stop_sequence'] === 'string' && { stop_reason: message['stop_sequence'] }),
      },
    ],
    usage: chatUsageFromMessages(asObject(message['usage'])),
  };
}
