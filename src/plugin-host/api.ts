/**
 * THE public plugin contract. Built-in plugins (`plugins/`) use exactly this surface, the same as
 * third-party ones. Types only, apart from PLUGIN_API_VERSION and definePlugin.
 *
 * A provider plugin tells the core how to reach one upstream. It offers up to three capabilities,
 * tried in this order for each request:
 *   1. `native`    — the upstream speaks the request's format: the core proxies the bytes unchanged.
 *   2. `translate` — the upstream speaks another format: the core converts requests, answers and
 *                    streams through the canonical form; the plugin states its upstream's dialect
 *                    (or brings its own format's codec) and builds the HTTP request (issues #3, #14).
 *   3. `invoke`    — the plugin answers in-process (the built-in `mock`, local models).
 * The core owns bytes and SSE framing; plugins only ever see and return typed objects.
 */
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatRequest,
  CountTokensRequest,
  EmbeddingsRequest,
  EmbeddingsResponse,
  Endpoint,
  ImagesRequest,
  ImagesResponse,
  ImagesStreamEvent,
  ImagesEditStreamEvent,
  ResponsesRequest,
  SpeechRequest,
  Message,
  MessagesRequest,
  MessagesStreamEvent,
  TokenCount,
  WireFormat,
} from '../formats/wire.ts';

import type { ChatDialect, MessagesDialect } from '../formats/convert/dialect.ts';
import type { CanonicalAnswer } from '../formats/canonical/answer.ts';
import type { CanonicalRequest } from '../formats/canonical/request.ts';
import type { CanonicalEvent } from '../formats/canonical/stream.ts';

export type {
  ChatRequest,
  MessagesRequest,
  ResponsesRequest,
  EmbeddingsRequest,
  EmbeddingsResponse,
  Endpoint,
  ImagesEditStreamEvent,
  ImagesRequest,
  ImagesResponse,
  ImagesStreamEvent,
  SpeechRequest,
  WireFormat,
} from '../formats/wire.ts';
import type { ImageEditParamsBase } from 'openai/resources/images';
import type { TranscriptionCreateParamsBase } from 'openai/resources/audio/transcriptions';
import type { TranslationCreateParams } from 'openai/resources/audio/translations';

/** The text fields of an image edit form (the files are `files`). */
export type ImagesEditFields = Omit<ImageEditParamsBase, 'image' | 'mask'>;
/** The text fields of a transcription form (the audio is `files[0]`). */
export type TranscriptionFields = Omit<TranscriptionCreateParamsBase, 'file'>;
export type TranslationFields = Omit<TranslationCreateParams, 'file'>;

/**
 * A file part of a multipart request, as the client sent it (since 1.3.0). The core has read the
 * whole form before `invoke` is called; `bytes()` reads the part from where it was kept.
 */
export interface FormFile {
  /** The part's name: `file`, `image`, `image[]`, `mask`. */
  readonly field: string;
  readonly filename: string;
  /** The part's declared type, which clients often leave generic; trust the bytes. */
  readonly contentType: string | undefined;
  readonly size: number;
  /** Seconds of audio, when the core could read them from the file's header (WAV). */
  readonly audioSeconds?: number;
  bytes(): Promise<Buffer>;
}
export type { ChatDialect, MessagesDialect } from '../formats/convert/dialect.ts';

/** Semver of this contract. A plugin declares the range it supports in `apiVersion`. */
export const PLUGIN_API_VERSION = '1.5.0';

/**
 * What a plugin module default-exports.
 * @example
 * export default definePlugin({
 *   name: 'acme',
 *   apiVersion: '^1.0.0',
 *   create: (provider) => ({
 *     native: {
 *       endpoints: { chat_completions: `${provider.baseUrl}/chat/completions` },
 *       headers: { authorization: `Bearer ${provider.apiKey}` },
 *     },
 *   }),
 * });
 */
export interface PluginModule<Options = Record<string, unknown>> {
  /** Kebab-case name, used in messages. */
  readonly name: string;
  /** Semver range of PLUGIN_API_VERSION this plugin works with, e.g. `^1.0.0`. */
  readonly apiVersion: string;
  /**
   * Validates `providers[].options`. Any Standard Schema works (zod, valibot, arktype); issues are
   * reported at their YAML path and stop start-up.
   */
  readonly optionsSchema?: StandardSchemaV1<unknown, Options>;
  /** Builds one provider instance. Runs at start-up and for `check-config`: it must not do network I/O. */
  create(provider: ProviderContext<Options>): ProviderPlugin | Promise<ProviderPlugin>;
}

