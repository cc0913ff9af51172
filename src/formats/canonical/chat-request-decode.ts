import { ERR } from '../../errors.ts';
import { asArray, asNumber, asObject, asString, isObject, type Json } from '../convert/json.ts';
import { REASONING_FORMAT } from './chat-answer.ts';
import type { CanonicalPart, CanonicalReasoning, CanonicalRequest, CanonicalSource, CanonicalToolChoice, CanonicalTurn } from './request.ts';

/**
 * The Chat request parameters a translation carries to another format, by OpenRouter's
 * `supported_parameters` names (GET /v1/models). Keep in step with the mapping below: what is not
 * here is either refused by refuseUnsupported or has no effect on generation.
 */
export const CHAT_PARAMETERS_VIA_MESSAGES: readonly string[] = [
  'max_tokens', 'temperature', 'top_p', 'top_k', 'stop', 'tools', 'tool_choice', 'parallel_tool_calls',
  'reasoning', 'reasoning_effort', 'response_format', 'structured_outputs',
];

/**
 * A Chat Completions request → canonical (protocol.md §B, §D.3). What no other format can do is
 * refused with a 400 naming the parameter, never dropped silently (issue #3).
 */
export function decodeChatRequest(request: Json): CanonicalRequest {
  refuseUnsupported(request);
  const turns: CanonicalTurn[] = [];
  for (const raw of asArray(request['messages'])) {
    const message = asObject(raw);
    const role = asString(message['role']);
    if (role === 'system' || role === 'developer') {
      turns.push({ role: 'system', parts: textParts(message['content']) });
    } else if (role === 'tool' || role === 'function') {
      const id = asString(message['tool_call_id']) ?? asString(message['name']) ?? '';
      turns.push({ role: 'user', parts: [{ type: 'tool_result', id, content: [{ type: 'text', text: textOf(message['content']) }], isError: false }] });
    } else if (role === 'assistant') {
      turns.push({ role: 'assistant', parts: assistantParts(message) });
    } else {
      turns.push({ role: 'user', parts: userParts(message['content']) });
    }
  }
  const stop = request['stop'];
  const user = asString(request['user']) ?? asString(request['safety_identifier']);
  return {
    turns,
    tools: asArray(request['tools']).map((raw, i) => {
      const tool = asObject(raw);
      if (tool['type'] !== 'function') throw ERR.invalidField(`tools[${i}].type: only function tools can be sent to this model`, `tools[${i}].type`);
      const fn = asObject(tool['function']);
      const description = asString(fn['description']);
      return {
        name: asString(fn['name']) ?? '',
        ...(description !== undefined && { description }),
        parameters: isObject(fn['parameters']) ? fn['parameters'] : { type: 'object', properties: {} },
        ...(typeof fn['strict'] === 'boolean' && { strict: fn['strict'] }),
      };
    }),
    toolChoice: toolChoiceOf(request['tool_choice']),
    parallelToolCalls: typeof request['parallel_tool_calls'] === 'boolean' ? request['parallel_tool_calls'] : undefined,
    maxTokens: asNumber(request['max_completion_tokens']) ?? asNumber(request['max_tokens']),
    temperature: asNumber(request['temperature']),
    topP: asNumber(request['top_p']),
    topK: asNumber(request['top_k']),
    stop: (typeof stop === 'string' ? [stop] : asArray(stop)).filter((s): s is string => typeof s === 'string' && s.trim() !== ''),
    user,
    stream: request['stream'] === true,
    reasoning: reasoningOf(request),
    format: formatOf(asObject(request['response_format'])),
    cacheControl: isObject(request['cache_control']) ? request['cache_control'] : undefined,
    fields: { maxTokens: 'max_completion_tokens', stop: 'stop', reasoning: 'reasoning_effort', format: 'response_format' },
  };
}

function refuseUnsupported(request: Json): void {
  const refuse = (param: string, why: string): never => {
    throw ERR.invalidField(`${param}: ${why} is not supported by this model (its upstream speaks another API format)`, param);
  };
  if ((asNumber(request['n']) ?? 1) > 1) refuse('n', 'more than one choice');
  if (request['logprobs'] === true || (asNumber(request['top_logprobs']) ?? 0) > 0) refuse('logprobs', 'log probabilities');
  if (isObject(request['logit_bias']) && Object.keys(request['logit_bias']).length > 0) refuse('logit_bias', 'logit bias');
  for (const penalty of ['frequency_penalty', 'presence_penalty'] as const) {
    if ((asNumber(request[penalty]) ?? 0) !== 0) refuse(penalty, `a non-zero ${penalty.replace('_', ' ')}`);
  }
  if (asArray(request['modalities']).includes('audio') || request['audio'] != null) refuse('modalities', 'audio output');
  if (request['prediction'] != null) refuse('prediction', 'predicted output');
  if (request['web_search_options'] != null) refuse('web_search_options', 'web search');
  if (request['functions'] != null || request['function_call'] != null) {
    throw ERR.invalidField('functions: the deprecated functions/function_call fields are not translated; send tools and tool_choice', 'functions');
  }
}

/** A message's text; an assistant's refusal part is text too (protocol.md §B.3). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return asArray(content).map((p) => asString(asObject(p)['text']) ?? asString(asObject(p)['refusal']) ?? '').join('');
}

function cacheControl(part: Json): { cacheControl?: Json } {
  return isObject(part['cache_control']) ? { cacheControl: part['cache_control'] } : {};
}

/** Text parts, keeping each part's cache_control (OpenRouter's convention for Claude); empty ones dropped. */
function textParts(content: unknown): CanonicalPart[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return asArray(content).flatMap((raw): CanonicalPart[] => {
    const part = asObject(raw);
    const text = asString(part['text']) ?? asString(part['refusal']);
    return text ? [{ type: 'text', text, ...cacheControl(part) }] : [];
  });
}

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

