import { ERR, GatewayError } from '../errors.ts';
import type { GatewayContext } from '../http/state.ts';
import { CLIENT_DISCONNECTED } from '../http/state.ts';
import type { FormattedAudio } from '../plugin-host/api.ts';
import { failed, SERVED, type Attempt, type AttemptResult } from '../routing/attempt.ts';
import { failureOf } from '../routing/failures.ts';
import { speechCostHeader, speechUsage } from '../usage/speech.ts';
import { drained } from '../sse/writer.ts';
import { pluginRefusalOf } from './plugin-refusal.ts';

/**
 * An in-process plugin's audio, sent as it is made: the first chunk is awaited before the answer
 * is committed (a plugin that fails at once can still fail over), then each chunk is written with
 * backpressure. A failure after that cuts the connection: binary audio has no in-band error, and a
 * cut chunked body is what every HTTP client reports as an error rather than a short clip.
 */
export async function sendAudio(ctx: GatewayContext, result: FormattedAudio, provider: string, attempt: Attempt): Promise<AttemptResult> {
  const { outcome } = ctx.state;
  const body = result.body;
  const iterator = body instanceof Uint8Array ? [body][Symbol.iterator]() : body[Symbol.asyncIterator]();
  let first: IteratorResult<Uint8Array>;
  try {
    first = await iterator.next();
  } catch (err) {
    return failed(failureOf(err instanceof GatewayError ? err : (pluginRefusalOf(err) ?? ERR.pluginFailed(provider))));
  }
  // No audio at all is not an answer, and is not charged (it would be a 200 with an empty clip).
  if (first.done === true) return failed(failureOf(ERR.pluginInvalidResult(provider, 'no audio')));
  attempt.commit();
  outcome.firstByteMs ??= performance.now() - ctx.state.startedAt;
  outcome.usage = speechUsage(ctx);
  ctx.respond = false;
  const res = ctx.res;
  res.writeHead(200, { 'content-type': result.contentType, 'x-junction-cost-usd': speechCostHeader(ctx) });
  try {
    for (let next: IteratorResult<Uint8Array> = first; next.done !== true; next = await iterator.next()) {
      if (res.destroyed) {
        outcome.error = CLIENT_DISCONNECTED;
        await iterator.return?.();
        break;
      }
      if (!res.write(next.value)) await drained(res);
    }
    res.end();
  } catch {
    outcome.error = ERR.pluginFailed(provider).code;
    res.destroy();
  }
  return SERVED;
}