/** One `providers[]` entry as the plugin sees it. */
export interface ProviderContext<Options = Record<string, unknown>> {
  /** `providers[].id`. */
  readonly id: string;
  /** `providers[].base_url` without a trailing slash, or undefined for the plugin's default. */
  readonly baseUrl: string | undefined;
  /** `providers[].api_key`, or undefined when none is configured. */
  readonly apiKey: string | undefined;
  readonly options: Options;
  readonly log: PluginLogger;
  /** The YAML file's folder (since 1.5.0): relative paths in options (a credentials file) are read from here. */
  readonly configDir: string;
}

/** A provider instance. It must offer at least one capability. */
export interface ProviderPlugin {
  readonly native?: NativeUpstream;
  readonly translate?: Translator;
  /**
   * Picks the translator for a route's upstream model (since 1.5.0), for a provider whose models
   * speak different formats (Bedrock: Claude in Messages, the others in Converse). Asked once per
   * route, it takes the place of `translate`; undefined means the model has no translation.
   */
  translateFor?(model: string): Translator | undefined;
  readonly invoke?: InProcessHandler;
  /**
   * The endpoints `invoke` answers. Without it, the three text endpoints (the 1.0 contract), so a
   * plugin written before the media endpoints is never handed a request it does not know (since 1.2.0).
   */
  readonly invokes?: readonly Endpoint[];
  /**
   * The Chat Completions request parameters this provider honours, by OpenRouter's
   * `supported_parameters` names (`tools`, `temperature`, `reasoning`…), shown on GET /v1/models.
   * Optional: without it the core derives the list from the capabilities above (since 1.1.0).
   */
  readonly parameters?: readonly string[];
  /**
   * Called once, when the gateway shuts down, or when a reload replaced or removed this provider and
   * the last request that started on it has ended (issue #16). Never called twice.
   */
  close?(): void | Promise<void>;
}

/**
 * An upstream that speaks some endpoints' formats natively. The core forwards the client's bytes
 * (only `model` may be rewritten to the route's upstream model) through http-proxy-3.
 * @example
 * { endpoints: { messages: 'https://api.anthropic.com/v1/messages' }, headers: { 'x-api-key': key } }
 */
export interface NativeUpstream {
  /** Absolute upstream URL for each endpoint served natively; the client's query string is appended. */
  readonly endpoints: Partial<Readonly<Record<Endpoint, string>>>;
  /** Set on every upstream request: the provider's credential and fixed extras. */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * Client request headers to forward on top of the format's allowlist (lower-case names). The
   * client's credentials, cookies and hop-by-hop headers are never forwarded, whatever is listed.
   */
  readonly forwardHeaders?: readonly string[];
}

/** A request as the client sent it, already validated. `body.model` is still the catalogue id. */
export type ClientRequest =
  | { readonly endpoint: 'messages'; readonly body: MessagesRequest; readonly stream: boolean }
  | { readonly endpoint: 'count_tokens'; readonly body: CountTokensRequest; readonly stream: false }
  | { readonly endpoint: 'chat_completions'; readonly body: ChatRequest; readonly stream: boolean }
  /** Only to a plugin that lists `responses` in `invokes` (issue #14). */
  | { readonly endpoint: 'responses'; readonly body: ResponsesRequest; readonly stream: boolean }
  | { readonly endpoint: 'responses_input_tokens'; readonly body: ResponsesRequest; readonly stream: false }
  | { readonly endpoint: 'embeddings'; readonly body: EmbeddingsRequest; readonly stream: false }
  | { readonly endpoint: 'images_generations'; readonly body: ImagesRequest; readonly stream: boolean }
  | { readonly endpoint: 'audio_speech'; readonly body: SpeechRequest; readonly stream: false }
  | { readonly endpoint: 'images_edits'; readonly body: ImagesEditFields; readonly files: readonly FormFile[]; readonly stream: boolean }
  | { readonly endpoint: 'audio_transcriptions'; readonly body: TranscriptionFields; readonly files: readonly FormFile[]; readonly stream: boolean }
  | { readonly endpoint: 'audio_translations'; readonly body: TranslationFields; readonly files: readonly FormFile[]; readonly stream: false };

