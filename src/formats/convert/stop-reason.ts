import type { ChatCompletion, Message } from '../wire.ts';

/** `finish_reason` ⇄ `stop_reason` (protocol.md §D.5, the "recommended" columns). */

export type FinishReason = ChatCompletion['choices'][number]['finish_reason'];
export type StopReason = NonNullable<Message['stop_reason']>;

export function stopReasonFromFinish(finish: string | null | undefined): StopReason {
  switch (finish) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      // `stop`, and a stream that ended without saying why (§D.5 "none before EOF").
      return 'end_turn';
  }
}

export function finishFromStopReason(stop: string | null | undefined): FinishReason {
  switch (stop) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      // end_turn, stop_sequence, pause_turn and anything newer.
      return 'stop';
  }
}
