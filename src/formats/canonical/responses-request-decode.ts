import { ERR } from '../../errors.ts';
import { asArray, asNumber, asObject, asString, isObject, type Json } from '../convert/json.ts';
import { fileSource, jsonSchemaFormat, sourceOfUrl } from './chat-request-decode.ts';
import { FREEFORM_PARAMETERS, type CanonicalPart, type CanonicalRequest, type CanonicalTool, type CanonicalToolChoice, type CanonicalTurn } from './request.ts';
import { reasoningFromClient } from './responses-reasoning.ts';

/**
 * A Responses request → canonical (responses-api.md §2, §7.1). Items become turns: consecutive
 * calls join the assistant turn before them and consecutive outputs one user turn, as Messages
 * needs. Tools OpenAI runs on its servers cannot run on another upstream: a 400 naming them,
 * never a silent drop (issue #14). `item_reference`s were resolved before (response-state.ts).
 */

/** Tools and items only OpenAI's servers can run or produce. */
const HOSTED = /^(web_search|file_search|code_interpreter|computer|image_generation|mcp|local_shell|shell|apply_patch|tool_search)/;

export function decodeResponsesRequest(request: Json): CanonicalRequest {
  const turns: CanonicalTurn[] = [];
  const instructions = asString(request['instructions']);
  if (instructions) turns.push({ role: 'system', parts: [{ type: 'text', text: instructions }], plain: true });
  const input = request['input'];
  if (typeof input === 'string') turns.push({ role: 'user', parts: [{ type: 'text', text: input }], plain: true });
  else asArray(input).forEach((raw, i) => addItem(turns, asObject(raw), i));
  const tools = asArray(request['tools']).flatMap((raw, i) => toolsOf(asObject(raw), i));
  const reasoning = asObject(request['reasoning']);
  const effort = asString(reasoning['effort']);
  const choice = toolChoiceOf(request['tool_choice'], tools);
  return {
    turns,
    tools: choice.tools,
    toolChoice: choice.choice,
    parallelToolCalls: typeof request['parallel_tool_calls'] === 'boolean' ? request['parallel_tool_calls'] : undefined,
    maxTokens: asNumber(request['max_output_tokens']),
    temperature: asNumber(request['temperature']),
    topP: asNumber(request['top_p']),
    topK: undefined,
    stop: [],
    user: asString(request['safety_identifier']) ?? asString(request['user']),
    stream: request['stream'] === true,
    reasoning: effort !== undefined && effort !== 'none' ? { effort } : undefined,
    format: formatOf(asObject(asObject(request['text'])['format'])),
    cacheControl: undefined,
    fields: { maxTokens: 'max_output_tokens', stop: 'stop', reasoning: 'reasoning.effort', format: 'text.format' },
  };
}

/** Appends to the last turn when it has the role (a plain one becomes parts), else opens one. */
function append(turns: CanonicalTurn[], role: 'user' | 'assistant', part: CanonicalPart): void {
  const last = turns.at(-1);
  if (last?.role !== role) turns.push({ role, parts: [part] });
  else if (last.plain) turns[turns.length - 1] = { role, parts: [...last.parts, part] };
  else last.parts.push(part);
}

function addItem(turns: CanonicalTurn[], item: Json, i: number): void {
  const type = asString(item['type']) ?? (item['role'] !== undefined ? 'message' : typeof item['id'] === 'string' ? 'item_reference' : undefined);
  const refuse = (why: string): never => {
    throw ERR.invalidField(`input[${i}]: ${why}`, `input[${i}].type`);
  };
  switch (type) {
    case 'message': {
      const role = item['role'] === 'assistant' ? 'assistant' : item['role'] === 'system' || item['role'] === 'developer' ? 'system' : item['role'] === 'user' ? 'user' : refuse(`a message's role must be user, assistant, system or developer`);
      const content = item['content'];
      if (typeof content === 'string') {
        // Plain text, unless it continues a turn (the reasoning or call items just before it).
        const last = turns.at(-1);
        if (role !== 'system' && last?.role === role) append(turns, role, { type: 'text', text: content });
        else turns.push({ role, parts: [{ type: 'text', text: content }], plain: true });
      }
      else if (!Array.isArray(content)) refuse('a message needs content, a string or a list of parts');
      else {
        const parts = content.map((part, j) => partOf(asObject(part), `input[${i}].content[${j}]`));
        if (role === 'system') turns.push({ role, parts });
        else for (const part of parts) append(turns, role, part);
      }
      return;
    }
    case 'function_call':
      append(turns, 'assistant', { type: 'tool_call', id: callId(item, i), name: namespaced(asString(item['namespace']), asString(item['name']) ?? ''), arguments: asString(item['arguments']) ?? '' });
      return;
    case 'custom_tool_call':
      append(turns, 'assistant', { type: 'tool_call', id: callId(item, i), name: asString(item['name']) ?? '', arguments: JSON.stringify({ input: asString(item['input']) ?? '' }) });
      return;
    case 'function_call_output':
    case 'custom_tool_call_output': {
      const output = item['output'];
      const content = typeof output === 'string' ? [{ type: 'text' as const, text: output }] : asArray(output).map((p, j) => partOf(asObject(p), `input[${i}].output[${j}]`));
      append(turns, 'user', { type: 'tool_result', id: callId(item, i), content, isError: false });
      return;
    }
    case 'reasoning':
      append(turns, 'assistant', reasoningFromClient(item));
      return;
    case 'item_reference':
      return refuse(`item ${JSON.stringify(item['id'])} was not found`);
    case undefined:
      return refuse('an item needs a type');
    default:
      return refuse(HOSTED.test(type) ? `${type} items come from tools OpenAI runs on its servers; this model’s upstream cannot take them` : `unknown item type ${JSON.stringify(type)}`);
  }
}