/** Per-request facts a plugin may use. */
export interface CallContext {
  readonly requestId: string;
  /** The catalogue model id the client asked for. */
  readonly model: string;
  /** The model name to use upstream (the route's `model`). */
  readonly upstreamModel: string;
  /** The format the client expects back. */
  readonly clientFormat: WireFormat;
  /** The catalogue's max_output_tokens for the model, if set. */
  readonly maxOutputTokens: number | null;
  /** The client asked for a stream (since 1.4.0): for upstreams whose URL says so, not the body. */
  readonly stream: boolean;
  /**
   * The endpoint the client called (since 1.5.0): a translator serving `count_tokens` builds its
   * upstream's counting request when this says so.
   */
  readonly endpoint: Endpoint;
  /**
   * A header of the client's request by lower-case name (since 1.5.0), such as `anthropic-beta`.
   * Credentials (`authorization`, `x-api-key`, `api-key`, `x-goog-api-key`, cookies) are never
   * given: the client's key must not reach an upstream.
   */
  header(name: string): string | undefined;
  /** Aborted when the client goes away, or when the shutdown grace ends; made when first read. */
  readonly signal: AbortSignal;
  readonly log: PluginLogger;
}

/** A complete response body in one of the two formats; the core converts it if the client's differs. */
export type FormattedBody =
  | { readonly format: 'messages'; readonly body: Message }
  | { readonly format: 'chat'; readonly body: ChatCompletion };

/**
 * A response stream of typed events. The core frames them as SSE (and adds `[DONE]` for Chat).
 * Throwing from the iterator ends the client's stream with an in-band error, never a clean end.
 */
export type FormattedStream =
  | { readonly format: 'messages'; readonly events: AsyncIterable<MessagesStreamEvent> }
  | { readonly format: 'chat'; readonly events: AsyncIterable<ChatCompletionChunk> };

/** The answer to a `count_tokens` request. */
export interface FormattedCount {
  readonly format: 'count';
  readonly body: TokenCount;
}

/**
 * The answer to an `embeddings` request. Vectors may always be float arrays: when the client asked
 * for `encoding_format: "base64"` (the openai SDK's default), the core encodes them (since 1.2.0).
 */
export interface FormattedEmbeddings {
  readonly format: 'embeddings';
  readonly body: EmbeddingsResponse;
}

/**
 * The answer to an `images_generations` request: `data` holds one entry per image drawn, with
 * `b64_json` (or `url`); `usage` in OpenAI's Images shape when the model reports tokens (since 1.2.0).
 */
export type FormattedImages =
  | { readonly format: 'images'; readonly body: ImagesResponse }
  /**
   * For `stream: true`: partial images, then one `image_generation.completed` per image (for an
   * edit, `image_edit.*` events), framed as SSE by the core.
   */
  | { readonly format: 'images'; readonly events: AsyncIterable<ImagesStreamEvent | ImagesEditStreamEvent> };

/**
 * Audio bytes for an `audio_speech` request, whole or as they are made: the core sends each chunk
 * as it comes, with backpressure, under `contentType` (since 1.2.0).
 */
export interface FormattedAudio {
  readonly format: 'audio';
  readonly contentType: string;
  readonly body: Uint8Array | AsyncIterable<Uint8Array>;
}

/**
 * The answer to a transcription or translation (since 1.3.0). The core writes it in the
 * `response_format` the client asked for (`json`, `text`, `srt`, `vtt`, `verbose_json`), and for
 * `stream: true` as `transcript.text.delta` events and a `transcript.text.done`.
 */
export interface FormattedTranscription {
  readonly format: 'transcription';
  readonly text: string;
  /** Seconds of audio heard: what a model priced by the minute is charged for. */
  readonly duration: number;
  readonly language?: string;
  /** Timed pieces of the text, for `verbose_json`, `srt` and `vtt`; one segment of the whole text without them. */
  readonly segments?: readonly { readonly start: number; readonly end: number; readonly text: string }[];
  /** For a model priced by tokens: its token counts, as OpenAI reports them. */
  readonly usage?: {
    readonly input_tokens: number;
    readonly output_tokens: number;
    readonly input_token_details?: { readonly audio_tokens?: number; readonly text_tokens?: number };
  };
}

