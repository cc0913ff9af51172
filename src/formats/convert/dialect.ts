/**
 * How a Chat Completions upstream differs from OpenAI's own API. A plugin declares its dialect;
 * the shared converters read it. Each field is a fact about the upstream, not a format rule.
 */
export interface ChatDialect {
  /**
   * The fields through which the upstream takes reasoning (protocol.md §D.1, §D.7):
   * - `reasoning_effort`: requested as `reasoning_effort`; it cannot be sent back (OpenAI).
   * - `reasoning_details`: requested as `reasoning: {max_tokens | effort}`; thinking goes back as
   *   `reasoning` plus `reasoning_details`, signatures included, so a signed model can continue a
   *   tool loop (OpenRouter's convention).
   * - `reasoning_content`: not requested (the model decides); thinking goes back as
   *   `reasoning_content`, which some models require on assistant turns with tools (DeepSeek's).
   * - `none`: reasoning is neither requested nor sent back.
   */
  readonly reasoning: 'reasoning_effort' | 'reasoning_details' | 'reasoning_content' | 'none';
  /** OpenAI's reasoning models refuse `max_tokens`; most compatible servers want it. */
  readonly maxTokensField: 'max_tokens' | 'max_completion_tokens';
  /** Whether `top_k` is accepted (some compatible servers) or refused (OpenAI's own API). */
  readonly topK: boolean;
  /** Whether `cache_control` on content parts is understood (routers in front of Claude). */
  readonly cacheControl: boolean;
  /** Whether PDFs can go as `file` parts, or must become a text note. */
  readonly pdf: 'file' | 'text';
}

export const DEFAULT_CHAT_DIALECT: ChatDialect = {
  reasoning: 'reasoning_effort',
  maxTokensField: 'max_completion_tokens',
  topK: false,
  cacheControl: false,
  pdf: 'file',
};

/** How a Messages upstream is used when Chat clients call it. */
export interface MessagesDialect {
  /** `max_tokens` when the client sent none and the catalogue has no max_output_tokens. */
  readonly defaultMaxTokens: number;
}

export const DEFAULT_MESSAGES_DIALECT: MessagesDialect = { defaultMaxTokens: 4096 };
