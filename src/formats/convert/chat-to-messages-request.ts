import { ERR } from '../../errors.ts';
import type { MessagesDialect } from './dialect.ts';
import { asArray, asNumber, asObject, asString, isObject, type Json } from './json.ts';
import { parseArguments } from './chat-to-messages-response.ts';

/**
 * A Chat Completions request → a Messages request (protocol.md §D.3). What Messages cannot do is
 * refused with a 400 naming the parameter, never dropped silently (issue #3). `response_format`
 * is kept faithfully by forcing a tool whose input is the JSON answer, turned back into message
 * content on the way out.
 */
export interface MessagesRequestConversion {
  readonly body: Json;
  /** Set when response_format is emulated: the forced tool whose input is the answer. */
  readonly jsonTool: string | null;
}

export interface ChatToMessagesOptions {
  readonly model: string;
  readonly dialect: MessagesDialect;
  readonly maxOutputTokens: number | null;
}

/**
 * The Chat request parameters this conversion carries into a Messages request, by OpenRouter's
 * `supported_parameters` names (GET /v1/models). Keep in step with the mapping below: what is not
 * here is either refused by refuseUnsupported or has no effect on generation.
 */
export const CHAT_PARAMETERS_VIA_MESSAGES: readonly string[] = [
  'max_tokens', 'temperature', 'top_p', 'top_k', 'stop', 'tools', 'tool_choice', 'parallel_tool_calls',
  'reasoning', 'reasoning_effort', 'response_format', 'structured_outputs',
];

const JSON_TOOL = 'json_response';
const EFFORT_BUDGET: Readonly<Record<string, number>> = { minimal: 1024, low: 1024, medium: 2048, high: 4096, xhigh: 8192 };

export function chatToMessagesRequest(request: Json, options: ChatToMessagesOptions): MessagesRequestConversion {
  refuseUnsupported(request);
  const system: Json[] = [];
  const messages: Json[] = [];
  for (const raw of asArray(request['messages'])) {
    const message = asObject(raw);
    const role = asString(message['role']);
    if (role === 'system' || role === 'developer') {
      system.push(...textBlocks(message['content']));
    } else if (role === 'tool' || role === 'function') {
      const id = asString(message['tool_call_id']) ?? asString(message['name']) ?? '';
      push(messages, 'user', [{ type: 'tool_result', tool_use_id: id, content: textOf(message['content']) }]);
    } else if (role === 'assistant') {
      push(messages, 'assistant', assistantBlocks(message));
    } else {
      push(messages, 'user', userBlocks(message['content']));
    }
  }
  stripPrefillWhitespace(messages);
  const requested = asNumber(request['max_completion_tokens']) ?? asNumber(request['max_tokens']);
  const maxTokens = requested ?? options.maxOutputTokens ?? options.dialect.defaultMaxTokens;
  const body: Json = { model: options.model, max_tokens: maxTokens, messages };
  if (system.length > 0) body['system'] = system;
  // Anthropic's temperature runs 0–1 where OpenAI's runs 0–2: the documented mapping clamps.
  const temperature = asNumber(request['temperature']);
  if (temperature !== undefined) body['temperature'] = Math.min(temperature, 1);
  for (const field of ['top_p', 'top_k'] as const) {
    if (asNumber(request[field]) !== undefined) body[field] = request[field];
  }
  const stop = request['stop'];
  const stops = (typeof stop === 'string' ? [stop] : asArray(stop)).filter((s) => typeof s === 'string' && s.trim() !== '');
  if (stops.length > 0) body['stop_sequences'] = stops;
  const user = asString(request['user']) ?? asString(request['safety_identifier']);
  if (user !== undefined) body['metadata'] = { user_id: user };
  if (request['stream'] === true) body['stream'] = true;
  // Anthropic's automatic caching, which Chat clients reach through this extension field
  // (Portkey dropped it: peers.md §2 #18).
  if (isObject(request['cache_control'])) body['cache_control'] = request['cache_control'];
  Object.assign(body, toolFields(request), thinkingFields(request, maxTokens));
  const jsonTool = applyResponseFormat(request, body);
  return { body, jsonTool };
}