function callId(item: Json, i: number): string {
  const id = asString(item['call_id']);
  if (id === undefined || id === '') throw ERR.invalidField(`input[${i}].call_id: required`, `input[${i}].call_id`);
  return id;
}

function partOf(part: Json, where: string): CanonicalPart {
  switch (part['type']) {
    case 'input_text':
    case 'output_text':
    case 'text':
      return { type: 'text', text: asString(part['text']) ?? '' };
    case 'refusal':
      return { type: 'text', text: asString(part['refusal']) ?? '' };
    case 'input_image': {
      const url = asString(part['image_url']);
      const fileId = asString(part['file_id']);
      const detail = asString(part['detail']);
      if (url === undefined && fileId === undefined) throw ERR.invalidField(`${where}: an input_image needs image_url or file_id`, where);
      return { type: 'image', source: url !== undefined ? sourceOfUrl(url) : { kind: 'file', fileId: fileId! }, ...(detail !== undefined && detail !== 'auto' && { detail }) };
    }
    case 'input_file': {
      const title = asString(part['filename']);
      const source = fileSource(asString(part['file_data']), asString(part['file_url']), asString(part['file_id']));
      if (source === undefined) throw ERR.invalidField(`${where}: an input_file needs file_data, file_url or file_id`, where);
      return { type: 'document', source, ...(title !== undefined && { title }) };
    }
    default:
      throw ERR.invalidField(`${where}: unknown content part type ${JSON.stringify(part['type'])}`, `${where}.type`);
  }
}

/** A namespaced tool's name where formats have no namespaces (Codex groups tools so: responses-api.md §2.2). */
export const namespaced = (namespace: string | undefined, name: string): string => (namespace ? `${namespace}${NAMESPACE_SEPARATOR}${name}` : name);
const NAMESPACE_SEPARATOR = '__';

/** A `namespace` tool is the client's own functions grouped: each is offered under its namespaced name. */
function toolsOf(tool: Json, i: number): CanonicalTool[] {
  if (tool['type'] !== 'namespace') return [toolOf(tool, i)];
  const namespace = asString(tool['name']) ?? '';
  return asArray(tool['tools']).map((inner) => {
    const decoded = toolOf(asObject(inner), i);
    return { ...decoded, name: namespaced(namespace, decoded.name) };
  });
}

function toolOf(tool: Json, i: number): CanonicalTool {
  const type = asString(tool['type']);
  const name = asString(tool['name']) ?? '';
  const description = asString(tool['description']);
  if (type === 'function') {
    return {
      name,
      ...(description !== undefined && { description }),
      parameters: isObject(tool['parameters']) ? tool['parameters'] : { type: 'object', properties: {} },
      ...(typeof tool['strict'] === 'boolean' && { strict: tool['strict'] }),
    };
  }
  if (type === 'custom') {
    // A freeform tool (Codex's apply_patch) as one string argument, its grammar in the description
    // so the model still knows the syntax (responses-api.md §2.3, §7.1).
    const format = asObject(tool['format']);
    const grammar = format['type'] === 'grammar' ? `\n\nThe input must follow this ${asString(format['syntax']) ?? ''} grammar:\n${asString(format['definition']) ?? ''}` : '';
    return { name, description: `${description ?? ''}${grammar}`.trim(), parameters: FREEFORM_PARAMETERS, freeform: true };
  }
  throw ERR.invalidField(
    `tools[${i}]: the ${String(type)} tool runs on OpenAI's servers and this model's upstream cannot run it; remove it or choose a model served by the Responses API`,
    `tools[${i}].type`,
  );
}

function toolChoiceOf(choice: unknown, tools: CanonicalTool[]): { choice: CanonicalToolChoice | undefined; tools: CanonicalTool[] } {
  if (choice === 'auto' || choice === 'none') return { choice: { type: choice }, tools };
  if (choice === 'required') return { choice: { type: 'any' }, tools };
  if (!isObject(choice)) return { choice: undefined, tools };
  if (choice['type'] === 'function' || choice['type'] === 'custom') return { choice: { type: 'tool', name: asString(choice['name']) ?? '' }, tools };
  if (choice['type'] === 'allowed_tools') {
    // Only the allowed ones are offered (responses-api.md §7.1).
    const allowed = new Set(asArray(choice['tools']).map((t) => asString(asObject(t)['name'])));
    return { choice: { type: choice['mode'] === 'required' ? 'any' : 'auto' }, tools: tools.filter((t) => allowed.has(t.name)) };
  }
  throw ERR.invalidField(`tool_choice: the ${String(choice['type'])} tool runs on OpenAI's servers and this model's upstream cannot run it`, 'tool_choice');
}

function formatOf(format: Json): CanonicalRequest['format'] {
  if (format['type'] === 'json_object') return { type: 'json_object' };
  // Flat in Responses: the spec's fields sit on the format itself.
  return format['type'] === 'json_schema' ? jsonSchemaFormat(format) : undefined;
}
