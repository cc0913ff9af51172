import { definePlugin, PluginRequestError, type CallContext, type ClientRequest, type PluginResult } from '../../src/plugin-host/api.ts';
import { chatBody, chatChunks } from './chat.ts';
import { embed } from './embeddings.ts';
import { draw, drawStream, edit } from './image.ts';
import { transcribe } from './transcribe.ts';
import { asChatRequest } from './responses.ts';
import { speak } from './speech.ts';
import { messagesBody, messagesEvents } from './messages.ts';
import { estimateTokens, inputTexts, replyTo } from './reply.ts';

/**
 * `mock`: an offline demo provider that answers in-process, deterministically, in both formats,
 * streamed or not, and serves one model of each media kind: embeddings, images (drawn and edited),
 * speech and transcription (issue #13). It lets `npm ci && npm start` work with no provider key and no network.
 */
export default definePlugin({
  name: 'mock',
  apiVersion: '^1.0.0',
  // It honours the length limit and a forced tool choice; everything else is accepted and has no effect.
  create: () => ({
    invoke,
    invokes: [
      'messages',
      'count_tokens',
      'chat_completions',
      'responses',
      'embeddings',
      'images_generations',
      'images_edits',
      'audio_speech',
      'audio_transcriptions',
      'audio_translations',
    ],
    parameters: ['max_tokens', 'tools', 'tool_choice'],
  }),
});

async function invoke(request: ClientRequest, ctx: CallContext): Promise<PluginResult> {
  const id = ctx.requestId.replace(/^req_/, '');
  if (request.endpoint === 'embeddings') return { format: 'embeddings', body: embed(request.body, ctx.upstreamModel) };
  if (request.endpoint === 'images_generations') {
    return request.stream ? { format: 'images', events: drawStream(request.body) } : { format: 'images', body: draw(request.body) };
  }
  if (request.endpoint === 'audio_speech') return speak(request.body);
  if (request.endpoint === 'images_edits') return edit(request);
  if (request.endpoint === 'audio_transcriptions' || request.endpoint === 'audio_translations') return transcribe(request);
  if (request.endpoint === 'count_tokens') {
    return { format: 'count', body: { input_tokens: estimateTokens(inputTexts(request)) } };
  }
  // Answered whole as Chat; the core writes it as a Responses answer, or its stream (issue #14).
  if (request.endpoint === 'responses') {
    const chat = asChatRequest(request);
    return { format: 'chat', body: chatBody(`chatcmpl-${id}`, ctx.upstreamModel, Math.floor(Date.now() / 1000), replyTo(chat)) };
  }
  // Not listed in `invokes`: input_tokens is estimated by the core.
  if (request.endpoint === 'responses_input_tokens') throw new PluginRequestError(400, 'the demo does not count Responses input');
  const reply = replyTo(request);
  if (request.endpoint === 'messages') {
    return request.stream
      ? { format: 'messages', events: messagesEvents(`msg_${id}`, ctx.upstreamModel, reply) }
      : { format: 'messages', body: messagesBody(`msg_${id}`, ctx.upstreamModel, reply) };
  }
  const created = Math.floor(Date.now() / 1000);
  const includeUsage = request.body.stream_options?.include_usage === true;
  return request.stream
    ? { format: 'chat', events: chatChunks(`chatcmpl-${id}`, ctx.upstreamModel, created, reply, includeUsage) }
    : { format: 'chat', body: chatBody(`chatcmpl-${id}`, ctx.upstreamModel, created, reply) };
}