function refuseUnsupported(request: Json): void {
  const refuse = (param: string, why: string): never => {
    throw ERR.invalidField(`${param}: ${why} is not supported by this model (its upstream speaks Anthropic Messages)`, param);
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

/** Consecutive same-role turns are merged, as the Messages API would do anyway (protocol.md §A.2). */
function push(messages: Json[], role: 'user' | 'assistant', blocks: Json[]): void {
  if (blocks.length === 0) return;
  const last = messages.at(-1);
  if (last && last['role'] === role) (last['content'] as Json[]).push(...blocks);
  else messages.push({ role, content: blocks });
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return asArray(content).map((p) => asString(asObject(p)['text']) ?? asString(asObject(p)['refusal']) ?? '').join('');
}

/** Text parts as text blocks, keeping each part's cache_control (OpenRouter's convention for Claude). */
function textBlocks(content: unknown): Json[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return asArray(content).flatMap((raw) => {
    const part = asObject(raw);
    // An assistant's refusal part is text too (protocol.md §B.3).
    const text = asString(part['text']) ?? asString(part['refusal']);
    return text ? [{ type: 'text', text, ...cacheControl(part) }] : [];
  });
}

function cacheControl(part: Json): Json {
  return isObject(part['cache_control']) ? { cache_control: part['cache_control'] } : {};
}

function userBlocks(content: unknown): Json[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return asArray(content).flatMap((raw): Json[] => {
    const part = asObject(raw);
    switch (part['type']) {
      case 'text':
        return asString(part['text']) ? [{ type: 'text', text: part['text'], ...cacheControl(part) }] : [];
      case 'image_url':
        return [{ ...mediaBlock(asString(asObject(part['image_url'])['url']) ?? ''), ...cacheControl(part) }];
      case 'file':
        return [fileBlock(asObject(part['file']))];
      case 'input_audio':
        throw ERR.invalidField('messages: audio input is not supported by this model', 'messages');
      default:
        return [{ type: 'text', text: `[${String(part['type'])} part: ${JSON.stringify(part)}]` }];
    }
  });
}

/** An image_url: a data URL becomes a base64 source (a PDF one a document), a plain URL a url source. */
function mediaBlock(url: string): Json {
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (data) {
    const [, mediaType = '', payload = ''] = data;
    return { type: mediaType === 'application/pdf' ? 'document' : 'image', source: { type: 'base64', media_type: mediaType, data: payload } };
  }
  return { type: 'image', source: { type: 'url', url } };
}

function fileBlock(file: Json): Json {
  const data = asString(file['file_data']) ?? '';
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(data);
  const title = asString(file['filename']);
  if (match) {
    const [, mediaType = '', payload = ''] = match;
    const source = mediaType.startsWith('text/')
      ? { type: 'text', media_type: 'text/plain', data: Buffer.from(payload, 'base64').toString('utf8') }
      : { type: 'base64', media_type: mediaType, data: payload };
    return { type: 'document', source, ...(title !== undefined && { title }) };
  }
  if (/^https?:\/\//.test(data)) return { type: 'document', source: { type: 'url', url: data } };
  return { type: 'text', text: `[file ${title ?? asString(file['file_id']) ?? ''}: uploaded files cannot be sent to this model]` };
}

function assistantBlocks(message: Json): Json[] {
  const blocks: Json[] = [];
  // Replayed thinking must come first, signatures unchanged (protocol.md §D.3, §D.7).
  for (const raw of asArray(message['reasoning_details'])) {
    const item = asObject(raw);
    if (item['format'] !== 'anthropic-claude-v1') continue;
    if (item['type'] === 'reasoning.text' && asString(item['signature'])) {
      blocks.push({ type: 'thinking', thinking: asString(item['text']) ?? '', signature: item['signature'] });
    } else if (item['type'] === 'reasoning.encrypted') {
      blocks.push({ type: 'redacted_thinking', data: asString(item['data']) ?? '' });
    }
  }
  // Empty text blocks are refused by the Messages API.
  blocks.push(...textBlocks(message['content']));
  if (asString(message['refusal'])) blocks.push({ type: 'text', text: message['refusal'] });
  for (const raw of asArray(message['tool_calls'])) {
    const call = asObject(raw);
    const fn = asObject(call['function']);
    blocks.push({ type: 'tool_use', id: asString(call['id']) ?? '', name: asString(fn['name']) ?? '', input: parseArguments(asString(fn['arguments']) ?? '') });
  }
  return blocks;
}

function toolFields(request: Json): Json {
  const tools = asArray(request['tools']).map(asObject);
  const out: Json = {};
  if (tools.length > 0) {
    out['tools'] = tools.map((tool, i) => {
      if (tool['type'] !== 'function') throw ERR.invalidField(`tools[${i}].type: only function tools can be sent to this model`, `tools[${i}].type`);
      const fn = asObject(tool['function']);
      return {
        name: asString(fn['name']) ?? '',
        ...(fn['description'] !== undefined && { description: fn['description'] }),
        input_schema: isObject(fn['parameters']) ? fn['parameters'] : { type: 'object', properties: {} },
      };
    });
  }
  const choice = request['tool_choice'];
  let mapped: Json | undefined;
  if (choice === 'auto') mapped = { type: 'auto' };
  else if (choice === 'required') mapped = { type: 'any' };
  else if (choice === 'none') mapped = { type: 'none' };
  else if (isObject(choice)) mapped = { type: 'tool', name: asString(asObject(choice['function'])['name']) ?? '' };
  if (request['parallel_tool_calls'] === false && tools.length > 0) mapped = { ...(mapped ?? { type: 'auto' }), disable_parallel_tool_use: true };
  if (mapped) out['tool_choice'] = mapped;
  return out;
}

/** reasoning_effort or OpenRouter's reasoning → a thinking budget below max_tokens (protocol.md §D.3). */
function thinkingFields(request: Json, maxTokens: number): Json {
  const reasoning = asObject(request['reasoning']);
  const effort = asString(request['reasoning_effort']) ?? asString(reasoning['effort']);
  if (effort === 'none' || reasoning['enabled'] === false) return {};
  // OpenRouter's `reasoning: {enabled: true}` means "with defaults" (protocol.md §C.1).
  const budget =
    asNumber(reasoning['max_tokens']) ??
    (effort === undefined ? undefined : EFFORT_BUDGET[effort]) ??
    (reasoning['enabled'] === true ? EFFORT_BUDGET['medium'] : undefined);
  if (budget === undefined) return {};
  if (budget < 1024 || budget >= maxTokens) {
    throw ERR.invalidField(
      `reasoning_effort: this model needs a reasoning budget of at least 1024 tokens below max_tokens (${maxTokens}); raise max_completion_tokens`,
      'reasoning_effort',
    );
  }
  return { thinking: { type: 'enabled', budget_tokens: budget } };
}

function applyResponseFormat(request: Json, body: Json): string | null {
  const format = asObject(request['response_format']);
  if (format['type'] !== 'json_schema' && format['type'] !== 'json_object') return null;
  if (body['thinking'] !== undefined) {
    // Anthropic refuses a forced tool with extended thinking (protocol.md §A.5).
    throw ERR.invalidField('response_format: cannot be combined with reasoning on this model; drop one of them', 'response_format');
  }
  const spec = asObject(format['json_schema']);
  const schema = format['type'] === 'json_schema' && isObject(spec['schema']) ? spec['schema'] : { type: 'object' };
  const tool = { name: JSON_TOOL, description: asString(spec['description']) ?? 'Reply with the answer as this tool’s input.', input_schema: schema };
  body['tools'] = [...asArray(body['tools']), tool];
  body['tool_choice'] = { type: 'tool', name: JSON_TOOL };
  return JSON_TOOL;
}