export type PluginResult =
  | FormattedBody
  | FormattedStream
  | FormattedCount
  | FormattedEmbeddings
  | FormattedImages
  | FormattedAudio
  | FormattedTranscription;

/** Answers a request in-process. */
export type InProcessHandler = (request: ClientRequest, ctx: CallContext) => Promise<PluginResult>;

/** One server-sent event as the core decoded it. */
export interface SseEvent {
  readonly event: string | undefined;
  readonly data: string;
}

/** The HTTP request a translator wants sent. The core serialises `body` and sets content-length. */
export interface UpstreamRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
}

export interface UpstreamResponse {
  readonly status: number;
  /** A response header by (case-insensitive) name. */
  header(name: string): string | undefined;
  /** Parsed JSON, or the raw text when the body was not JSON. */
  readonly body: unknown;
}

/** An error a translator maps an upstream failure to; the core renders it in the caller's format. */
export interface PluginError {
  readonly status: number;
  readonly message: string;
  /** `error.type`; derived from the status when omitted. */
  readonly type?: string;
  /**
   * The upstream refused the provider's own credentials (since 1.5.0): the caller gets Junction's
   * 502 naming the provider, as for an upstream 401, and the operator an error log. Never the secret.
   */
  readonly credentials?: boolean;
  /** Seconds a caller should wait (since 1.5.0), sent as `retry-after` when the upstream sent none. */
  readonly retryAfterSeconds?: number;
  /**
   * This route cannot serve the request but another may (since 1.5.0): a model not enabled in
   * this region, not deployed here. The model's next route is tried, as for a 5xx.
   */
  readonly failover?: boolean;
}

/** The request exactly as it will be sent, for a signature over its bytes (since 1.5.0). */
export interface SignableRequest {
  readonly method: 'POST';
  readonly url: URL;
  /** Every header that will be sent and may be signed (content-length and accept-encoding are added after). */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
}

/**
 * A stream framing other than SSE (since 1.5.0), such as AWS's binary event stream. The core reads
 * the bytes, with its timers and backpressure; the decoder turns them into events, each as an SSE
 * event would have been: the `data` in the translator's upstream format (JSON text).
 */
export interface StreamFraming {
  /** The content type the upstream answers a stream with; anything else is an upstream fault. */
  readonly contentType: string;
  decoder(ctx: CallContext): {
    /** Bytes as they came; complete frames' events are appended to `out`. Throw on a corrupt frame. */
    push(bytes: Uint8Array, out: SseEvent[]): void;
    /** The stream ended: throw if a frame was left incomplete. */
    end(out: SseEvent[]): void;
  };
}

interface TranslatorBase {
  /**
   * Client endpoints this plugin serves by translation. `count_tokens` (and Responses'
   * `responses_input_tokens`) are sent upstream only with `inputTokens`; without a route that
   * can, they fall back to a local estimate.
   */
  readonly endpoints: readonly Endpoint[];
  /** Maps a non-2xx upstream answer; by default its status and error body decide. */
  error?(response: UpstreamResponse, ctx: CallContext): PluginError;
  /**
   * Signs the final request (since 1.5.0): called for every attempt, right before it is sent, over
   * the exact bytes and URL; returns headers to add. It may be async, to get or refresh credentials.
   */
  sign?(request: SignableRequest, ctx: CallContext): Readonly<Record<string, string>> | Promise<Readonly<Record<string, string>>>;
  /**
   * Called when the upstream refused a request (since 1.5.0). Returning true has the request
   * built, signed and sent once more: for credentials the plugin has just refreshed, or a clock it
   * has just corrected from the response's `Date`. At most one retry per attempt.
   */
  retry?(response: UpstreamResponse, ctx: CallContext): boolean | Promise<boolean>;
  /** A non-SSE stream framing (since 1.5.0): see StreamFraming. */
  readonly streamFraming?: StreamFraming;
  /**
   * Reads the input token count from the upstream's answer to a counting request (since 1.5.0);
   * the core answers the client in its endpoint's shape. `request` is called with `ctx.endpoint`
   * set to the counting endpoint and the body encoded for the upstream, as for a generation.
   */
  inputTokens?(answer: Record<string, unknown>): number;
}

