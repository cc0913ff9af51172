import { errorPayload, type GatewayError, type Surface } from '../errors.ts';

/**
 * SSE framing for both formats; the only place that writes `event:`/`data:` text.
 * Messages: every event has an `event:` name equal to its data's `type` (protocol.md §A.8).
 * Chat: data-only lines, ended by `data: [DONE]` (protocol.md §B.6).
 */

export function messagesEventFrame(event: { readonly type: string }): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

export function chatChunkFrame(chunk: object): string {
  return `data: ${JSON.stringify(chunk)}\n\n`;
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
export function streamErrorFrame(surface: Surface, err: GatewayError, requestId: string): string {
  if (surface === 'responses') {
    // OpenAI's own form (responses-api.md §4.2): an `error` event whose payload also has a truthy
    // `error`, which every openai-node version turns into a thrown APIError.
    return `event: error\ndata: ${JSON.stringify({ type: 'error', ...errorPayload(surface, err, requestId) })}\n\n`;
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
