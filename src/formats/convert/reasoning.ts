import { asArray, asObject, asString, type Json } from './json.ts';
import { wrapReasoningDetail } from './opaque-reasoning.ts';

/**
 * Reasoning as Chat upstreams send it (protocol.md §C.2, §D.7): DeepSeek/vLLM `reasoning_content`,
 * OpenRouter `reasoning` plus typed `reasoning_details`. OpenRouter sends the same text in both of
 * its fields, so details win when they carry text. Signatures and encrypted items of other vendors
 * are wrapped so they survive the round trip through a Messages client.
 */
export interface ReasoningPiece {
  readonly kind: 'text' | 'signature' | 'encrypted';
  readonly value: string;
  /** The reasoning item it belongs to: items with different indices are different blocks. */
  readonly index?: number | undefined;
}

/** Only Anthropic's own signatures and encrypted blocks can ever be replayed to Claude. */
const ANTHROPIC_FORMAT = 'anthropic-claude-v1';

/** What a delta without reasoning gives: most of a stream's chunks (issue #17: no array per chunk). */
const NONE: readonly ReasoningPiece[] = Object.freeze([]);

export function reasoningPieces(source: Json): readonly ReasoningPiece[] {
  if (source['reasoning_details'] === undefined && source['reasoning_content'] === undefined && source['reasoning'] === undefined) return NONE;
  const pieces: ReasoningPiece[] = [];
  let detailText = false;
  for (const raw of asArray(source['reasoning_details'])) {
    const item = asObject(raw);
    const format = asString(item['format']);
    const index = typeof item['index'] === 'number' ? item['index'] : undefined;
    if (item['type'] === 'reasoning.text') {
      const text = asString(item['text']);
      if (text) {
        pieces.push({ kind: 'text', value: text, index });
        detailText = true;
      }
      const signature = asString(item['signature']);
      // Anthropic's own signature stays as it is; another vendor's travels wrapped (opaque-reasoning.ts).
      if (signature) pieces.push({ kind: 'signature', value: format === ANTHROPIC_FORMAT ? signature : wrapReasoningDetail({ ...item, text: undefined }), index });
    } else if (item['type'] === 'reasoning.summary') {
      const summary = asString(item['summary']);
      if (summary) {
        pieces.push({ kind: 'text', value: summary, index });
        detailText = true;
      }
    } else if (item['type'] === 'reasoning.encrypted') {
      const data = asString(item['data']);
      if (data) pieces.push({ kind: 'encrypted', value: format === ANTHROPIC_FORMAT ? data : wrapReasoningDetail(item) });
    }
  }
  if (!detailText) {
    const text = asString(source['reasoning_content']) ?? asString(source['reasoning']);
    if (text) pieces.unshift({ kind: 'text', value: text });
  }
  return pieces;
}
