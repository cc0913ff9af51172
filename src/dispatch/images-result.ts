import { ERR } from '../errors.ts';
import type { GatewayContext } from '../http/state.ts';
import type { FormattedImages } from '../plugin-host/api.ts';
import { failed, SERVED, type AttemptResult } from '../routing/attempt.ts';
import { failureOf } from '../routing/failures.ts';
import { applyImagesUsage, emptyUsage } from '../usage/normalize.ts';

/**
 * An in-process plugin's images, sent as OpenAI's `ImagesResponse` (media.md §1.3). The images
 * in `data` are what is charged at the per-image price; `usage`, when present, at the token prices.
 */
export function sendImages(ctx: GatewayContext, result: FormattedImages, provider: string): AttemptResult {
  const { body } = result;
  if (typeof body !== 'object' || body === null || !Array.isArray(body.data)) {
    return failed(failureOf(ERR.pluginInvalidResult(provider, 'images without a data array')));
  }
  const usage = emptyUsage();
  applyImagesUsage(usage, body.usage);
  usage.images = body.data.length;
  ctx.state.outcome.usage = usage;
  ctx.state.outcome.firstByteMs ??= performance.now() - ctx.state.startedAt;
  ctx.body = body;
  return SERVED;
}
