import { ERR } from '../../errors.ts';
import type { MessagesDialect } from '../convert/dialect.ts';
import type { Json } from '../convert/json.ts';
import { unwrapReasoningDetail } from '../convert/opaque-reasoning.ts';
import { parseArguments } from './messages-answer.ts';
import { EFFORT_BUDGET, type CanonicalPart, type CanonicalRequest, type CanonicalSource } from './request.ts';

/**
 * Canonical → a Messages request (protocol.md §D.3). Structured output is kept faithfully by
 * forcing a tool whose input is the JSON answer; the Messages decoder turns it back into text
 * (`jsonTool`). Reasoning another vendor signed cannot go to Claude and is left out (§D.7).
 */
export interface MessagesRequestEncoding {
  readonly body: Json;
  /** Set when the format is emulated: the forced tool whose input is the answer. */
  readonly jsonTool: string | null;
}

export interface MessagesEncodeOptions {
  readonly model: string;
  readonly dialect: MessagesDialect;
  /** The catalogue's max_output_tokens, used when the client set none. */
  readonly maxOutputTokens: number | null;
}

const JSON_TOOL = 'json_response';

export function encodeMessagesRequest(request: CanonicalRequest, options: MessagesEncodeOptions): MessagesRequestEncoding {
  const system: Json[] = [];
  const messages: Json[] = [];
  for (const turn of request.turns) {
    if (turn.role === 'system') {
      for (const part of turn.parts) if (part.type === 'text' && part.text !== '') system.push(textBlock(part.text, part.cacheControl));
    } else {
      push(messages, turn.role, turn.parts.flatMap((p) => blocksOf(p)));
    }
  }
  stripPrefillWhitespace(messages);
  // Tool results come first in their turn, as Anthropic requires (protocol.md §A.3); another
  // format may have put a user's text before them.
  for (const message of messages) if (message['role'] === 'user') resultsFirst(message['content'] as Json[]);
  const budget = request.reasoning === undefined ? undefined : (request.reasoning.budget ?? EFFORT_BUDGET[request.reasoning.effort ?? 'medium'] ?? EFFORT_BUDGET['medium']!);
  let maxTokens = request.maxTokens ?? options.maxOutputTokens ?? options.dialect.defaultMaxTokens;
  // With no limit from the client, leave room for the answer after the thinking budget.
  if (request.maxTokens === undefined && budget !== undefined && budget >= maxTokens) maxTokens = budget + options.dialect.defaultMaxTokens;
  const body: Json = { model: options.model, max_tokens: maxTokens, messages };
  if (system.length > 0) body['system'] = system;
  // Anthropic's temperature runs 0–1 where OpenAI's runs 0–2: the documented mapping clamps.
  if (request.temperature !== undefined) body['temperature'] = Math.min(request.temperature, 1);
  if (request.topP !== undefined) body['top_p'] = request.topP;
  if (request.topK !== undefined) body['top_k'] = request.topK;
  const stops = request.stop.filter((s) => s.trim() !== '');
  if (stops.length > 0) body['stop_sequences'] = stops;
  if (request.user !== undefined) body['metadata'] = { user_id: request.user };
  if (request.stream) body['stream'] = true;
  // Anthropic's automatic caching (Portkey dropped it: peers.md §2 #18).
  if (request.cacheControl !== undefined) body['cache_control'] = request.cacheControl;
  if (request.tools.length > 0) {
    body['tools'] = request.tools.map((tool) => ({
      name: tool.name,
      ...(tool.description !== undefined && { description: tool.description }),
      input_schema: tool.parameters,
      ...(tool.cacheControl !== undefined && { cache_control: tool.cacheControl }),
    }));
  }
  const choice = request.toolChoice;
  let mapped: Json | undefined = choice === undefined ? undefined : choice.type === 'tool' ? { type: 'tool', name: choice.name } : { type: choice.type };
  if (request.parallelToolCalls === false && request.tools.length > 0) mapped = { ...(mapped ?? { type: 'auto' }), disable_parallel_tool_use: true };
  if (mapped) body['tool_choice'] = mapped;
  if (budget !== undefined) {
    if (budget < 1024 || budget >= maxTokens) {
      const field = request.fields.reasoning;
      throw ERR.invalidField(`${field}: this model needs a reasoning budget of at least 1024 tokens below ${request.fields.maxTokens} (${maxTokens}); raise ${request.fields.maxTokens}`, field);
    }
    body['thinking'] = { type: 'enabled', budget_tokens: budget };
  }
  return { body, jsonTool: applyFormat(request, body) };
}

function textBlock(text: string, cacheControl: Json | undefined): Json {
  return { type: 'text', text, ...(cacheControl !== undefined && { cache_control: cacheControl }) };
}

