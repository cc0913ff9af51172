import { asArray, asObject, asString, type Json } from '../formats/convert/json.ts';

/**
 * A quick estimate of a Messages request's input tokens, for two uses: message_start on translated
 * streams (Claude Code reads its context meter from it; the exact count follows in message_delta)
 * and count_tokens where the upstream has no endpoint of its own. It walks the request once and
 * counts about four characters per token, a fixed amount per image and per PDF kilobyte. The
 * billing issue (#4) replaces it with a tokenizer; the method and its bias are in the README.
 */

const CHARS_PER_TOKEN = 4;
/** Anthropic's figure for a ~1.15 megapixel image, the largest before downscaling. */
const TOKENS_PER_IMAGE = 1600;
/** About 2,000 tokens per page for a text PDF page of ~10 KB. */
const TOKENS_PER_PDF_BYTE = 0.2;

export function estimateMessagesInputTokens(request: Json): number {
  let chars = 0;
  let tokens = 0;
  const visitBlock = (raw: unknown): void => {
    if (typeof raw === 'string') {
      chars += raw.length;
      return;
    }
    const block = asObject(raw);
    switch (block['type']) {
      case 'text':
        chars += (asString(block['text']) ?? '').length;
        break;
      case 'thinking':
        chars += (asString(block['thinking']) ?? '').length;
        break;
      case 'image':
        tokens += TOKENS_PER_IMAGE;
        break;
      case 'document': {
        const source = asObject(block['source']);
        const data = asString(source['data']) ?? '';
        if (source['type'] === 'base64') tokens += Math.ceil(data.length * 0.75 * TOKENS_PER_PDF_BYTE);
        else chars += data.length;
        break;
      }
      case 'tool_use':
        chars += (asString(block['name']) ?? '').length + JSON.stringify(block['input'] ?? {}).length;
        break;
      case 'tool_result':
        if (typeof block['content'] === 'string') chars += block['content'].length;
        else asArray(block['content']).forEach(visitBlock);
        break;
      default:
        chars += JSON.stringify(block).length;
    }
  };
  const system = request['system'];
  if (typeof system === 'string') chars += system.length;
  else asArray(system).forEach(visitBlock);
  for (const message of asArray(request['messages'])) {
    const content = asObject(message)['content'];
    if (typeof content === 'string') chars += content.length;
    else asArray(content).forEach(visitBlock);
  }
  for (const tool of asArray(request['tools'])) chars += JSON.stringify(tool).length;
  return tokens + Math.ceil(chars / CHARS_PER_TOKEN);
}

/** The same estimate for a Chat Completions request: message text, image parts, tool schemas. */
export function estimateChatInputTokens(request: Json): number {
  let chars = 0;
  let tokens = 0;
  for (const raw of asArray(request['messages'])) {
    const message = asObject(raw);
    const content = message['content'];
    if (typeof content === 'string') chars += content.length;
    for (const part of asArray(content)) {
      const p = asObject(part);
      if (p['type'] === 'image_url') tokens += TOKENS_PER_IMAGE;
      else chars += (asString(p['text']) ?? JSON.stringify(p)).length;
    }
    if (message['tool_calls'] !== undefined) chars += JSON.stringify(message['tool_calls']).length;
  }
  for (const tool of asArray(request['tools'])) chars += JSON.stringify(tool).length;
  return tokens + Math.ceil(chars / CHARS_PER_TOKEN);
}
