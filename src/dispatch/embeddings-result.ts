import { ERR } from '../errors.ts';
import type { GatewayContext } from '../http/state.ts';
import type { FormattedEmbeddings } from '../plugin-host/api.ts';
import { failed, SERVED, type AttemptResult } from '../routing/attempt.ts';
import { failureOf } from '../routing/failures.ts';
import { emptyUsage } from '../usage/normalize.ts';

/**
 * An in-process plugin's embeddings, sent as OpenAI's `CreateEmbeddingResponse` (media.md §4).
 * The openai SDK asks for `encoding_format: "base64"` unless its caller chose, and decodes the
 * string as little-endian float32 itself: a float array there would decode as garbage. So the core
 * encodes what the plugin returned as floats, and every plugin gets that for free.
 */
export function sendEmbeddings(ctx: GatewayContext, result: FormattedEmbeddings, provider: string): AttemptResult {
  const { body } = result;
  if (typeof body !== 'object' || body === null || !Array.isArray(body.data)) {
    return failed(failureOf(ERR.pluginInvalidResult(provider, 'embeddings without a data array')));
  }
  const base64 = ctx.state.body?.['encoding_format'] === 'base64';
  const data = body.data.map((item) => {
    const vector: unknown = item.embedding;
    if (base64 && Array.isArray(vector)) return { ...item, embedding: float32Base64(vector as number[]) };
    return item;
  });
  const usage = emptyUsage();
  usage.input = typeof body.usage?.prompt_tokens === 'number' ? body.usage.prompt_tokens : 0;
  ctx.state.outcome.usage = usage;
  ctx.state.outcome.firstByteMs ??= performance.now() - ctx.state.startedAt;
  ctx.body = { ...body, data };
  return SERVED;
}

/** Little-endian float32 bytes in base64, whatever the machine's byte order. */
export function float32Base64(vector: readonly number[]): string {
  const bytes = Buffer.allocUnsafe(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i] ?? 0, i * 4);
  return bytes.toString('base64');
}