/** Consecutive same-role turns are merged, as the Messages API would do anyway (protocol.md §A.2). */
function push(messages: Json[], role: 'user' | 'assistant', blocks: Json[]): void {
  if (blocks.length === 0) return;
  const last = messages.at(-1);
  if (last && last['role'] === role) (last['content'] as Json[]).push(...blocks);
  else messages.push({ role, content: blocks });
}

function resultsFirst(blocks: Json[]): void {
  const firstOther = blocks.findIndex((b) => b['type'] !== 'tool_result');
  if (firstOther < 0 || !blocks.slice(firstOther).some((b) => b['type'] === 'tool_result')) return;
  const ordered = [...blocks.filter((b) => b['type'] === 'tool_result'), ...blocks.filter((b) => b['type'] !== 'tool_result')];
  blocks.splice(0, blocks.length, ...ordered);
}

/** A final assistant turn is a prefill, which Anthropic refuses with trailing whitespace (protocol.md §D.3). */
function stripPrefillWhitespace(messages: Json[]): void {
  const last = messages.at(-1);
  if (last?.['role'] !== 'assistant') return;
  const blocks = last['content'] as Json[];
  const tail = blocks.at(-1);
  if (tail?.['type'] !== 'text') return;
  const text = String(tail['text']).trimEnd();
  if (text === '') blocks.pop();
  else tail['text'] = text;
  if (blocks.length === 0) messages.pop();
}

function withCache(block: Json, cacheControl: Json | undefined): Json {
  return cacheControl === undefined ? block : { ...block, cache_control: cacheControl };
}

function mediaSource(source: CanonicalSource): Json {
  switch (source.kind) {
    case 'base64':
      return { type: 'base64', media_type: source.mediaType, data: source.data };
    case 'url':
      return { type: 'url', url: source.url };
    case 'text':
      return { type: 'text', media_type: 'text/plain', data: source.text };
    case 'file':
      return { type: 'file', file_id: source.fileId };
  }
}

function blocksOf(part: CanonicalPart): Json[] {
  switch (part.type) {
    case 'text':
      // Empty text blocks are refused by the Messages API.
      return part.text === '' ? [] : [textBlock(part.text, part.cacheControl)];
    case 'image': {
      if (part.source.kind === 'file') return [{ type: 'text', text: `[image ${part.source.fileId}: uploaded files cannot be sent to this model]` }];
      // A PDF sent where an image goes (a data URL in Chat's image_url) is a document.
      const pdf = part.source.kind === 'base64' && part.source.mediaType === 'application/pdf';
      return [withCache({ type: pdf ? 'document' : 'image', source: mediaSource(part.source) }, part.cacheControl)];
    }
    case 'document':
      if (part.source.kind === 'file') return [{ type: 'text', text: `[file ${part.title ?? part.source.fileId}: uploaded files cannot be sent to this model]` }];
      return [withCache({ type: 'document', source: mediaSource(part.source), ...(part.title !== undefined && { title: part.title }) }, part.cacheControl)];
    case 'tool_result': {
      const allText = part.content.every((p) => p.type === 'text');
      const content = allText ? part.content.map((p) => (p.type === 'text' ? p.text : '')).join('') : part.content.flatMap((p) => blocksOf(p));
      return [withCache({ type: 'tool_result', tool_use_id: part.id, content, ...(part.isError && { is_error: true }) }, part.cacheControl)];
    }
    case 'tool_call':
      return [{ type: 'tool_use', id: part.id, name: part.name, input: parseArguments(part.arguments) }];
    case 'reasoning':
      // Only Claude's own signed thinking can go back to Claude, first in its turn (§D.7).
      return part.signature === undefined || unwrapReasoningDetail(part.signature) !== undefined ? [] : [{ type: 'thinking', thinking: part.text, signature: part.signature }];
    case 'opaque_reasoning':
      return unwrapReasoningDetail(part.data) !== undefined ? [] : [{ type: 'redacted_thinking', data: part.data }];
  }
}

function applyFormat(request: CanonicalRequest, body: Json): string | null {
  const format = request.format;
  if (format === undefined) return null;
  if (body['thinking'] !== undefined) {
    // Anthropic refuses a forced tool with extended thinking (protocol.md §A.5).
    throw ERR.invalidField(`${request.fields.format}: cannot be combined with reasoning on this model; drop one of them`, request.fields.format);
  }
  const schema = format.type === 'json_schema' ? format.schema : { type: 'object' };
  const description = (format.type === 'json_schema' ? format.description : undefined) ?? 'Reply with the answer as this tool’s input.';
  const tool = { name: JSON_TOOL, description, input_schema: schema };
  body['tools'] = [...((body['tools'] as Json[] | undefined) ?? []), tool];
  body['tool_choice'] = { type: 'tool', name: JSON_TOOL };
  return JSON_TOOL;
}
