import type { ChatDialect } from './dialect.ts';
import { asArray, asObject, asString, isObject, type Json } from './json.ts';

/**
 * Messages content blocks → Chat content parts (protocol.md §D.2). Text, images and PDFs have
 * equivalents; anything else becomes a text note that says what it was, so nothing disappears.
 */

export type ChatPart = Json & { type: string };

/** Keeps `cache_control` only for upstreams that understand it, and never its `ttl` (peers.md §2 #17). */
export function cacheControlOf(block: Json, dialect: ChatDialect): Json {
  if (!dialect.cacheControl || !isObject(block['cache_control'])) return {};
  const type = asString(block['cache_control']['type']);
  return type === undefined ? {} : { cache_control: { type } };
}

const textPart = (text: string, extra: Json = {}): ChatPart => ({ type: 'text', text, ...extra });

function imagePart(block: Json): ChatPart {
  const source = asObject(block['source']);
  if (source['type'] === 'base64') {
    return { type: 'image_url', image_url: { url: `data:${asString(source['media_type']) ?? 'image/png'};base64,${asString(source['data']) ?? ''}` } };
  }
  if (source['type'] === 'url') return { type: 'image_url', image_url: { url: asString(source['url']) ?? '' } };
  return textPart(`[image from ${String(source['type'])} source ${JSON.stringify(source['file_id'] ?? '')} cannot be sent to this model]`);
}

function documentParts(block: Json, dialect: ChatDialect): ChatPart[] {
  const source = asObject(block['source']);
  const title = asString(block['title']);
  const heading = title === undefined ? '' : `Document: ${title}\n\n`;
  switch (source['type']) {
    case 'text':
      return [textPart(`${heading}${asString(source['data']) ?? ''}`)];
    case 'content':
      return asArray(source['content']).flatMap((inner) => {
        const text = asString(asObject(inner)['text']);
        return text === undefined ? [] : [textPart(text)];
      });
    case 'base64':
      if (dialect.pdf === 'file') {
        const media = asString(source['media_type']) ?? 'application/pdf';
        return [{ type: 'file', file: { filename: title ?? 'document.pdf', file_data: `data:${media};base64,${asString(source['data']) ?? ''}` } }];
      }
      return [textPart(`[PDF document${title === undefined ? '' : ` "${title}"`} omitted: this model cannot read PDF files]`)];
    case 'url':
      return [textPart(`[document${title === undefined ? '' : ` "${title}"`} at ${asString(source['url']) ?? '?'}: this model cannot fetch documents by URL]`)];
    default:
      return [textPart(`[document from ${String(source['type'])} source cannot be sent to this model]`)];
  }
}

function searchResultPart(block: Json): ChatPart {
  const texts = asArray(block['content']).map((c) => asString(asObject(c)['text']) ?? '').join('\n');
  return textPart(`Search result: ${asString(block['title']) ?? ''} (${asString(block['source']) ?? ''})\n${texts}`);
}

/** One user-side block → Chat parts. tool_result blocks are handled by the caller. */
export function userParts(block: Json, dialect: ChatDialect): ChatPart[] {
  switch (block['type']) {
    case 'text':
      return [textPart(asString(block['text']) ?? '', cacheControlOf(block, dialect))];
    case 'image':
      return [{ ...imagePart(block), ...cacheControlOf(block, dialect) }];
    case 'document':
      return documentParts(block, dialect);
    case 'search_result':
      return [searchResultPart(block)];
    default:
      return [textPart(describeBlock(block))];
  }
}

/** A block with no Chat equivalent, rendered as text so the model still sees it. */
export function describeBlock(block: Json): string {
  const { cache_control: _ignored, ...rest } = block;
  return `[${String(block['type'])} block: ${JSON.stringify(rest)}]`;
}

/** A tool_result's content as a tool message's text, plus any images, which tool messages cannot hold. */
export function toolResultContent(block: Json, dialect: ChatDialect): { text: string; images: ChatPart[] } {
  const content = block['content'];
  const texts: string[] = [];
  const images: ChatPart[] = [];
  if (typeof content === 'string') texts.push(content);
  for (const inner of asArray(content)) {
    const part = asObject(inner);
    if (part['type'] === 'image') images.push(imagePart(part));
    else if (part['type'] === 'text') texts.push(asString(part['text']) ?? '');
    else texts.push(...userParts(part, dialect).map((p) => (p.type === 'text' ? String(p['text']) : describeBlock(part))));
  }
  // is_error has no field in Chat; it stays visible to the model in the text (issue #3).
  const prefix = block['is_error'] === true ? '[tool error] ' : '';
  return { text: `${prefix}${texts.join('\n')}`, images };
}
