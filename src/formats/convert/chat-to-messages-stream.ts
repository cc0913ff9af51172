import { ERR } from '../../errors.ts';
import { asArray, asObject, asString, type Json } from './json.ts';
import { reasoningPieces } from './reasoning.ts';
import { imagesAsMarkdown } from './chat-to-messages-response.ts';
import { stopReasonFromFinish, type StopReason } from './stop-reason.ts';
import { safeToolUseId, type ToolNames } from './tool-names.ts';
import { messagesUsageFromChat, type MessagesUsageCounts } from './usage.ts';

/**
 * Chat Completions chunks → Messages stream events: the state machine of protocol.md §D.8.
 * - message_start first (with the input estimate, which Claude Code reads for its context meter:
 *   peers.md §2 #24), then ping; the exact counts follow in message_delta.
 * - Blocks open lazily, one at a time, indices 0, 1, 2…; a role-only or empty delta opens nothing.
 * - Tool calls are keyed by the chunk's tool-call index; arguments go out as input_json_delta.
 * - finish_reason closes the open block; message_delta waits for the usage chunk (OpenRouter
 *   repeats finish_reason there, so finishing is idempotent); nothing follows message_delta
 *   except message_stop.
 */
export interface ChatToMessagesStreamOptions {
  readonly messageId: string;
  readonly model: string;
  readonly inputTokensEstimate: number;
  readonly toolNames: ToolNames;
  /** For error messages. */
  readonly provider: string;
}

/** A Messages stream event as wire JSON (the SDK's types lag behind the API's newest fields). */
type Event = Json & { type: string };
type BlockKind = 'text' | 'thinking' | 'tool_use';
interface OpenBlock {
  readonly kind: BlockKind;
  readonly index: number;
}

export async function* chatChunksToMessagesEvents(
  chunks: AsyncIterable<Json>,
  options: ChatToMessagesStreamOptions,
): AsyncGenerator<Event> {
  let nextIndex = 0;
  // Held in an object: the helpers below change it, which narrowing of a plain `let` would miss.
  const state: { open: OpenBlock | null } = { open: null };
  const toolBlocks = new Map<number, number>();
  let stop: StopReason | null = null;
  let stopSequence: string | null = null;
  let usage: MessagesUsageCounts | null = null;
  let done = false;

  const close = function* (): Generator<Event> {
    if (state.open) yield { type: 'content_block_stop', index: state.open.index };
    state.open = null;
  };
  /** Opens a block (closing the open one) and returns its index. */
  const start = function* (kind: BlockKind, block: Json): Generator<Event, number> {
    yield* close();
    const index = nextIndex++;
    state.open = { kind, index };
    yield { type: 'content_block_start', index, content_block: block };
    return index;
  };
  /** The index of the open block of this kind, opening one if needed. */
  const ensure = function* (kind: BlockKind, block: Json): Generator<Event, number> {
    return state.open?.kind === kind ? state.open.index : yield* start(kind, block);
  };
  const finish = function* (): Generator<Event> {
    yield* close();
    done = true;
    const counts = usage ?? { input_tokens: options.inputTokensEstimate, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
    yield { type: 'message_delta', delta: { stop_reason: stop ?? 'end_turn', stop_sequence: stopSequence }, usage: { ...counts } };
    yield { type: 'message_stop' };
  };

  yield {
    type: 'message_start',
    message: {
      id: options.messageId,
      type: 'message',
      role: 'assistant',
      model: options.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: options.inputTokensEstimate, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    },
  };
  yield { type: 'ping' };

  for await (const chunk of chunks) {
    if (done) continue; // late chunks after message_delta are dropped (§D.8 step 9)
    if (chunk['usage'] !== undefined && chunk['usage'] !== null) usage = messagesUsageFromChat(asObject(chunk['usage']));
    const choice = asObject(asArray(chunk['choices'])[0]);
    const delta = asObject(choice['delta']);

    for (const piece of reasoningPieces(delta)) {
      if (piece.kind === 'text') {
        const index = yield* ensure('thinking', { type: 'thinking', thinking: '', signature: '' });
        yield { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: piece.value } };
      } else if (piece.kind === 'signature' && state.open?.kind === 'thinking') {
        yield { type: 'content_block_delta', index: state.open.index, delta: { type: 'signature_delta', signature: piece.value } };
      } else if (piece.kind === 'encrypted') {
        yield* start('thinking', { type: 'redacted_thinking', data: piece.value });
        yield* close();
      }
    }

    for (const text of [asString(delta['content']), asString(delta['refusal']), imagesAsMarkdown(delta['images'])]) {
      if (!text) continue; // never an empty text block or delta
      const index = yield* ensure('text', { type: 'text', text: '' });
      yield { type: 'content_block_delta', index, delta: { type: 'text_delta', text } };
    }
    if (asString(delta['refusal'])) stop = 'refusal';

    for (const raw of asArray(delta['tool_calls'])) {
      const call = asObject(raw);
      const toolIndex = typeof call['index'] === 'number' ? call['index'] : 0;
      const fn = asObject(call['function']);
      let block = toolBlocks.get(toolIndex);
      if (block === undefined) {
        block = yield* start('tool_use', {
          type: 'tool_use',
          id: safeToolUseId(asString(call['id']), toolIndex),
          name: options.toolNames.client(asString(fn['name']) ?? ''),
          input: {},
        });
        toolBlocks.set(toolIndex, block);
      }
      const fragment = asString(fn['arguments']);
      if (!fragment) continue;
      if (state.open?.index !== block) {
        // Its block already closed: emitting now would break Anthropic's block order, and
        // dropping it would corrupt the tool input. Fail loudly instead (§D.8 step 7).
        throw ERR.upstreamInvalid(options.provider, 'it interleaved the arguments of parallel tool calls');
      }
      yield { type: 'content_block_delta', index: block, delta: { type: 'input_json_delta', partial_json: fragment } };
    }

    const reason = asString(choice['finish_reason']);
    if (reason !== undefined) {
      yield* close();
      const matched = reason === 'stop' ? asString(choice['stop_reason']) : undefined;
      if (matched !== undefined) stopSequence = matched;
      if (stop !== 'refusal') stop = matched !== undefined ? 'stop_sequence' : stopReasonFromFinish(reason);
    }
    if (stop !== null && usage !== null) yield* finish();
  }
  if (!done) yield* finish();
}
