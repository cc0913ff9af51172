import { ERR } from '../../errors.ts';
import type { ChatDialect } from './dialect.ts';
import { asArray, asNumber, asObject, asString, isObject, type Json } from './json.ts';
import { cacheControlOf, describeBlock, toolResultContent, userParts, type ChatPart } from './messages-content.ts';
import { ToolNames } from './tool-names.ts';
import { unwrapReasoningDetail } from './opaque-reasoning.ts';

/**
 * A Messages request → a Chat Completions request (protocol.md §D.1, §D.2). Fields with no
 * Chat equivalent that only steer Anthropic's servers (context_management, container,
 * service_tier, mcp_servers) are left out; content is never dropped silently.
 */
export interface ChatRequestConversion {
  readonly body: Json;
  /** Restores tool names that had to be shortened for the upstream. */
  readonly toolNames: ToolNames;
}

export interface MessagesToChatOptions {
  readonly model: string;
  readonly dialect: ChatDialect;
  /** The catalogue's max_output_tokens: larger requests are clamped to it (peers.md §2 #19). */
  readonly maxOutputTokens: number | null;
}

export function messagesToChatRequest(request: Json, options: MessagesToChatOptions): ChatRequestConversion {
  const { dialect } = options;
  if (asArray(request['mcp_servers']).length > 0) {
    throw ERR.invalidField('mcp_servers: MCP servers are run by Anthropic’s API; this model’s upstream cannot use them', 'mcp_servers');
  }
  const toolNames = new ToolNames();
  const messages: Json[] = [];
  const system = systemMessage(request['system'], dialect);
  if (system) messages.push(system);
  for (const raw of asArray(request['messages'])) messages.push(...convertMessage(asObject(raw), dialect, toolNames));

  const body: Json = { model: options.model, messages };
  const maxTokens = asNumber(request['max_tokens']);
  if (maxTokens !== undefined) {
    body[dialect.maxTokensField] = options.maxOutputTokens === null ? maxTokens : Math.min(maxTokens, options.maxOutputTokens);
  }
  for (const field of ['temperature', 'top_p'] as const) {
    if (request[field] !== undefined) body[field] = request[field];
  }
  if (request['top_k'] !== undefined && dialect.topK) body['top_k'] = request['top_k'];
  const stops = asArray(request['stop_sequences']);
  if (stops.length > 4) {
    throw ERR.invalidField('stop_sequences: this model’s upstream accepts at most 4 stop sequences', 'stop_sequences');
  }
  if (stops.length > 0) body['stop'] = stops;
  const userId = asString(asObject(request['metadata'])['user_id']);
  if (userId !== undefined) body['user'] = userId;
  if (request['stream'] === true) {
    body['stream'] = true;
    // Usage arrives only in the final chunk, and only when asked for (protocol.md §B.6).
    body['stream_options'] = { include_usage: true };
  }
  Object.assign(body, toolFields(request, toolNames), reasoningFields(request, dialect), formatFields(request));
  return { body, toolNames };
}

function systemMessage(system: unknown, dialect: ChatDialect): Json | undefined {
  if (typeof system === 'string') return system === '' ? undefined : { role: 'system', content: system };
  const parts = asArray(system).map((b) => {
    const block = asObject(b);
    return { type: 'text', text: asString(block['text']) ?? '', ...cacheControlOf(block, dialect) };
  });
  if (parts.length === 0) return undefined;
  return { role: 'system', content: parts.length === 1 && !('cache_control' in parts[0]!) ? parts[0]!.text : parts };
}

function convertMessage(message: Json, dialect: ChatDialect, toolNames: ToolNames): Json[] {
  const role = asString(message['role']);
  const content = message['content'];
  if (typeof content === 'string') return [{ role, content }];
  const blocks = asArray(content).map(asObject);
  if (role === 'assistant') return [assistantMessage(blocks, dialect, toolNames)];
  if (role === 'system') {
    return [{ role: 'system', content: blocks.flatMap((b) => userParts(b, dialect)) }];
  }
  // A user turn: its tool results become `tool` messages first, so they directly follow the
  // assistant's tool_calls as OpenAI requires (protocol.md §B.3); the rest of the turn follows.
  const out: Json[] = [];
  const parts: ChatPart[] = [];
  for (const block of blocks) {
    if (block['type'] !== 'tool_result') {
      parts.push(...userParts(block, dialect));
      continue;
    }
    const id = asString(block['tool_use_id']) ?? '';
    const { text, images } = toolResultContent(block, dialect);
    out.push({ role: 'tool', tool_call_id: id, content: text });
    if (images.length > 0) parts.push({ type: 'text', text: `Images returned by tool call ${id}:` }, ...images);
  }
  if (parts.length > 0) out.push({ role: 'user', content: parts });
  return out;
}

