import type { GatewayContext } from '../http/state.ts';
import type { Logger } from '../log.ts';
import type { CallContext, ClientRequest, FormFile, ImagesEditFields, TranscriptionFields, TranslationFields } from '../plugin-host/api.ts';
import type { Upload } from '../http/multipart/upload.ts';
import { wavDurationMs } from '../usage/wav.ts';
import { FORMAT_OF, type ResponsesRequest, type ChatRequest, type CountTokensRequest, type EmbeddingsRequest, type ImagesRequest, type MessagesRequest, type SpeechRequest } from '../formats/wire.ts';
import { ERR } from '../errors.ts';
import type { Cancellation } from '../routing/cancellation.ts';
import { headerText } from '../proxy/headers.ts';

/** The validated request as plugins receive it. */
export function clientRequestOf(ctx: GatewayContext): ClientRequest {
  const { route, body } = ctx.state;
  if (!route || !body) throw ERR.internal();
  const stream = body['stream'] === true;
  // The body was validated against the endpoint's schema in the chain; the cast records that.
  switch (route.endpoint) {
    case 'messages':
      return { endpoint: 'messages', body: body as unknown as MessagesRequest, stream };
    case 'count_tokens':
      return { endpoint: 'count_tokens', body: body as unknown as CountTokensRequest, stream: false };
    case 'chat_completions':
      return { endpoint: 'chat_completions', body: body as unknown as ChatRequest, stream };
    case 'responses':
      return { endpoint: 'responses', body: body as unknown as ResponsesRequest, stream };
    case 'responses_input_tokens':
      return { endpoint: 'responses_input_tokens', body: body as unknown as ResponsesRequest, stream: false };
    case 'embeddings':
      return { endpoint: 'embeddings', body: body as unknown as EmbeddingsRequest, stream: false };
    case 'images_generations':
      return { endpoint: 'images_generations', body: body as unknown as ImagesRequest, stream };
    case 'audio_speech':
      return { endpoint: 'audio_speech', body: body as unknown as SpeechRequest, stream: false };
    case 'images_edits':
      return { endpoint: 'images_edits', body: body as unknown as ImagesEditFields, files: filesOf(ctx.state.upload), stream };
    case 'audio_transcriptions':
      return { endpoint: 'audio_transcriptions', body: body as unknown as TranscriptionFields, files: filesOf(ctx.state.upload), stream };
    case 'audio_translations':
      return { endpoint: 'audio_translations', body: body as unknown as TranslationFields, files: filesOf(ctx.state.upload), stream: false };
  }
}

/** The file parts of a form read whole (Upload#complete), each read from the spool when asked. */
function filesOf(upload: Upload | undefined): FormFile[] {
  if (!upload) throw ERR.internal();
  const files: FormFile[] = [];
  for (const part of upload.scanner.parts) {
    if (part.filename === undefined) continue;
    const { start, end = start } = part;
    const audioMs = wavDurationMs(part.head, part.size);
    files.push({
      field: part.name,
      filename: part.filename,
      contentType: part.contentType,
      size: part.size,
      ...(audioMs !== undefined && { audioSeconds: audioMs / 1000 }),
      bytes: () => upload.spool.read(start, end),
    });
  }
  return files;
}

/** The client's credentials: never handed to a plugin, so never forwarded upstream. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'x-api-key', 'api-key', 'x-goog-api-key', 'cookie']);

/**
 * Per-request facts for plugins, with the attempt's signal: it aborts when the client goes away or
 * at shutdown. The signal and the child logger are made on first read, as most plugins read
 * neither: on Node 20 each `AbortController`'s signal gets a map of its own, so making one per
 * request made nine reads in Node's EventTarget code miss their caches on every translated
 * request (issue #17, counted with `--log-ic`).
 */
export function callContextOf(ctx: GatewayContext, log: Logger, cancel: Cancellation): CallContext {
  const { route, requestId } = ctx.state;
  if (!route) throw ERR.internal();
  const provider = route.provider.config.id;
  let child: Logger | undefined;
  return {
    requestId,
    model: route.model.id,
    upstreamModel: route.upstreamModel,
    clientFormat: FORMAT_OF[route.endpoint],
    maxOutputTokens: route.model.maxOutputTokens,
    stream: ctx.state.body?.['stream'] === true,
    endpoint: route.endpoint,
    // The client's headers as they came (request-state.ts): a native attempt before this one
    // replaced Node's own with the ones it forwarded. Read as Koa's ctx.get reads them, Referer
    // and Referrer alike.
    header: (name) => {
      const lower = name.toLowerCase();
      if (CREDENTIAL_HEADERS.has(lower)) return undefined;
      const headers = ctx.state.headers;
      const value = lower === 'referer' || lower === 'referrer' ? (headers['referrer'] || headers['referer']) : headers[lower];
      return headerText(value) || undefined;
    },
    get signal() {
      return cancel.signal;
    },
    get log() {
      return (child ??= log.child({ req_id: requestId, provider }));
    },
  };
}
