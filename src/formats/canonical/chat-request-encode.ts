import { ERR } from '../../errors.ts';
import type { ChatDialect } from '../convert/dialect.ts';
import type { Json } from '../convert/json.ts';
import { unwrapReasoningDetail } from '../convert/opaque-reasoning.ts';
import { ToolNames } from '../convert/tool-names.ts';
import { REASONING_FORMAT } from './chat-answer.ts';
import { effortOf, type CanonicalPart, type CanonicalRequest, type CanonicalTurn } from './request.ts';

/**
 * Canonical → a Chat Completions request (protocol.md §D.1, §D.2). Content with no Chat part
 * becomes a text note that says what it was; tool names that do not fit OpenAI's pattern are
 * shortened reversibly (`toolNames`, which the Chat decoders use to restore them).
 */
export interface ChatRequestEncoding {
  readonly body: Json;
  readonly toolNames: ToolNames;
}

export interface ChatEncodeOptions {
  readonly model: string;
  readonly dialect: ChatDialect;
  /** The catalogue's max_output_tokens: larger requests are clamped to it (peers.md §2 #19). */
  readonly maxOutputTokens: number | null;
}

type ChatPart = Json & { type: string };

export function encodeChatRequest(request: CanonicalRequest, options: ChatEncodeOptions): ChatRequestEncoding {
  const { dialect } = options;
  const toolNames = new ToolNames();
  const messages: Json[] = [];
  for (const turn of request.turns) messages.push(...messagesOf(turn, dialect, toolNames));
  const body: Json = { model: options.model, messages };
  if (request.maxTokens !== undefined) {
    body[dialect.maxTokensField] = options.maxOutputTokens === null ? request.maxTokens : Math.min(request.maxTokens, options.maxOutputTokens);
  }
  if (request.temperature !== undefined) body['temperature'] = request.temperature;
  if (request.topP !== undefined) body['top_p'] = request.topP;
  if (request.topK !== undefined && dialect.topK) body['top_k'] = request.topK;
  if (request.stop.length > 4) throw ERR.invalidField(`${request.fields.stop}: this model’s upstream accepts at most 4 stop sequences`, request.fields.stop);
  if (request.stop.length > 0) body['stop'] = [...request.stop];
  if (request.user !== undefined) body['user'] = request.user;
  if (request.stream) {
    body['stream'] = true;
    // Usage arrives only in the final chunk, and only when asked for (protocol.md §B.6).
    body['stream_options'] = { include_usage: true };
  }
  if (request.tools.length > 0) {
    body['tools'] = request.tools.map((tool) => ({
      type: 'function',
      function: {
        name: toolNames.upstream(tool.name),
        ...(tool.description !== undefined && { description: tool.description }),
        parameters: tool.parameters,
        ...(tool.strict !== undefined && { strict: tool.strict }),
      },
    }));
    const choice = request.toolChoice;
    if (choice !== undefined) {
      // `any` is `required`, not "any", which OpenAI refuses (protocol.md §D.11).
      body['tool_choice'] = choice.type === 'tool' ? { type: 'function', function: { name: toolNames.upstream(choice.name) } } : choice.type === 'any' ? 'required' : choice.type;
    }
    if (request.parallelToolCalls === false) body['parallel_tool_calls'] = false;
  }
  if (request.reasoning !== undefined) {
    if (dialect.reasoning === 'reasoning_effort') body['reasoning_effort'] = effortOf(request.reasoning);
    else if (dialect.reasoning === 'reasoning_details') {
      body['reasoning'] = request.reasoning.budget !== undefined ? { max_tokens: request.reasoning.budget } : { effort: effortOf(request.reasoning) };
    }
  }
  const format = request.format;
  if (format?.type === 'json_object') body['response_format'] = { type: 'json_object' };
  else if (format?.type === 'json_schema') {
    // `strict` only when the client asked: OpenAI's strict mode takes only schemas whose
    // properties are all required, and rewriting a schema into that shape changes its meaning.
    const spec = { name: format.name ?? 'structured_output', ...(format.description !== undefined && { description: format.description }), schema: format.schema, ...(format.strict !== undefined && { strict: format.strict }) };
    body['response_format'] = { type: 'json_schema', json_schema: spec };
  }
  return { body, toolNames };
}

/** Keeps `cache_control` only for upstreams that understand it, and never its `ttl` (peers.md §2 #17). */
function cacheOf(cacheControl: Json | undefined, dialect: ChatDialect): Json {
  if (!dialect.cacheControl || cacheControl === undefined || typeof cacheControl['type'] !== 'string') return {};
  return { cache_control: { type: cacheControl['type'] } };
}

const joined = (parts: readonly CanonicalPart[]): string => parts.map((p) => (p.type === 'text' ? p.text : '')).join('');