function assistantMessage(blocks: Json[], dialect: ChatDialect, toolNames: ToolNames): Json {
  const texts: ChatPart[] = [];
  const toolCalls: Json[] = [];
  const reasoningText: string[] = [];
  const reasoningDetails: Json[] = [];
  for (const block of blocks) {
    switch (block['type']) {
      case 'text':
        texts.push({ type: 'text', text: asString(block['text']) ?? '' });
        break;
      case 'tool_use':
        toolCalls.push({
          id: asString(block['id']) ?? '',
          type: 'function',
          function: { name: toolNames.upstream(asString(block['name']) ?? ''), arguments: JSON.stringify(block['input'] ?? {}) },
        });
        break;
      case 'thinking': {
        const text = asString(block['thinking']) ?? '';
        reasoningText.push(text);
        // Another vendor's item comes back exactly as it was sent (opaque-reasoning.ts).
        const original = unwrapReasoningDetail(block['signature']);
        reasoningDetails.push(
          original
            ? { ...original, text }
            : {
                type: 'reasoning.text',
                text,
                ...(asString(block['signature']) ? { signature: block['signature'] } : {}),
                format: 'anthropic-claude-v1',
                index: reasoningDetails.length,
              },
        );
        break;
      }
      case 'redacted_thinking':
        reasoningDetails.push(
          unwrapReasoningDetail(block['data']) ?? {
            type: 'reasoning.encrypted',
            data: asString(block['data']) ?? '',
            format: 'anthropic-claude-v1',
            index: reasoningDetails.length,
          },
        );
        break;
      default:
        texts.push({ type: 'text', text: describeBlock(block) });
    }
  }
  const message: Json = { role: 'assistant', content: joinTexts(texts) };
  if (toolCalls.length > 0) message['tool_calls'] = toolCalls;
  // Thinking goes back the way the upstream takes it (§D.7); OpenAI's Chat API takes none.
  if (dialect.reasoning === 'reasoning_details' && reasoningDetails.length > 0) {
    message['reasoning'] = reasoningText.join('');
    message['reasoning_details'] = reasoningDetails;
  } else if (dialect.reasoning === 'reasoning_content' && reasoningText.length > 0) {
    message['reasoning_content'] = reasoningText.join('');
  }
  return message;
}

function joinTexts(parts: ChatPart[]): string | ChatPart[] | null {
  if (parts.length === 0) return null;
  return parts.length === 1 ? String(parts[0]!['text']) : parts;
}

function toolFields(request: Json, toolNames: ToolNames): Json {
  const tools = asArray(request['tools']).map(asObject);
  if (tools.length === 0) return {};
  const out: Json = {
    tools: tools.map((tool, i) => {
      const type = asString(tool['type']);
      if (type !== undefined && type !== 'custom') {
        throw ERR.invalidField(
          `tools.${i}: the ${type} tool runs on Anthropic's servers and has no equivalent on this model's upstream`,
          `tools.${i}.type`,
        );
      }
      return {
        type: 'function',
        function: {
          name: toolNames.upstream(asString(tool['name']) ?? ''),
          ...(tool['description'] !== undefined && { description: tool['description'] }),
          parameters: isObject(tool['input_schema']) ? tool['input_schema'] : { type: 'object', properties: {} },
        },
      };
    }),
  };
  const choice = asObject(request['tool_choice']);
  switch (choice['type']) {
    case 'auto':
      out['tool_choice'] = 'auto';
      break;
    case 'any':
      out['tool_choice'] = 'required'; // not "any", which OpenAI refuses (protocol.md §D.11)
      break;
    case 'none':
      out['tool_choice'] = 'none';
      break;
    case 'tool':
      out['tool_choice'] = { type: 'function', function: { name: toolNames.upstream(asString(choice['name']) ?? '') } };
      break;
    default:
      break;
  }
  if (choice['disable_parallel_tool_use'] === true) out['parallel_tool_calls'] = false;
  return out;
}

type Effort = 'minimal' | 'low' | 'medium' | 'high';

/** thinking → the upstream's reasoning request (protocol.md §D.1; budgets bucketed as LiteLLM does). */
function reasoningFields(request: Json, dialect: ChatDialect): Json {
  const thinking = asObject(request['thinking']);
  if (thinking['type'] !== 'enabled' && thinking['type'] !== 'adaptive') return {};
  const budget = asNumber(thinking['budget_tokens']);
  const effort = effortOf(budget, asString(asObject(request['output_config'])['effort']));
  switch (dialect.reasoning) {
    case 'reasoning_effort':
      return { reasoning_effort: effort };
    case 'reasoning_details':
      return { reasoning: budget !== undefined ? { max_tokens: budget } : { effort } };
    default:
      return {};
  }
}

function effortOf(budget: number | undefined, requested: string | undefined): Effort {
  if (budget !== undefined) return budget >= 4096 ? 'high' : budget >= 2048 ? 'medium' : budget >= 1024 ? 'low' : 'minimal';
  if (requested === 'low' || requested === 'medium' || requested === 'high') return requested;
  return requested === 'max' ? 'high' : 'medium';
}

/**
 * output_config.format (structured output) → response_format (protocol.md §D.1). Not `strict`:
 * OpenAI's strict mode accepts only schemas whose properties are all required with
 * additionalProperties false, and rewriting a schema into that shape changes what it means.
 */
function formatFields(request: Json): Json {
  const format = asObject(asObject(request['output_config'])['format'] ?? request['output_format']);
  if (format['type'] !== 'json_schema') return {};
  return { response_format: { type: 'json_schema', json_schema: { name: 'structured_output', schema: format['schema'] ?? {} } } };
}
