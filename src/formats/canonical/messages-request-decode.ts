import { ERR } from '../../errors.ts';
import { asArray, asNumber, asObject, asString, isObject, type Json } from '../convert/json.ts';
import type { CanonicalPart, CanonicalReasoning, CanonicalRequest, CanonicalSource, CanonicalTool, CanonicalToolChoice, CanonicalTurn } from './request.ts';

/**
 * A Messages request → canonical (protocol.md §A). Blocks with no canonical kind (search
 * results, server-tool blocks, anything newer) become text that says what they were, so the
 * model still sees them (rule 1). What only Anthropic's servers can do is refused here: the
 * request is being translated, so it is not going to them.
 */
export function decodeMessagesRequest(request: Json): CanonicalRequest {
  if (asArray(request['mcp_servers']).length > 0) {
    throw ERR.invalidField('mcp_servers: MCP servers are run by Anthropic’s API; this model’s upstream cannot use them', 'mcp_servers');
  }
  const turns: CanonicalTurn[] = [];
  const system = request['system'];
  if (typeof system === 'string') {
    if (system !== '') turns.push({ role: 'system', parts: [{ type: 'text', text: system }], plain: true });
  } else {
    const blocks = asArray(system).map(asObject);
    const parts = blocks.map((block): CanonicalPart => ({ type: 'text', text: asString(block['text']) ?? '', ...cacheControl(block) }));
    if (parts.length > 0) turns.push({ role: 'system', parts, plain: blocks.length === 1 && !isObject(blocks[0]!['cache_control']) });
  }
  for (const raw of asArray(request['messages'])) {
    const message = asObject(raw);
    const role = message['role'] === 'assistant' ? 'assistant' : message['role'] === 'system' ? 'system' : 'user';
    const content = message['content'];
    if (typeof content === 'string') turns.push({ role, parts: [{ type: 'text', text: content }], plain: true });
    else turns.push({ role, parts: asArray(content).flatMap((b) => partsOf(asObject(b))) });
  }
  const thinking = asObject(request['thinking']);
  const outputConfig = asObject(request['output_config']);
  const format = asObject(outputConfig['format'] ?? request['output_format']);
  const choice = toolChoiceOf(asObject(request['tool_choice']));
  return {
    turns,
    tools: asArray(request['tools']).map((t, i) => toolOf(asObject(t), i)),
    toolChoice: choice,
    parallelToolCalls: asObject(request['tool_choice'])['disable_parallel_tool_use'] === true ? false : undefined,
    maxTokens: asNumber(request['max_tokens']),
    temperature: asNumber(request['temperature']),
    topP: asNumber(request['top_p']),
    topK: asNumber(request['top_k']),
    stop: asArray(request['stop_sequences']).filter((s): s is string => typeof s === 'string'),
    user: asString(asObject(request['metadata'])['user_id']),
    stream: request['stream'] === true,
    reasoning: thinking['type'] === 'enabled' || thinking['type'] === 'adaptive' ? reasoningOf(asNumber(thinking['budget_tokens']), asString(outputConfig['effort'])) : undefined,
    format: format['type'] === 'json_schema' ? { type: 'json_schema', schema: asObject(format['schema']) } : undefined,
    cacheControl: isObject(request['cache_control']) ? request['cache_control'] : undefined,
    fields: { maxTokens: 'max_tokens', stop: 'stop_sequences', reasoning: 'thinking', format: 'output_config.format' },
  };
}

function reasoningOf(budget: number | undefined, effort: string | undefined): CanonicalReasoning {
  return { ...(budget !== undefined && { budget }), ...(effort !== undefined && { effort }) };
}

function cacheControl(block: Json): { cacheControl?: Json } {
  return isObject(block['cache_control']) ? { cacheControl: block['cache_control'] } : {};
}

/** A block with no canonical kind, said as text so the model still sees it. */
function describeBlock(block: Json): string {
  const { cache_control: _ignored, ...rest } = block;
  return `[${String(block['type'])} block: ${JSON.stringify(rest)}]`;
}

