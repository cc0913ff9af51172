/**
 * How a Chat Completions upstream differs from OpenAI's own API. A plugin declares its dialect;
 * the shared converters read it. Each field is a fact about the upstream, not a format rule.
 */
export interface ChatDialect {
  /**
   * How reasoning is requested and replayed (protocol.md §D.1, §D.7):
   * - `openai`: `reasoning_effort`; reasoning cannot be sent back.
   * - `openrouter`: `reasoning: {max_tokens | effort}`; thinking goes back as `reasoning_details`,
   *   signatures included, so Claude behind OpenRouter can continue a tool loop.
   * - `deepseek`: no request field (the model decides); thinking goes back as `reasoning_content`,
   *   which DeepSeek requires on assistant turns with tools.
   * - `none`: reasoning is neither requested nor sent back.
   */
  readonly reasoning: 'openai' | 'openrouter' | 'deepseek' | 'none';
  /** OpenAI's reasoning models refuse `max_tokens`; most compatible servers want it. */
  readonly maxTokensField: 'max_tokens' | 'max_completion_tokens';
  /** Whether `top_k` is accepted (OpenRouter, vLLM) or refused (OpenAI). */
  readonly topK: boolean;
  /** Whether `cache_control` on content parts is understood (OpenRouter to Claude). */
  readonly cacheControl: boolean;
  /** Whether PDFs can go as `file` parts, or must become a text note. */
  readonly pdf: 'file' | 'text';
}

export const DEFAULT_CHAT_DIALECT: ChatDialect = {
  reasoning: 'openai',
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
