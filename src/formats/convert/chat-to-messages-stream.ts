import { ERR } from '../../errors.ts';
import { imagesAsMarkdown, textOf } from './chat-to-messages-response.ts';
import { asArray, asObject, asString, type Json } from './json.ts';
import { reasoningPieces } from './reasoning.ts';
import { stopReasonFromFinish, type StopReason } from './stop-reason.ts';
import { argumentsText, newToolUseId, safeToolUseId, type ToolNames } from './tool-names.ts';
import { messagesUsageFromChat, type MessagesUsageCounts } from './usage.ts';

/**
 * Chat Completions chunks → Messages stream events: the state machine of protocol.md §D.8.
 * - message_start first (with the input estimate, which Claude Code reads for its context meter:
 *   peers.md §2 #24), then ping; the exact counts follow in message_delta.
 * - Blocks open lazily, one at a time, indices 0, 1, 2…; a role-only or empty delta opens nothing.
 *   Reasoning items with different indices are different thinking blocks, each with its signature.
 * - The first tool call streams live as input_json_delta. Later ones are held and sent whole at
 *   the finish: a Chat upstream may interleave the arguments of parallel calls, and Anthropic's
 *   blocks cannot interleave (§D.8 step 7). A new id at a known index is a new call.
 * - A non-empty finish_reason closes the open block; message_delta waits for the usage chunk
 *   (OpenRouter repeats finish_reason there, so finishing is idempotent); nothing follows
 *   message_delta except message_stop.
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
  /** For thinking blocks: the upstream's reasoning item index, when it gave one. */
  readonly item?: number | undefined;
}
interface ToolCall {
  readonly upstreamId: string | undefined;
  readonly id: string;
  name: string;
  /** Arguments not sent yet (everything, for a held call). */
  pending: string;
  /** Only the first call streams live; the rest are held until the finish. */
  readonly live: boolean;
  /** Its block, once started. */
  block: number | null;
}

export async function* chatChunksToMessagesEvents(
  chunks: AsyncIterable<Json>,
  options: ChatToMessagesStreamOptions,
): AsyncGenerator<Event> {
  let nextIndex = 0;
  // Held in an object: the helpers below change it, which narrowing of a plain `let` would miss.
  const state: { open: OpenBlock | null } = { open: null };
  const calls: ToolCall[] = [];
  const callByIndex = new Map<number, ToolCall>();
  let finishReason: string | null = null;
  let stopSequence: string | null = null;
  let refused = false;
  let usage: MessagesUsageCounts | null = null;
  let done = false;

  const close = function* (): Generator<Event> {
    if (state.open) yield { type: 'content_block_stop', index: state.open.index };
    state.open = null;
  };
  /** Opens a block (closing the open one) and returns its index. */
  const start = function* (kind: BlockKind, block: Json, item?: number): Generator<Event, number> {
    yield* close();
    const index = nextIndex++;
    state.open = { kind, index, item };
    yield { type: 'content_block_start', index, content_block: block };
    return index;
  };
  const thinkingBlock = function* (item: number | undefined): Generator<Event, number> {
    const open = state.open;
    const same = open?.kind === 'thinking' && (item === undefined || open.item === undefined || open.item === item);
    return same && open ? open.index : yield* start('thinking', { type: 'thinking', thinking: '', signature: '' }, item);
  };
  const toolStart = (call: ToolCall): Json => ({ type: 'tool_use', id: call.id, name: options.toolNames.client(call.name), input: {} });
  /** Held calls, each sent whole: start, all its arguments, stop. */
  const flushHeld = function* (): Generator<Event> {
    for (const call of calls) {
      if (call.live || call.block !== null) continue;
      const index = yield* start('tool_use', toolStart(call));
      call.block = index;
      if (call.pending !== '') yield { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: call.pending } };
      call.pending = '';
      yield* close();
    }
  };
  const finish = function* (): Generator<Event> {
    yield* close();
    yield* flushHeld();
    done = true;
    const counts = usage ?? { input_tokens: options.inputTokensEstimate, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
    const stop: StopReason = refused ? 'refusal' : stopSequence !== null ? 'stop_sequence' : stopReasonFromFinish(finishReason);
    yield { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: stopSequence }, usage: { ...counts } };
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
      if (piece.kind === 'encrypted') {
        yield* start('thinking', { type: 'redacted_thinking', data: piece.value });
        yield* close();
        continue;
      }
      // A signature with no thinking before it still needs a block to travel in.
      const index = yield* thinkingBlock(piece.index);
      yield piece.kind === 'text'
        ? { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: piece.value } }
        : { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: piece.value } };
    }

    const refusal = asString(delta['refusal']);
    if (refusal) refused = true;
    for (const text of [textOf(delta['content']), refusal, imagesAsMarkdown(delta['images'])]) {
      if (!text) continue; // never an empty text block or delta
      const index = state.open?.kind === 'text' ? state.open.index : yield* start('text', { type: 'text', text: '' });
      yield { type: 'content_block_delta', index, delta: { type: 'text_delta', text } };
    }

    for (const raw of asArray(delta['tool_calls'])) {
      const part = asObject(raw);
      const fn = asObject(part['function']);
      const upstreamId = asString(part['id']) || undefined;
      const position = typeof part['index'] === 'number' ? part['index'] : undefined;
      let call = position === undefined ? calls.at(-1) : callByIndex.get(position);
      if (!call || (upstreamId !== undefined && call.upstreamId !== undefined && upstreamId !== call.upstreamId)) {
        const id = upstreamId === undefined ? newToolUseId() : safeToolUseId(upstreamId);
        call = { upstreamId, id, name: '', pending: '', live: calls.length === 0, block: null };
        calls.push(call);
        if (position !== undefined) callByIndex.set(position, call);
      }
      if (!call.name) call.name = asString(fn['name']) ?? '';
      call.pending += argumentsText(fn['arguments']);
      if (!call.live) continue; // held until the finish
      if (call.block === null) {
        call.block = yield* start('tool_use', toolStart(call));
      } else if (state.open?.index !== call.block) {
        if (call.pending === '') continue;
        // Its block closed when other content arrived; emitting now would break the block order
        // and dropping would corrupt the input. Fail loudly (§D.8 step 7).
        throw ERR.upstreamInvalid(options.provider, 'it sent tool arguments after other content had followed them');
      }
      if (call.pending !== '') {
        yield { type: 'content_block_delta', index: call.block, delta: { type: 'input_json_delta', partial_json: call.pending } };
        call.pending = '';
      }
    }

    const reason = asString(choice['finish_reason']);
    if (reason) {
      finishReason = reason;
      // vLLM names the stop string that matched (peers.md §2 #20).
      if (reason === 'stop' && asString(choice['stop_reason'])) stopSequence = asString(choice['stop_reason']) ?? null;
      yield* close();
      yield* flushHeld();
    }
    if (finishReason !== null && usage !== null) yield* finish();
  }
  if (!done) yield* finish();
}
