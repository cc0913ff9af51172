/**
 * Wire types of the two formats, taken from the official SDKs as types only (no runtime
 * dependency): the SDKs' definitions are the authority on shapes (protocol.md §0, S1 and S7).
 *
 * One correction, for Messages: the SDK types list some fields as `T | null` that api.anthropic.com
 * leaves out when they have no value, and strict clients (the Vercel AI SDK) reject the `null`
 * (issue #12: `content[0].citations: expected array, received null`). Here those fields are
 * optional and never null, so what Junction writes itself cannot carry them.
 */
import type {
  ContentBlock,
  Message as SdkMessage,
  MessageDeltaUsage as SdkMessageDeltaUsage,
  RawContentBlockDeltaEvent,
  RawContentBlockStopEvent,
  RawMessageDeltaEvent,
  RawMessageStopEvent,
  TextBlock,
  ToolUseBlock,
  Usage as SdkUsage,
} from '@anthropic-ai/sdk/resources/messages';

export type {
  MessageCreateParams as MessagesRequest,
  MessageCountTokensParams as CountTokensRequest,
  MessageTokensCount as TokenCount,
} from '@anthropic-ai/sdk/resources/messages';
export type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParams as ChatRequest,
} from 'openai/resources/chat/completions';
export type { CompletionUsage as ChatUsage } from 'openai/resources/completions';
export type { ResponseCreateParams as ResponsesRequest } from 'openai/resources/responses/responses';
export type {
  CreateEmbeddingResponse as EmbeddingsResponse,
  EmbeddingCreateParams as EmbeddingsRequest,
} from 'openai/resources/embeddings';
export type { ImageGenerateParams as ImagesRequest, ImageGenStreamEvent as ImagesStreamEvent, ImagesResponse } from 'openai/resources/images';
export type { SpeechCreateParams as SpeechRequest } from 'openai/resources/audio/speech';
export type { ImageEditStreamEvent as ImagesEditStreamEvent } from 'openai/resources/images';
export type {
  Transcription,
  TranscriptionStreamEvent,
  TranscriptionVerbose,
} from 'openai/resources/audio/transcriptions';

/** `T` with the fields `K` left out when empty instead of sent as `null`. */
type AbsentWhenEmpty<T, K extends keyof T> = Omit<T, K> & { [P in K]?: NonNullable<T[P]> };

/** The Messages fields the wire leaves out when empty, by object (issue #12). */
export const ABSENT_WHEN_EMPTY = {
  message: ['container', 'diagnostics', 'stop_details'],
  usage: ['cache_creation', 'inference_geo', 'output_tokens_details', 'server_tool_use', 'service_tier', 'speed'],
  delta: ['container', 'stop_details'],
  textBlock: ['citations'],
} as const;

type Fields<K extends keyof typeof ABSENT_WHEN_EMPTY> = (typeof ABSENT_WHEN_EMPTY)[K][number];

export type WireTextBlock = AbsentWhenEmpty<TextBlock, Fields<'textBlock'>>;
/** `caller` comes only with programmatic tool calling; a plain tool call has none. */
export type WireToolUseBlock = AbsentWhenEmpty<ToolUseBlock, 'caller'>;
export type WireContentBlock = Exclude<ContentBlock, TextBlock | ToolUseBlock> | WireTextBlock | WireToolUseBlock;
export type MessagesUsage = AbsentWhenEmpty<SdkUsage, Fields<'usage'>>;
export type MessageDeltaUsage = AbsentWhenEmpty<SdkMessageDeltaUsage, 'output_tokens_details' | 'server_tool_use'>;
export type Message = AbsentWhenEmpty<Omit<SdkMessage, 'content' | 'usage'>, Fields<'message'>> & {
  content: WireContentBlock[];
  usage: MessagesUsage;
};
export type MessagesStreamEvent =
  | { type: 'message_start'; message: Message }
  | { type: 'content_block_start'; index: number; content_block: WireContentBlock }
  | {
      type: 'message_delta';
      delta: AbsentWhenEmpty<RawMessageDeltaEvent.Delta, Fields<'delta'>>;
      usage: MessageDeltaUsage;
    }
  | RawContentBlockDeltaEvent
  | RawContentBlockStopEvent
  | RawMessageStopEvent;

/** The wire formats Junction speaks with clients and upstreams. */
export type WireFormat = 'messages' | 'chat' | 'responses';
/** The two formats whose answers the byte-level usage tap reads with one shared tap (Responses has its own). */
export type TextFormat = 'messages' | 'chat';

