import { asArray, asObject, asString, type Json } from '../convert/json.ts';
import type { ToolNames } from '../convert/tool-names.ts';
import { tokenCount as count } from '../convert/usage.ts';
import { imageMarkdown, type CanonicalAnswer, type CanonicalBlock, type CanonicalStop, type CanonicalUsage } from './answer.ts';
import { freeformInput } from './request.ts';
import { packForClient, reasoningFromUpstream } from './responses-reasoning.ts';

/**
 * Responses answers ⇄ canonical (issue #14; responses-api.md §3). Output items map onto blocks:
 * a `message`'s `output_text` parts are text and its `refusal` parts refusals; a `reasoning` item
 * is reasoning (its summary as the text, the item itself as the signature to carry back:
 * responses-reasoning.ts); a `function_call` is a tool call whose `call_id` is the id, its name
 * restored to the client's. Usage: `input_tokens` includes the cached ones, as in Chat.
 */
export function decodeResponsesAnswer(response: Json, toolNames?: ToolNames): CanonicalAnswer {
  const blocks: CanonicalBlock[] = [];
  for (const raw of asArray(response['output'])) {
    const item = asObject(raw);
    switch (item['type']) {
      case 'message':
        for (const rawPart of asArray(item['content'])) {
          const part = asObject(rawPart);
          if (part['type'] === 'refusal') blocks.push({ type: 'refusal', text: asString(part['refusal']) ?? '' });
          else blocks.push({ type: 'text', text: asString(part['text']) ?? '' });
        }
        break;
      case 'reasoning':
        blocks.push({ type: 'reasoning', ...reasoningFromUpstream(item) });
        break;
      case 'function_call': {
        const name = asString(item['name']) ?? '';
        blocks.push({ type: 'tool_call', id: asString(item['call_id']) ?? asString(item['id']) ?? '', name: toolNames ? toolNames.client(name) : name, arguments: asString(item['arguments']) ?? '' });
        break;
      }
      default:
        break; // hosted tools' items (web_search_call…) are the upstream's own bookkeeping
    }
  }
  return {
    id: asString(response['id']),
    model: asString(response['model']) ?? '',
    blocks,
    stop: responsesStop(response, blocks.some((b) => b.type === 'tool_call')),
    stopSequence: undefined,
    usage: responsesUsage(asObject(response['usage'])),
  };
}

/** A response's status as a stop reason (responses-api.md §7.3). */
export function responsesStop(response: Json, called: boolean): CanonicalStop {
  const incomplete = asString(asObject(response['incomplete_details'])['reason']);
  return incomplete === 'max_output_tokens' ? 'max_tokens' : incomplete === 'content_filter' ? 'refusal' : called ? 'tool_use' : 'end_turn';
}

export function responsesUsage(usage: Json): CanonicalUsage {
  const input = count(usage['input_tokens']);
  const cacheRead = Math.min(input, count(asObject(usage['input_tokens_details'])['cached_tokens']));
  const output = count(usage['output_tokens']);
  return { input: input - cacheRead, output, cacheRead, cacheWrite: 0, reasoning: count(asObject(usage['output_tokens_details'])['reasoning_tokens']) };
}

export interface ResponsesAnswerOptions {
  /** The response's id (`resp_…`); item ids derive from it. */
  readonly id: string;
  readonly createdAt: number;
  /** The request, whose settings a response echoes (responses-api.md §3: required fields). */
  readonly request: Json;
  /** The client's freeform tools (`custom`), whose calls are `custom_tool_call` items. */
  readonly customTools?: ReadonlySet<string>;
  /** The client's namespaced tools, by the name they were offered under. */
  readonly namespacedTools?: ReadonlyMap<string, { readonly namespace: string; readonly name: string }>;
}

/** Item builders, shared with the stream encoder so a streamed item and the final one agree. */
export const outputText = (text: string): Json => ({ type: 'output_text', text, annotations: [], logprobs: [] });

export function reasoningItem(id: string, text: string, carried: { signature?: string | undefined; data?: string | undefined }): Json {
  const encrypted = packForClient(carried);
  return { id, type: 'reasoning', summary: text === '' ? [] : [{ type: 'summary_text', text }], ...(encrypted !== undefined && { encrypted_content: encrypted }) };
}

export function callItem(id: string, call: { id: string; name: string; arguments: string }, options: Pick<ResponsesAnswerOptions, 'customTools' | 'namespacedTools'>): Json {
  // Every call needs a non-empty call_id (the openai SDK's strict accumulator; responses-api.md §4.3).
  const callId = call.id === '' ? `call_${id.slice(id.indexOf('_') + 1)}` : call.id;
  const space = options.namespacedTools?.get(call.name);
  const name = space ? { name: space.name, namespace: space.namespace } : { name: call.name };
  if (options.customTools?.has(call.name)) return { id, type: 'custom_tool_call', status: 'completed', call_id: callId, ...name, input: freeformInput(call.arguments) };
  // A call with no arguments still has a JSON object for them (responses-api.md §7.5).
  return { id, type: 'function_call', status: 'completed', call_id: callId, ...name, arguments: call.arguments === '' ? '{}' : call.arguments };
}

