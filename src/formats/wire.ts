/**
 * Wire types of the two formats, taken from the official SDKs as types only (no runtime
 * dependency): the SDKs' definitions are the authority on shapes (protocol.md §0, S1 and S7).
 */
export type {
  Message,
  MessageCreateParams as MessagesRequest,
  MessageCountTokensParams as CountTokensRequest,
  MessageTokensCount as TokenCount,
  RawMessageStreamEvent as MessagesStreamEvent,
  Usage as MessagesUsage,
} from '@anthropic-ai/sdk/resources/messages';
export type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParams as ChatRequest,
} from 'openai/resources/chat/completions';
export type { CompletionUsage as ChatUsage } from 'openai/resources/completions';

/** The two wire formats Junction speaks with clients and upstreams. */
export type WireFormat = 'messages' | 'chat';

/** The inbound endpoints that carry a model. */
export type Endpoint = 'messages' | 'count_tokens' | 'chat_completions';

/** The wire format each endpoint speaks. */
export const FORMAT_OF: Readonly<Record<Endpoint, WireFormat>> = {
  messages: 'messages',
  count_tokens: 'messages',
  chat_completions: 'chat',
};

/** Token counts normalised across formats. `input` excludes cached tokens (Anthropic's convention). */
export interface TokenUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** Part of `output` spent on reasoning, when the upstream reports it. */
  reasoning: number;
}