function messagesOf(turn: CanonicalTurn, dialect: ChatDialect, toolNames: ToolNames): Json[] {
  if (turn.plain) return [{ role: turn.role, content: joined(turn.parts) }];
  if (turn.role === 'assistant') return [assistantMessage(turn.parts, dialect, toolNames)];
  if (turn.role === 'system') return [{ role: 'system', content: turn.parts.flatMap((p) => partsOf(p, dialect)) }];
  // A user turn: its tool results become `tool` messages first, so they directly follow the
  // assistant's tool_calls as OpenAI requires (protocol.md §B.3); the rest of the turn follows.
  const out: Json[] = [];
  const parts: ChatPart[] = [];
  for (const part of turn.parts) {
    if (part.type !== 'tool_result') {
      parts.push(...partsOf(part, dialect));
      continue;
    }
    const texts: string[] = [];
    const images: ChatPart[] = [];
    for (const inner of part.content) {
      if (inner.type === 'image') images.push(...partsOf(inner, dialect));
      else texts.push(...partsOf(inner, dialect).map((p) => (p.type === 'text' ? String(p['text']) : `[${p.type} part]`)));
    }
    // is_error has no field in Chat; it stays visible to the model in the text (issue #3).
    out.push({ role: 'tool', tool_call_id: part.id, content: `${part.isError ? '[tool error] ' : ''}${texts.join('\n')}` });
    if (images.length > 0) parts.push({ type: 'text', text: `Images returned by tool call ${part.id}:` }, ...images);
  }
  if (parts.length > 0) out.push({ role: 'user', content: parts });
  return out;
}

/** One part → Chat content parts; what Chat cannot hold is said as a text note. */
function partsOf(part: CanonicalPart, dialect: ChatDialect): ChatPart[] {
  const note = (text: string): ChatPart[] => [{ type: 'text', text }];
  switch (part.type) {
    case 'text':
      return [{ type: 'text', text: part.text, ...cacheOf(part.cacheControl, dialect) }];
    case 'image': {
      const { source } = part;
      if (source.kind === 'file' || source.kind === 'text') return note(`[image from file source ${JSON.stringify(source.kind === 'file' ? source.fileId : '')} cannot be sent to this model]`);
      const url = source.kind === 'url' ? source.url : `data:${source.mediaType || 'image/png'};base64,${source.data}`;
      return [{ type: 'image_url', image_url: { url, ...(part.detail !== undefined && { detail: part.detail }) }, ...cacheOf(part.cacheControl, dialect) }];
    }
    case 'document': {
      const { source, title } = part;
      switch (source.kind) {
        case 'text':
          return note(`${title === undefined ? '' : `Document: ${title}\n\n`}${source.text}`);
        case 'base64':
          if (dialect.pdf === 'file') return [{ type: 'file', file: { filename: title ?? 'document.pdf', file_data: `data:${source.mediaType};base64,${source.data}` } }];
          return note(`[PDF document${title === undefined ? '' : ` "${title}"`} omitted: this model cannot read PDF files]`);
        case 'url':
          return note(`[document${title === undefined ? '' : ` "${title}"`} at ${source.url}: this model cannot fetch documents by URL]`);
        case 'file':
          return [{ type: 'file', file: { file_id: source.fileId, ...(title !== undefined && { filename: title }) } }];
      }
      return note('[document]');
    }
    default:
      return note(`[${part.type} block: ${JSON.stringify(part)}]`);
  }
}

function assistantMessage(parts: readonly CanonicalPart[], dialect: ChatDialect, toolNames: ToolNames): Json {
  const texts: ChatPart[] = [];
  const toolCalls: Json[] = [];
  const reasoningText: string[] = [];
  const details: Json[] = [];
  for (const part of parts) {
    switch (part.type) {
      case 'text':
        texts.push({ type: 'text', text: part.text });
        break;
      case 'tool_call':
        toolCalls.push({ id: part.id, type: 'function', function: { name: toolNames.upstream(part.name), arguments: part.arguments === '' ? '{}' : part.arguments } });
        break;
      case 'reasoning': {
        reasoningText.push(part.text);
        // Another vendor's item comes back exactly as it was sent (opaque-reasoning.ts).
        const original = unwrapReasoningDetail(part.signature);
        details.push(
          original
            ? { ...original, text: part.text }
            : { type: 'reasoning.text', text: part.text, ...(part.signature !== undefined && { signature: part.signature }), format: REASONING_FORMAT, index: details.length },
        );
        break;
      }
      case 'opaque_reasoning':
        details.push(unwrapReasoningDetail(part.data) ?? { type: 'reasoning.encrypted', data: part.data, format: REASONING_FORMAT, index: details.length });
        break;
      default:
        texts.push(...partsOf(part, dialect).map((p) => (p.type === 'text' ? p : { type: 'text', text: `[${part.type} block]` })));
    }
  }
  // No text and no call (a turn that only reasoned): '' rather than null, which OpenAI refuses
  // without tool_calls (review of issue #14).
  const message: Json = { role: 'assistant', content: texts.length === 0 ? (toolCalls.length > 0 ? null : '') : texts.length === 1 ? String(texts[0]!['text']) : texts };
  if (toolCalls.length > 0) message['tool_calls'] = toolCalls;
  // Thinking goes back the way the upstream takes it (§D.7); OpenAI's Chat API takes none.
  if (dialect.reasoning === 'reasoning_details' && details.length > 0) {
    message['reasoning'] = reasoningText.join('');
    message['reasoning_details'] = details;
  } else if (dialect.reasoning === 'reasoning_content' && reasoningText.length > 0) {
    message['reasoning_content'] = reasoningText.join('');
  }
  return message;
}
