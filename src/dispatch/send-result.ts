import { ERR, GatewayError } from '../errors.ts';
import { FORMAT_OF, type TokenUsage } from '../formats/wire.ts';
import type { GatewayContext } from '../http/state.ts';
import type { Logger } from '../log.ts';
import type { FormattedStream, PluginResult } from '../plugin-host/api.ts';
import { CHAT_DONE_FRAME, chatChunkFrame, messagesEventFrame, streamErrorFrame } from '../sse/encode.ts';
import { SseWriter } from '../sse/writer.ts';
import { applyChatChunk, applyChatUsage, applyMessagesEvent, applyMessagesUsage, emptyUsage } from '../usage/normalize.ts';

/**
 * Sends a plugin's typed result to the client: JSON bodies through Koa, streams as SSE written
 * here with backpressure. Usage is read from the typed objects as they pass.
 */
export async function sendResult(ctx: GatewayContext, result: PluginResult, log: Logger): Promise<void> {
  const route = ctx.state.route;
  if (!route) throw ERR.internal();
  const provider = route.provider.config.id;
  if (route.endpoint === 'count_tokens' || result.format === 'count') {
    if (route.endpoint !== 'count_tokens' || result.format !== 'count') {
      throw ERR.pluginInvalidResult(provider, `a ${result.format} result does not answer ${route.endpoint}`);
    }
    ctx.body = result.body;
    return;
  }
  if (result.format !== FORMAT_OF[route.endpoint]) {
    // Converting between formats is the translation layer's job (issue #3).
    throw ERR.formatUnsupported(route.model.id, provider, ctx.path);
  }
  ctx.state.outcome.firstByteMs ??= performance.now() - ctx.state.startedAt;
  if ('body' in result) {
    const usage = emptyUsage();
    if (result.format === 'messages') applyMessagesUsage(usage, result.body.usage);
    else applyChatUsage(usage, result.body.usage);
    ctx.state.outcome.usage = usage;
    ctx.body = result.body;
    return;
  }
  await sendStream(ctx, result, provider, log);
}

async function sendStream(ctx: GatewayContext, result: FormattedStream, provider: string, log: Logger): Promise<void> {
  const { surface, requestId, outcome } = ctx.state;
  const iterator = (result.events as AsyncIterable<Record<string, unknown> & { type?: string }>)[Symbol.asyncIterator]();
  // Pull the first event before committing to 200: a plugin that fails at once gets a real
  // HTTP error status rather than an in-band one.
  let next: IteratorResult<Record<string, unknown> & { type?: string }>;
  try {
    next = await iterator.next();
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    log.warn({ req_id: requestId, provider, err: err instanceof Error ? err.message : String(err) }, 'stream failed to start');
    throw ERR.pluginFailed(provider);
  }
  ctx.respond = false;
  const writer = new SseWriter(ctx.res);
  writer.start();
  const usage: TokenUsage = emptyUsage();
  let sawUsage = false;
  const isMessages = result.format === 'messages';
  try {
    while (next.done !== true) {
      const event = next.value;
      if (isMessages ? applyMessagesEvent(usage, event) : applyChatChunk(usage, event)) sawUsage = true;
      await writer.write(isMessages ? messagesEventFrame(event as { type: string }) : chatChunkFrame(event));
      if (writer.closed) {
        await iterator.return?.();
        outcome.error = 'client_disconnected';
        break;
      }
      next = await iterator.next();
    }
    writer.end(isMessages ? undefined : CHAT_DONE_FRAME);
  } catch (err) {
    log.warn({ req_id: requestId, provider, err: err instanceof Error ? err.message : String(err) }, 'stream failed');
    outcome.error = 'stream_failed';
    const failure = err instanceof GatewayError ? err : ERR.pluginFailed(provider);
    writer.end(streamErrorFrame(surface, failure, requestId));
  } finally {
    if (sawUsage) outcome.usage = usage;
  }
}
