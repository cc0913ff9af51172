import type { EmbeddingsRequest, EmbeddingsResponse } from '../../src/plugin-host/api.ts';
import { fnv1a } from './hash.ts';
import { estimateTokens } from './reply.ts';

/** The demo embedding model's width when the request does not ask for `dimensions`. */
export const DEFAULT_DIMENSIONS = 256;

/**
 * Deterministic demo embeddings: each word is hashed to one dimension and a sign (the hashing
 * trick), and the vector is scaled to unit length. The same text always gets the same vector,
 * and texts sharing words point the same way, so cosine similarity means something in a demo.
 * Token-id inputs embed their ids as words. Input tokens are counted as the text models count them.
 */
export function embed(body: EmbeddingsRequest, model: string): EmbeddingsResponse {
  const dimensions = body.dimensions ?? DEFAULT_DIMENSIONS;
  const inputs = inputsOf(body.input);
  const data = inputs.map(({ text }, index) => ({ object: 'embedding' as const, index, embedding: vectorOf(text, dimensions) }));
  const tokens = inputs.reduce((sum, input) => sum + input.tokens, 0);
  return { object: 'list', data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } };
}

function inputsOf(input: EmbeddingsRequest['input']): { text: string; tokens: number }[] {
  if (typeof input === 'string') return [{ text: input, tokens: estimateTokens([input]) }];
  if (input.every((item): item is number => typeof item === 'number')) return [{ text: input.join(' '), tokens: input.length }];
  return input.map((item) =>
    typeof item === 'string' ? { text: item, tokens: estimateTokens([item]) } : { text: (item as number[]).join(' '), tokens: (item as number[]).length },
  );
}

function vectorOf(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const hash = fnv1a(word);
    vector[hash % dimensions] = (vector[hash % dimensions] ?? 0) + ((hash >>> 16) & 1 ? 1 : -1);
  }
  const length = Math.hypot(...vector);
  if (length === 0) return vector.map((_, i) => (i === 0 ? 1 : 0));
  return vector.map((x) => x / length);
}
