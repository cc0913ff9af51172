import type { ClientRequest } from '../../src/plugin-host/api.ts';

type ChatRequest = Extract<ClientRequest, { endpoint: 'chat_completions' }>['body'];

type ResponsesRequest = Extract<ClientRequest, { endpoint: 'responses' }>;

/**
 * A Responses request read as the Chat request the demo answers (issue #14): `instructions` as
 * the system message, then each input message's text. The demo's answer goes back as a Chat
 * answer, which the core turns into a Responses one. Tools are not offered to the demo this way.
 */
export function asChatRequest(request: ResponsesRequest): Extract<ClientRequest, { endpoint: 'chat_completions' }> {
  const body = request.body;
  const messages: { role: 'system' | 'user' | 'assistant'; content: string }[] = [];
  if (typeof body.instructions === 'string') messages.push({ role: 'system', content: body.instructions });
  if (typeof body.input === 'string') messages.push({ role: 'user', content: body.input });
  for (const raw of Array.isArray(body.input) ? body.input : []) {
    const item = raw as { type?: string; role?: string; content?: unknown; output?: unknown };
    const text = textOf(item.content ?? item.output);
    if (text === '') continue;
    messages.push({ role: item.role === 'assistant' ? 'assistant' : item.role === 'system' || item.role === 'developer' ? 'system' : 'user', content: text });
  }
  const chat: ChatRequest = {
    model: body.model ?? '',
    messages,
    ...(typeof body.max_output_tokens === 'number' && { max_completion_tokens: body.max_output_tokens }),
  };
  return { endpoint: 'chat_completions', body: chat, stream: false };
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part: { text?: unknown }) => (typeof part?.text === 'string' ? part.text : '')).join('');
}