/**
 * Canonical → a Responses `response` object with every field the SDK types require, echoing the
 * request's settings (responses-api.md §3). Consecutive text, images and refusals make one
 * `message` item (an image as a Markdown image in its text); each reasoning block and each tool
 * call is an item of its own. A length stop is `status: "incomplete"` with its reason.
 */
export function encodeResponsesAnswer(answer: CanonicalAnswer, options: ResponsesAnswerOptions): Json {
  const output: Json[] = [];
  const base = options.id.replace(/^resp_/, '');
  const itemId = (prefix: string): string => `${prefix}_${base}_${output.length}`;
  let message: { content: Json[] } | null = null;
  const openMessage = (): Json[] => {
    if (message === null) {
      const item = { id: itemId('msg'), type: 'message', status: 'completed', role: 'assistant', content: [] as Json[] };
      output.push(item);
      message = item;
    }
    return message.content;
  };
  for (const block of answer.blocks) {
    if (block.type === 'text' || block.type === 'image') {
      const content = openMessage();
      const last = content.at(-1);
      const text = block.type === 'text' ? block.text : imageMarkdown(block.url);
      if (block.type === 'image' && last?.['type'] === 'output_text') last['text'] = String(last['text']) + text;
      else content.push(outputText(text));
      continue;
    }
    if (block.type === 'refusal') {
      openMessage().push({ type: 'refusal', refusal: block.text });
      continue;
    }
    message = null;
    if (block.type === 'reasoning') output.push(reasoningItem(itemId('rs'), block.text, block));
    else if (block.type === 'opaque_reasoning') output.push(reasoningItem(itemId('rs'), '', block));
    else output.push(callItem(itemId(options.customTools?.has(block.name) ? 'ctc' : 'fc'), block, options));
  }
  return responseOf(output, answer, options);
}

/**
 * The response around its output items: status from the stop, the request's settings echoed,
 * complete usage. A length stop, or a refusal the upstream's filter made rather than the model
 * said (Chat's content_filter), ends `incomplete` with its reason (responses-api.md §7.3).
 */
export function responseOf(output: Json[], answer: Pick<CanonicalAnswer, 'model' | 'stop' | 'usage' | 'blocks'>, options: ResponsesAnswerOptions): Json {
  const { usage } = answer;
  const filtered = answer.stop === 'refusal' && !answer.blocks.some((b) => b.type === 'refusal');
  const reason = answer.stop === 'max_tokens' || answer.stop === 'model_context_window_exceeded' ? 'max_output_tokens' : filtered ? 'content_filter' : undefined;
  const incomplete = reason !== undefined;
  // The item the stop cut short is incomplete too.
  const last = output.at(-1);
  if (incomplete && last && 'status' in last) last['status'] = 'incomplete';
  const request = options.request;
  const input = usage.input + usage.cacheRead + usage.cacheWrite;
  return {
    id: options.id,
    object: 'response',
    created_at: options.createdAt,
    status: incomplete ? 'incomplete' : 'completed',
    background: false,
    completed_at: incomplete ? null : options.createdAt,
    error: null,
    incomplete_details: reason === undefined ? null : { reason },
    instructions: request['instructions'] ?? null,
    max_output_tokens: request['max_output_tokens'] ?? null,
    model: answer.model,
    output,
    parallel_tool_calls: request['parallel_tool_calls'] ?? true,
    previous_response_id: request['previous_response_id'] ?? null,
    reasoning: request['reasoning'] ?? { effort: null, summary: null },
    store: request['store'] ?? true,
    temperature: request['temperature'] ?? 1,
    text: request['text'] ?? { format: { type: 'text' } },
    tool_choice: request['tool_choice'] ?? 'auto',
    tools: request['tools'] ?? [],
    top_p: request['top_p'] ?? 1,
    truncation: request['truncation'] ?? 'disabled',
    usage: {
      input_tokens: input,
      input_tokens_details: { cached_tokens: usage.cacheRead, ...(usage.cacheWrite > 0 && { cache_write_tokens: usage.cacheWrite }) },
      output_tokens: usage.output,
      output_tokens_details: { reasoning_tokens: usage.reasoning },
      total_tokens: input + usage.output,
    },
    user: request['user'] ?? null,
    metadata: request['metadata'] ?? {},
  };
}
