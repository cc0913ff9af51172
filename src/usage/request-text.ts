import { asArray, asObject, asString, type Json } from '../formats/convert/json.ts';

/**
 * What a model reads from a request, for counting its input tokens (issue #4): the texts (system,
 * messages, tool calls and results, tool schemas) in request order, and a fixed token amount for
 * media a text tokenizer cannot see. The rates are documented in docs/money.md ("Input-token
 * estimate"). Texts are kept apart so that the long ones a conversation repeats on every turn
 * (tool schemas, the system prompt, earlier messages) can be counted once and remembered.
 */
export interface RequestText {
  readonly parts: readonly string[];
  readonly fixed: number;
}

/** Anthropic's figure for a ~1.15 megapixel image, the largest before downscaling. */
const TOKENS_PER_IMAGE = 1600;
/** About 2,000 tokens per page for a text PDF page of ~10 KB. */
const TOKENS_PER_PDF_BYTE = 0.2;

const pdfTokens = (base64: string): number => Math.ceil(base64.length * 0.75 * TOKENS_PER_PDF_BYTE);

/** A Messages (or count_tokens) request. */
export function messagesRequestText(request: Json, toolsText?: string): RequestText {
  const parts: string[] = [];
  let fixed = 0;
  const block = (raw: unknown): void => {
    if (typeof raw === 'string') {
      parts.push(raw);
      return;
    }
    const b = asObject(raw);
    switch (b['type']) {
      case 'text':
        parts.push(asString(b['text']) ?? '');
        break;
      case 'thinking':
        parts.push(asString(b['thinking']) ?? '');
        break;
      case 'image':
        fixed += TOKENS_PER_IMAGE;
        break;
      case 'document': {
        const source = asObject(b['source']);
        if (source['type'] === 'base64') fixed += pdfTokens(asString(source['data']) ?? '');
        else parts.push(asString(source['data']) ?? '');
        break;
      }
      case 'tool_use':
        parts.push(asString(b['name']) ?? '', JSON.stringify(b['input'] ?? {}));
        break;
      case 'tool_result':
        if (typeof b['content'] === 'string') parts.push(b['content']);
        else asArray(b['content']).forEach(block);
        break;
      default:
        parts.push(JSON.stringify(b));
    }
  };
  asArray(typeof request['system'] === 'string' ? [request['system']] : request['system']).forEach(block);
  for (const message of asArray(request['messages'])) {
    const content = asObject(message)['content'];
    if (typeof content === 'string') parts.push(content);
    else asArray(content).forEach(block);
  }
  pushTools(parts, request, toolsText);
  return { parts, fixed };
}

/** A Chat Completions request: message text and refusals, image and file parts, tool calls, tool schemas. */
export function chatRequestText(request: Json, toolsText?: string): RequestText {
  const parts: string[] = [];
  let fixed = 0;
  for (const raw of asArray(request['messages'])) {
    const message = asObject(raw);
    const content = message['content'];
    if (typeof content === 'string') parts.push(content);
    for (const item of asArray(content)) {
      const part = asObject(item);
      if (part['type'] === 'image_url') fixed += TOKENS_PER_IMAGE;
      else if (part['type'] === 'file') fixed += pdfTokens(asString(asObject(part['file'])['file_data']) ?? '');
      else parts.push(asString(part['text']) ?? asString(part['refusal']) ?? JSON.stringify(part));
    }
    for (const call of asArray(message['tool_calls'])) {
      const fn = asObject(asObject(call)['function']);
      parts.push(asString(fn['name']) ?? '', asString(fn['arguments']) ?? '');
    }
  }
  pushTools(parts, request, toolsText);
  return { parts, fixed };
}

/** Tool schemas: the text sent, as one part, when the caller has it; else each one serialised. */
function pushTools(parts: string[], request: Json, toolsText: string | undefined): void {
  if (toolsText !== undefined) parts.push(toolsText);
  else for (const tool of asArray(request['tools'])) parts.push(JSON.stringify(tool));
}

/**
 * An embeddings request (issue #13): its strings, and token-id inputs counted as the ids they hold
 * (the upstream reads exactly those tokens).
 */
export function embeddingsRequestText(request: Json): RequestText {
  const input = request['input'];
  if (typeof input === 'string') return { parts: [input], fixed: 0 };
  if (!Array.isArray(input)) return { parts: [], fixed: 0 };
  if (input.every((item) => typeof item === 'number')) return { parts: [], fixed: input.length };
  const parts: string[] = [];
  let fixed = 0;
  for (const item of input) {
    if (typeof item === 'string') parts.push(item);
    else if (Array.isArray(item)) fixed += item.length;
  }
  return { parts, fixed };
}

/**
 * A Responses request (issue #14; responses-api.md §2.2): `instructions`, then `input` as a string
 * or items: messages' text parts, function and custom tool calls and their outputs, reasoning
 * summaries (opaque `encrypted_content` is read by the model too, counted as its characters would
 * be), images and files at the fixed rates, and the tool schemas.
 */
export function responsesRequestText(request: Json, toolsText?: string): RequestText {
  const parts: string[] = [];
  let fixed = 0;
  if (typeof request['instructions'] === 'string') parts.push(request['instructions']);
  const input = request['input'];
  if (typeof input === 'string') parts.push(input);
  const content = (raw: unknown): void => {
    const part = asObject(raw);
    if (part['type'] === 'input_image') fixed += TOKENS_PER_IMAGE;
    else if (part['type'] === 'input_file') fixed += pdfTokens(asString(part['file_data']) ?? '');
    else parts.push(asString(part['text']) ?? asString(part['refusal']) ?? JSON.stringify(part));
  };
  for (const raw of asArray(input)) {
    const item = asObject(raw);
    switch (item['type'] ?? 'message') {
      case 'message':
        if (typeof item['content'] === 'string') parts.push(item['content']);
        else asArray(item['content']).forEach(content);
        break;
      case 'function_call':
        parts.push(asString(item['name']) ?? '', asString(item['arguments']) ?? '');
        break;
      case 'custom_tool_call':
        parts.push(asString(item['name']) ?? '', asString(item['input']) ?? '');
        break;
      case 'function_call_output':
      case 'custom_tool_call_output':
        if (typeof item['output'] === 'string') parts.push(item['output']);
        else asArray(item['output']).forEach(content);
        break;
      case 'reasoning':
        for (const summary of asArray(item['summary'])) parts.push(asString(asObject(summary)['text']) ?? '');
        if (typeof item['encrypted_content'] === 'string') fixed += Math.ceil(item['encrypted_content'].length / 4);
        break;
      default:
        parts.push(JSON.stringify(item));
    }
  }
  pushTools(parts, request, toolsText);
  return { parts, fixed };
}