function sourceOf(source: Json): CanonicalSource | undefined {
  switch (source['type']) {
    case 'base64':
      return { kind: 'base64', mediaType: asString(source['media_type']) ?? 'application/octet-stream', data: asString(source['data']) ?? '' };
    case 'url':
      return { kind: 'url', url: asString(source['url']) ?? '' };
    case 'file':
      return { kind: 'file', fileId: asString(source['file_id']) ?? '' };
    case 'text':
      return { kind: 'text', text: asString(source['data']) ?? '' };
    default:
      return undefined;
  }
}

function partsOf(block: Json): CanonicalPart[] {
  switch (block['type']) {
    case 'text':
      return [{ type: 'text', text: asString(block['text']) ?? '', ...cacheControl(block) }];
    case 'image': {
      const source = sourceOf(asObject(block['source']));
      if (source === undefined || source.kind === 'text') return [{ type: 'text', text: `[image from ${String(asObject(block['source'])['type'])} source cannot be sent to this model]` }];
      return [{ type: 'image', source, ...cacheControl(block) }];
    }
    case 'document': {
      const raw = asObject(block['source']);
      const title = asString(block['title']);
      if (raw['type'] === 'content') {
        // A document made of blocks: its texts (protocol.md §A.4).
        return asArray(raw['content']).flatMap((inner): CanonicalPart[] => {
          const text = asString(asObject(inner)['text']);
          return text === undefined ? [] : [{ type: 'text', text }];
        });
      }
      const source = sourceOf(raw);
      if (source === undefined) return [{ type: 'text', text: `[document from ${String(raw['type'])} source cannot be sent to this model]` }];
      return [{ type: 'document', source, ...(title !== undefined && { title }), ...cacheControl(block) }];
    }
    case 'search_result': {
      const texts = asArray(block['content']).map((c) => asString(asObject(c)['text']) ?? '').join('\n');
      return [{ type: 'text', text: `Search result: ${asString(block['title']) ?? ''} (${asString(block['source']) ?? ''})\n${texts}` }];
    }
    case 'tool_result': {
      const content = block['content'];
      const inner = typeof content === 'string' ? [{ type: 'text' as const, text: content }] : asArray(content).flatMap((c) => partsOf(asObject(c)));
      return [{ type: 'tool_result', id: asString(block['tool_use_id']) ?? '', content: inner, isError: block['is_error'] === true, ...cacheControl(block) }];
    }
    case 'tool_use':
      return [{ type: 'tool_call', id: asString(block['id']) ?? '', name: asString(block['name']) ?? '', arguments: JSON.stringify(block['input'] ?? {}) }];
    case 'thinking': {
      const signature = asString(block['signature']);
      return [{ type: 'reasoning', text: asString(block['thinking']) ?? '', ...(signature !== undefined && signature !== '' && { signature }) }];
    }
    case 'redacted_thinking':
      return [{ type: 'opaque_reasoning', data: asString(block['data']) ?? '' }];
    default:
      return [{ type: 'text', text: describeBlock(block) }];
  }
}

function toolOf(tool: Json, i: number): CanonicalTool {
  const type = asString(tool['type']);
  if (type !== undefined && type !== 'custom') {
    throw ERR.invalidField(`tools.${i}: the ${type} tool runs on Anthropic's servers and has no equivalent on this model's upstream`, `tools.${i}.type`);
  }
  const description = asString(tool['description']);
  return {
    name: asString(tool['name']) ?? '',
    ...(description !== undefined && { description }),
    parameters: isObject(tool['input_schema']) ? tool['input_schema'] : { type: 'object', properties: {} },
    ...(typeof tool['strict'] === 'boolean' && { strict: tool['strict'] }),
    ...cacheControl(tool),
  };
}

function toolChoiceOf(choice: Json): CanonicalToolChoice | undefined {
  switch (choice['type']) {
    case 'auto':
    case 'any':
    case 'none':
      return { type: choice['type'] };
    case 'tool':
      return { type: 'tool', name: asString(choice['name']) ?? '' };
    default:
      return undefined;
  }
}