/** The inbound endpoints that carry a model. */
export type Endpoint =
  | 'messages'
  | 'count_tokens'
  | 'chat_completions'
  | 'responses'
  | 'responses_input_tokens'
  | 'embeddings'
  | 'images_generations'
  | 'images_edits'
  | 'audio_speech'
  | 'audio_transcriptions'
  | 'audio_translations';

/** The endpoints whose body is a multipart form, not JSON (issue #13): the file parts stream through. */
export type FormEndpoint = Extract<Endpoint, 'images_edits' | 'audio_transcriptions' | 'audio_translations'>;

/**
 * The endpoints that only count a request's input tokens: free, held at nothing, answered by a
 * local estimate where no upstream counts (count_tokens; Responses' input_tokens, issue #14).
 */
export const COUNTING: ReadonlySet<Endpoint> = new Set(['count_tokens', 'responses_input_tokens']);

/** The endpoints of text models: what a model whose output modalities include `text` serves. */
export const TEXT_ENDPOINTS: readonly Endpoint[] = ['messages', 'count_tokens', 'chat_completions'];

/**
 * The wire format each endpoint speaks. The media endpoints (issue #13) are OpenAI's and follow
 * its conventions, as Chat does: bearer auth, the `{"error":{…}}` envelope, the header allowlist
 * and `usage.prompt_tokens`. They are never translated: each has one format.
 */
export const FORMAT_OF: Readonly<Record<Endpoint, WireFormat>> = {
  messages: 'messages',
  count_tokens: 'messages',
  chat_completions: 'chat',
  responses: 'responses',
  responses_input_tokens: 'responses',
  embeddings: 'chat',
  images_generations: 'chat',
  images_edits: 'chat',
  audio_speech: 'chat',
  audio_transcriptions: 'chat',
  audio_translations: 'chat',
};

/**
 * The bytes that mark the last event of an endpoint's own SSE stream, where it is not Chat's
 * `[DONE]` or finish_reason: a stream that ends without it was cut (issue #13; media.md §2.2).
 * Quoted, so it matches only a JSON string value, never escaped text inside one.
 */
export const SSE_TERMINATOR_OF: Partial<Readonly<Record<Endpoint, readonly Buffer[]>>> = {
  audio_speech: [Buffer.from('"speech.audio.done"')],
  images_generations: [Buffer.from('"image_generation.completed"')],
  images_edits: [Buffer.from('"image_edit.completed"')],
  audio_transcriptions: [Buffer.from('"transcript.text.done"')],
  // Exactly one of the three ends a Responses stream (responses-api.md §4.4; issue #14), found by
  // its `event:` line: a line starts after a newline byte, which a JSON string cannot hold, so text
  // that merely says "response.completed" is never taken for the end (review of issue #14).
  responses: ['completed', 'incomplete', 'failed'].flatMap((end) => [Buffer.from(`\nevent: response.${end}`), Buffer.from(`\nevent:response.${end}`)]),
};

/** The path of each endpoint, for messages that name them. */
export const PATH_OF: Readonly<Record<Endpoint, string>> = {
  messages: '/v1/messages',
  count_tokens: '/v1/messages/count_tokens',
  chat_completions: '/v1/chat/completions',
  responses: '/v1/responses',
  responses_input_tokens: '/v1/responses/input_tokens',
  embeddings: '/v1/embeddings',
  images_generations: '/v1/images/generations',
  images_edits: '/v1/images/edits',
  audio_speech: '/v1/audio/speech',
  audio_transcriptions: '/v1/audio/transcriptions',
  audio_translations: '/v1/audio/translations',
};

/** Token counts normalised across formats. `input` excludes cached tokens (Anthropic's convention). */
export interface TokenUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** Part of `output` spent on reasoning, when the upstream reports it. */
  reasoning: number;
  /** Image tokens read and written, apart from `input` and `output` (issue #13: own prices). */
  inputImage?: number;
  outputImage?: number;
  /** Images generated, each at the per-image price of the request's size and quality. */
  images?: number;
  /** Characters of text spoken (speech; issue #13). */
  characters?: number;
  /** Audio tokens read and written (Chat audio models), apart from `input` and `output`. */
  inputAudio?: number;
  outputAudio?: number;
  /** Milliseconds of audio transcribed or translated, for models priced by the minute. */
  audioMs?: number;
}
