import { asObject, asString, type Json } from './json.ts';
import { REASONING_FORMAT } from './messages-to-chat-response.ts';
import { finishFromStopReason, type FinishReason } from './stop-reason.ts';
import { chatUsageFromMessages } from './usage.ts';

/**
 * Messages stream events → Chat Completions chunks (protocol.md §D.9).
 * - A role delta comes first. Tool calls are numbered 0, 1… among tool calls only; the first
 *   delta of each carries index, id, type and name, the rest only index and argument text, and
 *   an empty fragment is never sent (peers.md §2 #6).
 * - Thinking streams as `reasoning` text for display. The `reasoning_details` (text and signature
 *   of every thinking block, which a client must send back for Claude to continue a tool loop) go
 *   out once, complete, just before the finish chunk: the OpenAI SDK's accumulator keeps only the
 *   last value of such fields, so fragments or one item per block would lose all but the last.
 * - The finish_reason chunk comes at message_delta; the usage chunk (`choices: []`) only when the
 *   client asked for stream_options.include_usage. The core ends the stream with `[DONE]`.
 */
export interface MessagesToChatStreamOptions {
  readonly id: string;
  readonly created: number;
  readonly includeUsage: boolean;
  readonly jsonTool: string | null;
}

/** A Chat chunk as wire JSON. */
type Chunk = Json;
type BlockRole =
  | { kind: 'text' | 'json' | 'ignored' }
  | { kind: 'tool'; toolIndex: number }
  | { kind: 'thinking'; item: number; text: string; signature: string };

export async function* messagesEventsToChatChunks(events: AsyncIterable<Json>, options: MessagesToChatStreamOptions): AsyncGenerator<Chunk> {
  let model = '';
  let toolCount = 0;
  let reasoningItems = 0;
  let usage: Json = {};
  let answeredByJsonTool = false;
  const details: Json[] = [];
  const blocks = new Map<number, BlockRole>();
  const chunk = (delta: Json, finish: FinishReason | null = null): Chunk => ({
    id: options.id,
    object: 'chat.completion.chunk',
    created: options.created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
    ...(options.includeUsage && { usage: null }),
  });

  for await (const event of events) {
    switch (event['type']) {
      case 'message_start': {
        const message = asObject(event['message']);
        model = asString(message['model']) ?? '';
        usage = { ...asObject(message['usage']) };
        yield chunk({ role: 'assistant', content: '' });
        break;
      }
      case 'content_block_start': {
        const index = Number(event['index']);
        const block = asObject(event['content_block']);
        // A start event may already carry content (the SDK keeps it); it is passed on too.
        const input = asObject(block['input']);
        const prefilled = Object.keys(input).length > 0 ? JSON.stringify(input) : '';
        if (block['type'] === 'tool_use' && options.jsonTool !== null && block['name'] === options.jsonTool) {
          blocks.set(index, { kind: 'json' });
          answeredByJsonTool = true;
          if (prefilled) yield chunk({ content: prefilled });
        } else if (block['type'] === 'tool_use') {
          const toolIndex = toolCount++;
          blocks.set(index, { kind: 'tool', toolIndex });
          yield chunk({
            tool_calls: [{ index: toolIndex, id: block['id'], type: 'function', function: { name: block['name'], arguments: prefilled } }],
          });
        } else if (block['type'] === 'thinking') {
          blocks.set(index, { kind: 'thinking', item: reasoningItems++, text: asString(block['thinking']) ?? '', signature: asString(block['signature']) ?? '' });
          if (asString(block['thinking'])) yield chunk({ reasoning: block['thinking'] });
        } else if (block['type'] === 'redacted_thinking') {
          blocks.set(index, { kind: 'ignored' });
          details.push({ type: 'reasoning.encrypted', data: block['data'], format: REASONING_FORMAT, index: reasoningItems++ });
        } else if (block['type'] === 'text') {
          blocks.set(index, { kind: 'text' });
          if (asString(block['text'])) yield chunk({ content: block['text'] });
        } else {
          blocks.set(index, { kind: 'ignored' });
        }
        break;
      }
      case 'content_block_delta': {
        const role = blocks.get(Number(event['index']));
        const out = role === undefined ? null : deltaFor(role, asObject(event['delta']));
        if (out) yield chunk(out);
        break;
      }
      case 'content_block_stop': {
        const role = blocks.get(Number(event['index']));
        if (role?.kind === 'thinking') {
          details.push({ type: 'reasoning.text', text: role.text, signature: role.signature, format: REASONING_FORMAT, index: role.item });
        }
        break;
      }
      case 'message_delta': {
        usage = { ...usage, ...definedOnly(asObject(event['usage'])) };
        if (details.length > 0) yield chunk({ reasoning_details: details.splice(0) });
        const stop = asString(asObject(event['delta'])['stop_reason']);
        const matched = asString(asObject(event['delta'])['stop_sequence']);
        const finishChunk = chunk({}, answeredByJsonTool && stop === 'tool_use' ? 'stop' : finishFromStopReason(stop));
        if (stop === 'stop_sequence' && matched !== undefined) (finishChunk['choices'] as Json[])[0]!['stop_reason'] = matched;
        yield finishChunk;
        if (options.includeUsage) yield { ...chunk({}), choices: [], usage: chatUsageFromMessages(usage) };
        break;
      }
      default:
        break; // ping and message_stop carry nothing for Chat
    }
  }
}

function deltaFor(role: BlockRole, delta: Json): Json | null {
  switch (delta['type']) {
    case 'text_delta': {
      const text = asString(delta['text']);
      return text && role.kind === 'text' ? { content: text } : null;
    }
    case 'input_json_delta': {
      const fragment = asString(delta['partial_json']);
      if (!fragment) return null;
      if (role.kind === 'json') return { content: fragment };
      return role.kind === 'tool' ? { tool_calls: [{ index: role.toolIndex, function: { arguments: fragment } }] } : null;
    }
    case 'thinking_delta': {
      const text = asString(delta['thinking']);
      if (!text || role.kind !== 'thinking') return null;
      role.text += text;
      return { reasoning: text };
    }
    case 'signature_delta':
      // Kept for the block's complete reasoning_details item at content_block_stop.
      if (role.kind === 'thinking') role.signature = asString(delta['signature']) ?? role.signature;
      return null;
    default:
      return null;
  }
}

/** message_delta usage is cumulative; null fields keep earlier values (protocol.md §A.8). */
function definedOnly(usage: Json): Json {
  return Object.fromEntries(Object.entries(usage).filter(([, v]) => v !== null && v !== undefined));
}
