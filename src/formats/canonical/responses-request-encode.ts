import { createHash } from 'node:crypto';
import { ERR } from '../../errors.ts';
import type { Json } from '../convert/json.ts';
import { ToolNames } from '../convert/tool-names.ts';
import { effortOf, type CanonicalPart, type CanonicalRequest, type CanonicalSource } from './request.ts';
import { reasoningToUpstream } from './responses-reasoning.ts';

/**
 * Canonical → a Responses request, for models served only through the Responses API
 * (responses-api.md §7.2). The upstream keeps no state: `store: false`, the whole history sent,
 * and reasoning asked back encrypted so the next turn can replay it. System turns become
 * `instructions`. Function tools are sent with `strict: false` unless the client asked, since
 * Responses makes them strict by default and strict mode takes only a narrow kind of schema.
 */
export interface ResponsesRequestEncoding {
  readonly body: Json;
  readonly toolNames: ToolNames;
}

export interface ResponsesEncodeOptions {
  readonly model: string;
  readonly maxOutputTokens: number | null;
}

export function encodeResponsesRequest(request: CanonicalRequest, options: ResponsesEncodeOptions): ResponsesRequestEncoding {
  if (request.stop.length > 0) {
    throw ERR.invalidField(`${request.fields.stop}: this model is served by the Responses API, which has no stop sequences`, request.fields.stop);
  }
  const toolNames = new ToolNames();
  const instructions: string[] = [];
  const input: Json[] = [];
  for (const turn of request.turns) {
    if (turn.role === 'system') instructions.push(...turn.parts.flatMap((p) => (p.type === 'text' && p.text !== '' ? [p.text] : [])));
    else if (turn.role === 'user') userItems(turn.parts, input);
    else assistantItems(turn.parts, input, toolNames);
  }
  const body: Json = { model: options.model, input, store: false, include: ['reasoning.encrypted_content'] };
  if (instructions.length > 0) body['instructions'] = instructions.join('\n\n');
  if (request.maxTokens !== undefined) body['max_output_tokens'] = options.maxOutputTokens === null ? request.maxTokens : Math.min(request.maxTokens, options.maxOutputTokens);
  if (request.temperature !== undefined) body['temperature'] = request.temperature;
  if (request.topP !== undefined) body['top_p'] = request.topP;
  if (request.user !== undefined) body['safety_identifier'] = safetyIdentifier(request.user);
  if (request.stream) body['stream'] = true;
  if (request.tools.length > 0) {
    body['tools'] = request.tools.map((tool) => ({
      type: 'function',
      name: toolNames.upstream(tool.name),
      ...(tool.description !== undefined && { description: tool.description }),
      parameters: tool.parameters,
      strict: tool.strict ?? false,
    }));
    const choice = request.toolChoice;
    if (choice !== undefined) body['tool_choice'] = choice.type === 'tool' ? { type: 'function', name: toolNames.upstream(choice.name) } : choice.type === 'any' ? 'required' : choice.type;
    if (request.parallelToolCalls !== undefined) body['parallel_tool_calls'] = request.parallelToolCalls;
  }
  // A summary is what lets the client see the thinking (responses-api.md §7.2).
  if (request.reasoning !== undefined) body['reasoning'] = { effort: effortOf(request.reasoning), summary: 'auto' };
  const format = request.format;
  if (format?.type === 'json_object') body['text'] = { format: { type: 'json_object' } };
  else if (format?.type === 'json_schema') {
    body['text'] = {
      format: { type: 'json_schema', name: format.name ?? 'structured_output', ...(format.description !== undefined && { description: format.description }), schema: format.schema, strict: format.strict ?? false },
    };
  }
  return { body, toolNames };
}

/**
 * OpenAI takes at most 64 characters here; Claude Code's `metadata.user_id` is about 150. A longer
 * id is hashed: still one stable id per user, as the field is for (responses.d.ts).
 */
function safetyIdentifier(user: string): string {
  return user.length <= 64 ? user : `sha256_${createHash('sha256').update(user).digest('hex').slice(0, 57)}`;
}

const dataUrl = (source: { mediaType: string; data: string }): string => `data:${source.mediaType};base64,${source.data}`;

function imagePart(source: CanonicalSource, detail: string | undefined): Json {
  const at = source.kind === 'file' ? { file_id: source.fileId } : { image_url: source.kind === 'url' ? source.url : source.kind === 'base64' ? dataUrl(source) : '' };
  return { type: 'input_image', ...at, detail: detail ?? 'auto' };
}

function contentPart(part: CanonicalPart): Json {
  switch (part.type) {
    case 'text':
      return { type: 'input_text', text: part.text };
    case 'image':
      return imagePart(part.source, part.detail);
    case 'document': {
      const { source, title } = part;
      const name = title === undefined ? {} : { filename: title };
      switch (source.kind) {
        case 'text':
          return { type: 'input_text', text: `${title === undefined ? '' : `Document: ${title}\n\n`}${source.text}` };
        case 'base64':
          return { type: 'input_file', filename: title ?? 'document.pdf', file_data: dataUrl(source) };
        case 'url':
          return { type: 'input_file', file_url: source.url, ...name };
        case 'file':
          return { type: 'input_file', file_id: source.fileId, ...name };
      }
      return { type: 'input_text', text: '[document]' };
    }
    default:
      return { type: 'input_text', text: `[${part.type} block: ${JSON.stringify(part)}]` };
  }
}

/** Tool outputs first, each after the call it answers; then the turn's message. */
function userItems(parts: readonly CanonicalPart[], input: Json[]): void {
  const content: Json[] = [];
  for (const part of parts) {
    if (part.type !== 'tool_result') {
      content.push(contentPart(part));
      continue;
    }
    const prefix = part.isError ? '[tool error] ' : '';
    const allText = part.content.every((p) => p.type === 'text');
    const output = allText ? prefix + part.content.map((p) => (p.type === 'text' ? p.text : '')).join('') : [...(prefix ? [{ type: 'input_text', text: prefix }] : []), ...part.content.map(contentPart)];
    input.push({ type: 'function_call_output', call_id: part.id, output });
  }
  if (content.length > 0) input.push({ type: 'message', role: 'user', content });
}

function assistantItems(parts: readonly CanonicalPart[], input: Json[], toolNames: ToolNames): void {
  let message: Json[] | null = null;
  for (const part of parts) {
    if (part.type === 'text') {
      if (part.text === '') continue;
      if (message === null) {
        message = [];
        input.push({ type: 'message', role: 'assistant', content: message });
      }
      message.push({ type: 'output_text', text: part.text });
      continue;
    }
    message = null;
    if (part.type === 'tool_call') {
      input.push({ type: 'function_call', call_id: part.id, name: toolNames.upstream(part.name), arguments: part.arguments === '' ? '{}' : part.arguments });
    } else if (part.type === 'reasoning' || part.type === 'opaque_reasoning') {
      // Only OpenAI's own reasoning can go back to it (responses-api.md §7.4).
      const item = reasoningToUpstream(part);
      if (item) input.push(item);
    }
  }
}
