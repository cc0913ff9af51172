import type { ModelConfig } from '../config/types.ts';
import { DEFAULT_CHAT_DIALECT, type ChatDialect } from '../formats/convert/dialect.ts';
import { CHAT_PARAMETERS_VIA_MESSAGES } from '../formats/canonical/chat-request-decode.ts';
import type { ProviderPlugin, Translator } from '../plugin-host/api.ts';

/**
 * `supported_parameters` on GET /v1/models (issue #4): the Chat Completions request parameters a
 * model honours, by OpenRouter's names (protocol.md §C.5), so clients can filter models by what
 * they need (`?supported_parameters=tools`). Computed once per model at start-up, in this order:
 *   1. the model's own `supported_parameters` in the YAML (the operator knows, e.g. that a
 *      reasoning model refuses `temperature`);
 *   2. the provider plugin's declared `parameters`;
 *   3. derived from how the first route serves Chat Completions (`translate`: the route's translator): natively, a Chat upstream takes
 *      OpenAI's parameters plus its dialect's reasoning field; by translation, what the canonical
 *      form carries to the upstream's format.
 * A route that cannot serve Chat Completions at all lists nothing.
 */
export function supportedParameters(model: ModelConfig, plugin: ProviderPlugin | undefined, translate: Translator | undefined): readonly string[] {
  if (model.supportedParameters !== null) return model.supportedParameters;
  if (plugin === undefined) return [];
  if (plugin.parameters !== undefined) return plugin.parameters;
  if (plugin.native?.endpoints.chat_completions !== undefined) {
    const dialect = translate?.upstream === 'chat' ? { ...DEFAULT_CHAT_DIALECT, ...translate.dialect } : DEFAULT_CHAT_DIALECT;
    return chatUpstreamParameters(dialect);
  }
  if (translate !== undefined && translate.upstream !== 'chat' && translate.endpoints.includes('chat_completions')) {
    // The Responses API has no stop sequences and no top_k: those are refused or dropped on the way.
    return translate.upstream === 'responses' ? CHAT_PARAMETERS_VIA_MESSAGES.filter((p) => p !== 'stop' && p !== 'top_k') : CHAT_PARAMETERS_VIA_MESSAGES;
  }
  return [];
}

/** OpenAI's Chat Completions parameters, which a compatible upstream takes byte for byte (protocol.md §B.2). */
const CHAT_PARAMETERS: readonly string[] = [
  'max_tokens', 'temperature', 'top_p', 'stop', 'seed', 'frequency_penalty', 'presence_penalty', 'logit_bias',
  'logprobs', 'top_logprobs', 'tools', 'tool_choice', 'parallel_tool_calls', 'response_format', 'structured_outputs',
];

/** What a client sends to ask for reasoning, per dialect (dialect.ts); DeepSeek-style models decide alone. */
const REASONING_PARAMETERS: Readonly<Record<ChatDialect['reasoning'], readonly string[]>> = {
  reasoning_effort: ['reasoning_effort'],
  reasoning_details: ['reasoning', 'include_reasoning'],
  reasoning_content: [],
  none: [],
};

function chatUpstreamParameters(dialect: ChatDialect): readonly string[] {
  return [...CHAT_PARAMETERS, ...REASONING_PARAMETERS[dialect.reasoning], ...(dialect.topK ? ['top_k'] : [])];
}
