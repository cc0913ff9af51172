import { asArray, asObject, asString, type Json } from '../convert/json.ts';
import { unwrapReasoningDetail, wrapReasoningDetail } from '../convert/opaque-reasoning.ts';
import type { CanonicalPart } from './request.ts';

/**
 * Reasoning across a Responses boundary (responses-api.md §7.4). A blob is valid only for the
 * vendor that minted it, so both directions tag what they carry:
 * - To a Responses client, another vendor's reasoning (Claude's signed thinking, redacted
 *   thinking) travels in `encrypted_content`, packed with Junction's tag. Codex drops item ids on
 *   replay, so the blob is self-contained: the summary is the thinking text.
 * - From a Responses upstream, OpenAI's own item is the signature, wrapped as
 *   `openai.reasoning`: a Responses upstream gets it back as it was, any other drops it.
 */
const OPENAI_ITEM = 'openai.reasoning';
const PACKED = 'junction.reasoning';

/** Summary parts are paragraphs: joined by a blank line, as the stream decoder joins them. */
const summaryText = (item: Json): string => asArray(item['summary']).map((s) => asString(asObject(s)['text']) ?? '').join('\n\n');

/**
 * A reasoning item from a Responses upstream → a canonical reasoning block's text and signature.
 * Without `encrypted_content` there is nothing to replay: Junction asks the upstream not to store
 * (`store: false`), so the item's id alone would not be found (responses-api.md §2.2).
 */
export function reasoningFromUpstream(item: Json): { text: string; signature?: string } {
  const encrypted = asString(item['encrypted_content']);
  if (encrypted === undefined) return { text: summaryText(item) };
  const original: Json = { type: OPENAI_ITEM, summary: item['summary'] ?? [], encrypted_content: encrypted };
  if (asString(item['id']) !== undefined) original['id'] = item['id'];
  return { text: summaryText(item), signature: wrapReasoningDetail(original) };
}

/** A canonical reasoning part → the input item a Responses upstream takes back, if it minted it. */
export function reasoningToUpstream(part: CanonicalPart): Json | undefined {
  const carried = part.type === 'reasoning' ? part.signature : part.type === 'opaque_reasoning' ? part.data : undefined;
  const original = unwrapReasoningDetail(carried);
  if (original?.['type'] !== OPENAI_ITEM) return undefined;
  const { type: _tag, ...item } = original;
  return { type: 'reasoning', ...item };
}

/** The `encrypted_content` a Responses client gets for reasoning another vendor made. */
export function packForClient(block: { signature?: string | undefined; data?: string | undefined }): string | undefined {
  if (block.signature !== undefined && block.signature !== '') return wrapReasoningDetail({ type: PACKED, signature: block.signature });
  if (block.data !== undefined) return wrapReasoningDetail({ type: PACKED, data: block.data });
  return undefined;
}

/** A reasoning item a Responses client sent back → the canonical part it was made from. */
export function reasoningFromClient(item: Json): CanonicalPart {
  const text = summaryText(item);
  const encrypted = asString(item['encrypted_content']);
  const packed = unwrapReasoningDetail(encrypted);
  if (packed?.['type'] === PACKED) {
    const data = asString(packed['data']);
    if (data !== undefined) return { type: 'opaque_reasoning', data };
    return { type: 'reasoning', text, signature: asString(packed['signature']) ?? '' };
  }
  // OpenAI's own (a conversation that began on a native route): kept for a Responses upstream.
  return { type: 'reasoning', ...reasoningFromUpstream(item) };
}
