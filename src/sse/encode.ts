import { errorPayload, type GatewayError, type Surface } from '../errors.ts';
import { rawJson } from '../formats/upstream-events.ts';

/**
 * SSE framing for both formats; the only place that writes `event:`/`data:` text.
 * Messages: every event has an `event:` name equal to its data's `type` (protocol.md §A.8).
 * Chat: data-only lines, ended by `data: [DONE]` (protocol.md §B.6).
 */

export function messagesEventFrame(event: { readonly type: string }): string {
  return `event: ${event.type}\ndata: ${rawJson(event) ?? JSON.stringify(event)}\n\n`;
}

export function chatChunkFrame(chunk: object): string {
  return `data: ${rawJson(chunk) ?? JSON.stringify(chunk)}\n\n`;
}

export const CHAT_DONE_FRAME = 'data: [DONE]\n\n';

/** A comment line: keeps idle intermediaries from closing a quiet stream; clients ignore it. */
export const KEEPALIVE_COMMENT_FRAME = ': keepalive\n\n';

/** Anthropic's own keepalive; both SDK generations skip it by event name, even before message_start (protocol.md §A.8). */
export const PING_FRAME = 'event: ping\ndata: {"type":"ping"}\n\n';

/** The keepalive frame of a caller's format: `event: ping` for Messages, a comment for Chat (issue #5). */
export function keepaliveFrame(surface: Surface): string {
  return surface === 'messages' ? PING_FRAME : KEEPALIVE_COMMENT_FRAME;
}

/**
 * The in-band error that ends a stream that already started. The SDKs raise only on
 * `event: error` (Messages) or a `data: {"error":…}` line (Chat); a silent end reads as success
 * (real-clients.md). A Chat stream that failed gets no `[DONE]`.
 */
/** Where a Responses stream stands when it fails: its next sequence number, and its response's id. */
export interface ResponsesPosition {
  readonly sequence: number;
  readonly responseId: string | undefined;
}

export function streamErrorFrame(surface: Surface, err: GatewayError, requestId: string, position?: ResponsesPosition): string {
  if (surface === 'responses') {
    // OpenAI's own form (responses-api.md §4.2): an `error` event with `sequence_number`, its code
    // and message at the top and again in a truthy `error` (every openai-node version throws on
    // it; the Vercel AI SDK's schema wants the number), then `response.failed`, the terminal event
    // Codex CLI acts on (§4.4).
    const sequence = position?.sequence ?? 0;
    const payload = errorPayload(surface, err, requestId) as { error: { code: string | null; message: string; param: string | null } };
    const code = payload.error.code ?? err.type;
    const error = { type: 'error', sequence_number: sequence, code, message: err.message, param: payload.error.param, ...payload };
    const failed = {
      type: 'response.failed',
      sequence_number: sequence + 1,
      response: { id: position?.responseId ?? `resp_${requestId.replace(/^req_/, '')}`, object: 'response', status: 'failed', error: { code, message: err.message }, incomplete_details: null, output: [], usage: null },
    };
    return `event: error\ndata: ${JSON.stringify(error)}\n\nevent: response.failed\ndata: ${JSON.stringify(failed)}\n\n`;
  }
  const data = JSON.stringify(errorPayload(surface, err, requestId));
  return surface === 'messages' ? `event: error\ndata: ${data}\n\n` : `data: ${data}\n\n`;
}

/** Response headers for an SSE stream we write ourselves. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  // Tells nginx-style buffering proxies to pass events through as they come.
  'x-accel-buffering': 'no',
};