/**
 * An upstream that speaks Chat Completions, serving clients of the other format (issue #3). The
 * core converts requests and answers with the shared converters in `src/formats/convert/`, as
 * `dialect` says this upstream needs; the plugin only builds the HTTP request.
 * @example
 * { upstream: 'chat', endpoints: ['messages'], dialect: { reasoning: 'reasoning_details' },
 *   request: (body) => ({ url: `${base}/chat/completions`, headers: { authorization: `Bearer ${key}` }, body }) }
 */
export interface ChatTranslator extends TranslatorBase {
  readonly upstream: 'chat';
  readonly dialect?: Partial<ChatDialect>;
  request(body: ChatRequest, ctx: CallContext): UpstreamRequest | Promise<UpstreamRequest>;
}

/** An upstream that speaks Anthropic Messages, serving Chat Completions clients (issue #3). */
export interface MessagesTranslator extends TranslatorBase {
  readonly upstream: 'messages';
  readonly dialect?: Partial<MessagesDialect>;
  request(body: MessagesRequest, ctx: CallContext): UpstreamRequest | Promise<UpstreamRequest>;
}

/**
 * An upstream that speaks only the OpenAI Responses API, serving Messages and Chat clients (and
 * Responses clients, whose requests are checked and forwarded) (since 1.4.0, issue #14). The core
 * sends the whole history with `store: false`; Junction keeps stored responses itself.
 */
export interface ResponsesTranslator extends TranslatorBase {
  readonly upstream: 'responses';
  request(body: ResponsesRequest, ctx: CallContext): UpstreamRequest | Promise<UpstreamRequest>;
}

/**
 * A wire format the core does not know, brought by the plugin (since 1.4.0, issue #14): it
 * converts between the canonical form (`src/formats/canonical/`, rules at the top of answer.ts,
 * request.ts and stream.ts) and its upstream's shapes, and the core does everything else: Messages,
 * Chat and Responses clients, SSE framing, usage, holds, failover. `state` is whatever the request
 * encoder wants its decoders to get back (shortened tool names, an emulation it set up).
 */
export interface UpstreamFormat {
  encodeRequest(request: CanonicalRequest, options: { readonly model: string; readonly maxOutputTokens: number | null }): { readonly body: Record<string, unknown>; readonly state?: unknown };
  decodeAnswer(body: Record<string, unknown>, state: unknown): CanonicalAnswer;
  /**
   * A decoder for one stream: each upstream SSE event, its data parsed as JSON, to canonical
   * events. It must end with one `stop` event: a stream that ends without one is cut, and the
   * client gets an in-band error. A throw is an upstream fault, said to the client in-band.
   */
  streamDecoder(state: unknown): {
    push(event: { readonly event: string | undefined; readonly data: Record<string, unknown> }, out: CanonicalEvent[]): void;
    end(out: CanonicalEvent[]): void;
  };
}

/** An upstream in a wire format of the plugin's own (since 1.4.0): see UpstreamFormat. */
export interface FormatTranslator extends TranslatorBase {
  readonly upstream: 'custom';
  readonly format: UpstreamFormat;
  request(body: Record<string, unknown>, ctx: CallContext): UpstreamRequest | Promise<UpstreamRequest>;
}

export type Translator = ChatTranslator | MessagesTranslator | ResponsesTranslator | FormatTranslator;
export type { CanonicalAnswer, CanonicalBlock, CanonicalStop, CanonicalUsage } from '../formats/canonical/answer.ts';
export type { CanonicalPart, CanonicalRequest, CanonicalTool, CanonicalTurn } from '../formats/canonical/request.ts';
export type { CanonicalEvent, CanonicalStreamBlock } from '../formats/canonical/stream.ts';

/** The logger handed to plugins (a pino child logger carrying the provider id). */
export interface PluginLogger {
  debug(obj: object | string, msg?: string): void;
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
}

export type { StandardSchemaV1 } from './api-schema.ts';
export { PluginRequestError, ProviderConfigError, UpstreamError } from './api-errors.ts';
import type { StandardSchemaV1 } from './api-schema.ts';

/**
 * Identity helper that gives a plugin module its types.
 * @example
 * export default definePlugin<{ region: string }>({ name: 'acme', apiVersion: '^1.0.0', create: … });
 */
export function definePlugin<Options = Record<string, unknown>>(module: PluginModule<Options>): PluginModule<Options> {
  return module;
}