/** A URL that may be a data URL. */
export function sourceOfUrl(url: string): CanonicalSource {
  const data = DATA_URL.exec(url);
  return data ? { kind: 'base64', mediaType: data[1] ?? '', data: data[2] ?? '' } : { kind: 'url', url };
}

/** A file given by data URL, URL or id; a text file's data is decoded to text. */
export function fileSource(fileData: string | undefined, fileUrl: string | undefined, fileId: string | undefined): CanonicalSource | undefined {
  const data = fileData === undefined ? null : DATA_URL.exec(fileData);
  if (data) {
    const [, mediaType = '', payload = ''] = data;
    return mediaType.startsWith('text/') ? { kind: 'text', text: Buffer.from(payload, 'base64').toString('utf8') } : { kind: 'base64', mediaType, data: payload };
  }
  const url = fileUrl ?? (fileData !== undefined && /^https?:\/\//.test(fileData) ? fileData : undefined);
  if (url !== undefined) return { kind: 'url', url };
  return fileId === undefined ? undefined : { kind: 'file', fileId };
}

function userParts(content: unknown): CanonicalPart[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return asArray(content).flatMap((raw): CanonicalPart[] => {
    const part = asObject(raw);
    switch (part['type']) {
      case 'text':
        return asString(part['text']) ? [{ type: 'text', text: String(part['text']), ...cacheControl(part) }] : [];
      case 'image_url': {
        const image = asObject(part['image_url']);
        const detail = asString(image['detail']);
        return [{ type: 'image', source: sourceOfUrl(asString(image['url']) ?? ''), ...(detail !== undefined && { detail }), ...cacheControl(part) }];
      }
      case 'file': {
        const file = asObject(part['file']);
        const title = asString(file['filename']);
        const source = fileSource(asString(file['file_data']), undefined, asString(file['file_id']));
        if (source === undefined) return [{ type: 'text', text: `[file ${title ?? ''}: uploaded files cannot be sent to this model]` }];
        return [{ type: 'document', source, ...(title !== undefined && { title }) }];
      }
      case 'input_audio':
        throw ERR.invalidField('messages: audio input is not supported by this model', 'messages');
      default:
        return [{ type: 'text', text: `[${String(part['type'])} part: ${JSON.stringify(part)}]` }];
    }
  });
}

function assistantParts(message: Json): CanonicalPart[] {
  const parts: CanonicalPart[] = [];
  // Replayed thinking comes first, signatures unchanged (protocol.md §D.3, §D.7): Claude's, as
  // Junction gave it out; another vendor's reasoning cannot go anywhere else and is left here.
  for (const raw of asArray(message['reasoning_details'])) {
    const item = asObject(raw);
    if (item['format'] !== REASONING_FORMAT) continue;
    if (item['type'] === 'reasoning.text') {
      const signature = asString(item['signature']);
      parts.push({ type: 'reasoning', text: asString(item['text']) ?? '', ...(signature && { signature }) });
    } else if (item['type'] === 'reasoning.encrypted') {
      parts.push({ type: 'opaque_reasoning', data: asString(item['data']) ?? '' });
    }
  }
  parts.push(...textParts(message['content']));
  const refusal = asString(message['refusal']);
  if (refusal) parts.push({ type: 'text', text: refusal });
  for (const raw of asArray(message['tool_calls'])) {
    const call = asObject(raw);
    const fn = asObject(call['function']);
    parts.push({ type: 'tool_call', id: asString(call['id']) ?? '', name: asString(fn['name']) ?? '', arguments: asString(fn['arguments']) ?? '' });
  }
  return parts;
}

function toolChoiceOf(choice: unknown): CanonicalToolChoice | undefined {
  if (choice === 'auto' || choice === 'none') return { type: choice };
  if (choice === 'required') return { type: 'any' };
  if (isObject(choice)) return { type: 'tool', name: asString(asObject(choice['function'])['name']) ?? '' };
  return undefined;
}

/** reasoning_effort, or OpenRouter's reasoning object (`enabled: true` means "with defaults": protocol.md §C.1). */
function reasoningOf(request: Json): CanonicalReasoning | undefined {
  const reasoning = asObject(request['reasoning']);
  const effort = asString(request['reasoning_effort']) ?? asString(reasoning['effort']);
  if (effort === 'none' || reasoning['enabled'] === false) return undefined;
  const budget = asNumber(reasoning['max_tokens']);
  if (budget !== undefined) return { budget };
  if (effort !== undefined) return { effort };
  return reasoning['enabled'] === true ? { effort: 'medium' } : undefined;
}

function formatOf(format: Json): CanonicalRequest['format'] {
  if (format['type'] === 'json_object') return { type: 'json_object' };
  return format['type'] === 'json_schema' ? jsonSchemaFormat(asObject(format['json_schema'])) : undefined;
}

/** A json_schema format from its spec (`name`, `schema`, `description`, `strict`), Chat's and Responses' alike. */
export function jsonSchemaFormat(spec: Json): CanonicalRequest['format'] {
  const name = asString(spec['name']);
  const description = asString(spec['description']);
  return {
    type: 'json_schema',
    schema: isObject(spec['schema']) ? spec['schema'] : { type: 'object' },
    ...(name !== undefined && { name }),
    ...(description !== undefined && { description }),
    ...(typeof spec['strict'] === 'boolean' && { strict: spec['strict'] }),
  };
}
