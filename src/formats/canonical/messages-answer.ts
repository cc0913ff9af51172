import type { Message } from '../wire.ts';
import { asArray, asObject, asString, type Json } from '../convert/json.ts';
import { safeToolUseId } from '../convert/tool-names.ts';
import { canonicalUsageFromMessages, messagesUsageOf } from '../convert/usage.ts';
import { imageMarkdown, type CanonicalAnswer, type CanonicalBlock, type CanonicalStop } from './answer.ts';

const STOPS: ReadonlySet<string> = new Set<CanonicalStop>(['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal', 'model_context_window_exceeded']);

/**
 * A Message → canonical. Server-tool blocks (`server_tool_use`, `web_search_tool_result`…) are
 * Anthropic's bookkeeping of tools it ran itself: no other format has a field for them, so they
 * are left out here (the rule 1 exception, canonical/answer.ts). `jsonTool` names the forced tool
 * that emulated structured output for this upstream (messages-request-encode.ts).
 */
export function decodeMessagesAnswer(message: Json, jsonTool: string | null = null): CanonicalAnswer {
  let answeredByJsonTool = false;
  const blocks: CanonicalBlock[] = [];
  for (const raw of asArray(message['content'])) {
    const block = asObject(raw);
    switch (block['type']) {
      case 'text':
        blocks.push({ type: 'text', text: asString(block['text']) ?? '' });
        break;
      case 'tool_use':
        // The forced tool that emulates structured output: its input is the answer's text.
        if (jsonTool !== null && block['name'] === jsonTool) {
          answeredByJsonTool = true;
          blocks.push({ type: 'text', text: JSON.stringify(block['input'] ?? {}) });
          break;
        }
        blocks.push({ type: 'tool_call', id: asString(block['id']) ?? '', name: asString(block['name']) ?? '', arguments: JSON.stringify(block['input'] ?? {}) });
        break;
      case 'thinking': {
        const signature = asString(block['signature']);
        blocks.push({ type: 'reasoning', text: asString(block['thinking']) ?? '', ...(signature !== undefined && { signature }) });
        break;
      }
      case 'redacted_thinking':
        blocks.push({ type: 'opaque_reasoning', data: asString(block['data']) ?? '' });
        break;
      default:
        break;
    }
  }
  const reason = asString(message['stop_reason']) ?? 'end_turn';
  const stop = answeredByJsonTool && reason === 'tool_use' ? 'end_turn' : reason;
  return {
    id: asString(message['id']),
    model: asString(message['model']) ?? '',
    blocks,
    stop: STOPS.has(stop) ? (stop as CanonicalStop) : 'end_turn',
    stopSequence: asString(message['stop_sequence']),
    usage: canonicalUsageFromMessages(asObject(message['usage'])),
  };
}

/**
 * Canonical → a Message (protocol.md §D.4). Messages has no image or refusal block: an image goes
 * into the text it follows as a Markdown image, data and all (peers.md §2 #34), and a refusal is
 * said as text. A reasoning block with no signature gets an empty one: a signature is never
 * invented (§D.7). Fields with no value are left out, not null (issue #12).
 */
export function encodeMessagesAnswer(answer: CanonicalAnswer): Message {
  const content: Json[] = [];
  let text: Json | null = null;
  for (const block of answer.blocks) {
    if (block.type === 'image' && text !== null) {
      text['text'] = String(text['text']) + imageMarkdown(block.url);
      continue;
    }
    text = null;
    switch (block.type) {
      case 'text':
        text = { type: 'text', text: block.text };
        content.push(text);
        break;
      case 'image':
        text = { type: 'text', text: imageMarkdown(block.url) };
        content.push(text);
        break;
      case 'refusal':
        content.push({ type: 'text', text: block.text });
        break;
      case 'reasoning':
        content.push({ type: 'thinking', thinking: block.text, signature: block.signature ?? '' });
        break;
      case 'opaque_reasoning':
        content.push({ type: 'redacted_thinking', data: block.data });
        break;
      case 'tool_call':
        content.push({ type: 'tool_use', id: safeToolUseId(block.id === '' ? undefined : block.id), name: block.name, input: parseArguments(block.arguments) });
        break;
    }
  }
  return {
    id: answer.id ?? 'msg_gateway',
    type: 'message',
    role: 'assistant',
    model: answer.model,
    content: content as unknown as Message['content'],
    stop_reason: answer.stop,
    stop_sequence: answer.stopSequence ?? null,
    usage: messagesUsageOf(answer.usage),
  };
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
