import { asArray, isObject, type Json } from './convert/json.ts';
import { ABSENT_WHEN_EMPTY } from './wire.ts';

/**
 * Drops `null` from the Messages fields api.anthropic.com leaves out when empty (issue #12). The
 * SDK's types list them as `T | null`, so an in-process plugin that follows the types writes
 * `citations: null`, which the Vercel AI SDK rejects. Applied to in-process answers only: native
 * bytes are the upstream's own, and the converters never write these nulls. Objects are copied
 * only when something is dropped.
 */
export function withoutAbsentNulls(message: Json): Json {
  let out = dropNulls(message, ABSENT_WHEN_EMPTY.message);
  if (isObject(out['usage'])) out = replace(out, 'usage', dropNulls(out['usage'], ABSENT_WHEN_EMPTY.usage));
  if (Array.isArray(out['content'])) {
    const content = asArray(out['content']);
    const cleaned = content.map((block) => (isObject(block) ? blockWithoutNulls(block) : block));
    if (cleaned.some((block, i) => block !== content[i])) out = { ...out, content: cleaned };
  }
  return out;
}

/** The same for one stream event: message_start's message, a started text block, message_delta. */
export function eventWithoutAbsentNulls(event: Json): Json {
  switch (event['type']) {
    case 'message_start':
      return isObject(event['message']) ? replace(event, 'message', withoutAbsentNulls(event['message'])) : event;
    case 'content_block_start':
      return isObject(event['content_block']) ? replace(event, 'content_block', blockWithoutNulls(event['content_block'])) : event;
    case 'message_delta': {
      let out = event;
      if (isObject(out['delta'])) out = replace(out, 'delta', dropNulls(out['delta'], ABSENT_WHEN_EMPTY.delta));
      if (isObject(out['usage'])) out = replace(out, 'usage', dropNulls(out['usage'], ['output_tokens_details', 'server_tool_use']));
      return out;
    }
    default:
      return event;
  }
}

const blockWithoutNulls = (block: Json): Json => (block['type'] === 'text' ? dropNulls(block, ABSENT_WHEN_EMPTY.textBlock) : block);

function dropNulls(obj: Json, fields: readonly string[]): Json {
  if (!fields.some((field) => obj[field] === null)) return obj;
  const out = { ...obj };
  for (const field of fields) if (out[field] === null) delete out[field];
  return out;
}

const replace = (obj: Json, key: string, value: Json): Json => (obj[key] === value ? obj : { ...obj, [key]: value });
