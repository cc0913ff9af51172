import { ERR } from '../errors.ts';
import type { ImagesEditStreamEvent, ImagesStreamEvent } from '../formats/wire.ts';
import { CLIENT_DISCONNECTED, type GatewayContext } from '../http/state.ts';
import type { FormattedImages } from '../plugin-host/api.ts';
import { failed, SERVED, type Attempt, type AttemptResult } from '../routing/attempt.ts';
import { failureOf } from '../routing/failures.ts';
import { streamErrorFrame } from '../sse/encode.ts';
import { SseWriter } from '../sse/writer.ts';
import { addUsage, applyImagesUsage, emptyUsage } from '../usage/normalize.ts';
import { pluginRefusalOf } from './plugin-refusal.ts';

/**
 * An in-process plugin's images, sent as OpenAI's `ImagesResponse` (media.md §1.3), or for
 * `stream: true` as its SSE events (§1.4). The images drawn are what is charged at the per-image
 * price, `usage` (summed over the completed events of a stream) at the token prices.
 */
export async function sendImages(ctx: GatewayContext, result: FormattedImages, provider: string, attempt: Attempt): Promise<AttemptResult> {
  const streamed = ctx.state.body?.['stream'] === true;
  if ('events' in result !== streamed) {
    return failed(failureOf(ERR.pluginInvalidResult(provider, streamed ? 'a whole answer to a stream request' : 'a stream for a whole request')));
  }
  if ('events' in result) return streamImages(ctx, result.events, provider, attempt);
  const { body } = result;
  if (typeof body !== 'object' || body === null || !Array.isArray(body.data)) {
    return failed(failureOf(ERR.pluginInvalidResult(provider, 'images without a data array')));
  }
  attempt.commit();
  const usage = emptyUsage();
  applyImagesUsage(usage, body.usage);
  usage.images = body.data.length;
  ctx.state.outcome.usage = usage;
  ctx.state.outcome.firstByteMs ??= performance.now() - ctx.state.startedAt;
  ctx.body = body;
  return SERVED;
}

type ImageEvent = ImagesStreamEvent | ImagesEditStreamEvent;

async function streamImages(ctx: GatewayContext, events: AsyncIterable<ImageEvent>, provider: string, attempt: Attempt): Promise<AttemptResult> {
  const { outcome, surface, requestId } = ctx.state;
  const iterator = events[Symbol.asyncIterator]();
  let next: IteratorResult<ImageEvent>;
  try {
    next = await iterator.next();
  } catch (err) {
    return failed(failureOf(pluginRefusalOf(err) ?? ERR.pluginFailed(provider)));
  }
  if (next.done === true) return failed(failureOf(ERR.pluginInvalidResult(provider, 'an empty stream')));
  const wanted = typeof ctx.state.body?.['n'] === 'number' ? ctx.state.body['n'] : 1;
  attempt.commit();
  outcome.firstByteMs ??= performance.now() - ctx.state.startedAt;
  ctx.respond = false;
  const writer = new SseWriter(ctx.res, surface, attempt.keepaliveMs);
  writer.start();
  const usage = emptyUsage();
  usage.images = 0;
  try {
    for (; next.done !== true && !writer.closed; next = await iterator.next()) {
      const event = next.value;
      if (event.type === 'image_generation.completed' || event.type === 'image_edit.completed') {
        usage.images++;
        const one = emptyUsage();
        applyImagesUsage(one, event.usage);
        addUsage(usage, one);
      }
      await writer.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    }
    if (writer.closed) {
      outcome.error = CLIENT_DISCONNECTED;
      await iterator.return?.();
      writer.end();
    } else if (usage.images < wanted) {
      // A stream that ends before every image is complete must not read as a whole answer.
      const err = ERR.pluginInvalidResult(provider, `${usage.images} of ${wanted} images completed`);
      outcome.error = err.code;
      writer.end(streamErrorFrame(surface, err, requestId));
    } else {
      writer.end();
    }
  } catch {
    const failure = ERR.pluginFailed(provider);
    outcome.error = writer.closed ? CLIENT_DISCONNECTED : failure.code;
    writer.end(streamErrorFrame(surface, failure, requestId));
  } finally {
    outcome.usage = usage;
  }
  return SERVED;
}
