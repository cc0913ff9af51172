import { expect } from 'chai';
import { FIXTURES } from '../support/fake-upstream.ts';
import { CHAT_HEADERS, MESSAGES_HEADERS, useUpstreamAndGateway } from '../support/gateway.ts';

/**
 * Issue #12: send what the real API sends, and nothing it never sends. Every JSON document the
 * gateway writes itself (translated and in-process answers, each stream event, error bodies and
 * in-band errors) is walked, and a `null` is allowed only under a field name where the real API
 * writes null:
 * - Messages: `stop_reason` and `stop_sequence` (protocol.md §A.7, §A.8); everything else with no
 *   value is left out (`citations`, `container`, `usage.service_tier`…).
 * - Chat: `content`, `refusal`, `logprobs`, `finish_reason`, a chunk's `usage`, an error's `param`
 *   and `code` (protocol.md §B.5, §B.6, and OpenAI's ErrorResponse, where all four keys are required).
 */
const NULLABLE = {
  messages: new Set(['stop_reason', 'stop_sequence']),
  chat: new Set(['content', 'refusal', 'logprobs', 'finish_reason', 'usage', 'param', 'code']),
} as const;

type Surface = keyof typeof NULLABLE;

/** The paths of the nulls the real API would not send. */
function strayNulls(surface: Surface, value: unknown, path = '$'): string[] {
  if (Array.isArray(value)) return value.flatMap((item, i) => strayNulls(surface, item, `${path}[${i}]`));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) =>
    item === null ? (NULLABLE[surface].has(key) ? [] : [`${path}.${key}`]) : strayNulls(surface, item, `${path}.${key}`),
  );
}

/** The JSON documents of an answer: the body, or each SSE event's data (`[DONE]` aside). */
function documents(text: string, contentType: string): unknown[] {
  if (!contentType.startsWith('text/event-stream')) return [JSON.parse(text)];
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice(6)));
}

const CLIENTS = {
  messages: { path: '/v1/messages', headers: MESSAGES_HEADERS, translated: 'gpt-4o' },
  chat: { path: '/v1/chat/completions', headers: CHAT_HEADERS, translated: 'claude-sonnet-4-6' },
} as const;

function body(surface: Surface, model: string, options: { stream: boolean; tools: boolean }): Record<string, unknown> {
  const base: Record<string, unknown> = { model, max_tokens: 64, stream: options.stream, messages: [{ role: 'user', content: 'Weather in Florence?' }] };
  if (surface === 'chat' && options.stream) base['stream_options'] = { include_usage: true };
  if (!options.tools) return base;
  const schema = { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] };
  return surface === 'messages'
    ? { ...base, tools: [{ name: 'weather', input_schema: schema }], tool_choice: { type: 'any' } }
    : { ...base, tools: [{ type: 'function', function: { name: 'weather', parameters: schema } }], tool_choice: 'required' };
}

describe('no null the real API never sends, in anything the gateway writes (issue #12)', () => {
  const env = useUpstreamAndGateway();

  async function send(surface: Surface, payload: unknown, headers: Record<string, string> = CLIENTS[surface].headers): Promise<{ status: number; docs: unknown[] }> {
    const res = await fetch(`${env.gw.url}${CLIENTS[surface].path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });
    const text = await res.text();
    return { status: res.status, docs: documents(text, res.headers.get('content-type') ?? '') };
  }

  for (const surface of ['messages', 'chat'] as const) {
    for (const [route, model] of [
      ['translated', CLIENTS[surface].translated],
      ['in-process', 'demo'],
    ] as const) {
      for (const stream of [false, true]) {
        for (const tools of [false, true]) {
          it(`${surface} client, ${route} route, ${stream ? 'streamed' : 'whole'}, ${tools ? 'a tool call' : 'text'}`, async () => {
            const { status, docs } = await send(surface, body(surface, model, { stream, tools }));
            expect(status).to.equal(200);
            expect(docs.length).to.be.greaterThan(0);
            expect(docs.flatMap((doc) => strayNulls(surface, doc))).to.deep.equal([]);
          });
        }
      }
    }

    it(`${surface} client: error bodies (400, 401, 404, an upstream 500)`, async () => {
      const errors = [
        await send(surface, '{"model":'),
        await send(surface, { model: 'demo' }),
        await send(surface, body(surface, 'demo', { stream: false, tools: false }), { ...CLIENTS[surface].headers, 'x-api-key': 'sk-jct-wrong-0123456789', authorization: 'Bearer sk-jct-wrong-0123456789' }),
        await send(surface, body(surface, 'no-such-model', { stream: false, tools: false })),
      ];
      env.upstream.script(() => ({ status: 500, body: { error: { message: 'boom' } } }));
      errors.push(await send(surface, body(surface, CLIENTS[surface].translated, { stream: false, tools: false })));
      expect(errors.map((e) => e.status)).to.deep.equal([400, 400, 401, 404, 500]);
      expect(errors.flatMap((e) => e.docs.flatMap((doc) => strayNulls(surface, doc)))).to.deep.equal([]);
    });

    it(`${surface} client: an in-band stream error on a translated route`, async () => {
      env.upstream.script(() => ({ sse: surface === 'messages' ? FIXTURES.openaiTextSse() : FIXTURES.anthropicTextSse(), resetAfterEvents: 3 }));
      const { status, docs } = await send(surface, body(surface, CLIENTS[surface].translated, { stream: true, tools: false }));
      expect(status).to.equal(200);
      const last = docs.at(-1) as Record<string, unknown>;
      expect(last['error'], JSON.stringify(last)).to.be.an('object');
      expect(docs.flatMap((doc) => strayNulls(surface, doc))).to.deep.equal([]);
    });
  }

  it('count_tokens answered by the gateway itself (a translated route) carries no null', async () => {
    const res = await fetch(`${env.gw.url}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...MESSAGES_HEADERS },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(res.status).to.equal(200);
    expect(strayNulls('messages', await res.json())).to.deep.equal([]);
  });

  it('the walker itself finds what the issue reported', () => {
    const reported = { content: [{ type: 'text', text: 'x', citations: null }], stop_reason: 'end_turn', usage: { service_tier: null } };
    expect(strayNulls('messages', reported)).to.deep.equal(['$.content[0].citations', '$.usage.service_tier']);
    expect(strayNulls('chat', { error: { message: 'm', type: 't', param: null, code: null } })).to.deep.equal([]);
  });
});
