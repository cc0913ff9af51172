import { expect } from 'chai';
import { decodeMessagesAnswer } from '../../../src/formats/canonical/messages-answer.ts';
import { encodeMessagesRequest } from '../../../src/formats/canonical/messages-request-encode.ts';
import { decodeMessagesRequest } from '../../../src/formats/canonical/messages-request-decode.ts';
import { MessagesStreamDecoder } from '../../../src/formats/canonical/messages-stream-decode.ts';
import { encodeResponsesAnswer } from '../../../src/formats/canonical/responses-answer.ts';
import { decodeResponsesRequest } from '../../../src/formats/canonical/responses-request-decode.ts';
import { encodeResponsesRequest } from '../../../src/formats/canonical/responses-request-encode.ts';
import { ResponsesStreamDecoder } from '../../../src/formats/canonical/responses-stream-decode.ts';
import { ResponsesStreamEncoder } from '../../../src/formats/canonical/responses-stream-encode.ts';
import { translateStream } from '../../../src/formats/canonical/stream.ts';
import { DEFAULT_MESSAGES_DIALECT } from '../../../src/formats/convert/dialect.ts';
import type { Json } from '../../../src/formats/convert/json.ts';
import { ToolNames } from '../../../src/formats/convert/tool-names.ts';
import { messagesEventsFromSse, responsesEventsFromSse } from '../../../src/formats/upstream-events.ts';
import { GatewayError } from '../../../src/errors.ts';
import { decodeSse } from '../../../src/sse/decode.ts';
import { readFileSync } from 'node:fs';

/**
 * The Responses codecs of the canonical form (issue #14; responses-api.md §7): requests both
 * ways, and a translated stream whose final response is the one the whole answer would be.
 */

const fixture = (path: string): Buffer => readFileSync(new URL(`../../fixtures/${path}`, import.meta.url));
const toMessages = (request: Json): Json => encodeMessagesRequest(decodeResponsesRequest(request), { model: 'claude', dialect: DEFAULT_MESSAGES_DIALECT, maxOutputTokens: null }).body;
const refusal = (run: () => unknown): GatewayError => {
  try {
    run();
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
};
async function* bytes(data: Buffer): AsyncGenerator<Uint8Array> {
  yield data;
}
async function collect<T>(events: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const event of events) out.push(event);
  return out;
}

describe('Responses codecs (canonical form)', () => {
  it('a Codex-style input: untyped messages, a plain assistant turn followed by its call, the output after it', () => {
    const body = toMessages({
      instructions: 'Be terse.',
      input: [
        { role: 'developer', content: 'Repo rules.' },
        { role: 'user', content: [{ type: 'input_text', text: 'List files' }] },
        { type: 'message', role: 'assistant', content: 'Listing.' },
        { type: 'function_call', call_id: 'c1', name: 'shell', arguments: '{"cmd":"ls"}' },
        { type: 'function_call_output', call_id: 'c1', output: 'a.txt' },
      ],
    });
    expect(body['system']).to.deep.equal([{ type: 'text', text: 'Be terse.' }, { type: 'text', text: 'Repo rules.' }]);
    expect(body['messages']).to.deep.equal([
      { role: 'user', content: [{ type: 'text', text: 'List files' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Listing.' }, { type: 'tool_use', id: 'c1', name: 'shell', input: { cmd: 'ls' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'a.txt' }] },
    ]);
  });

  it('refuses what a translated upstream cannot take, naming it: hosted tools, their items, unknown items, a call without its id', () => {
    expect(refusal(() => decodeResponsesRequest({ input: 'x', tools: [{ type: 'file_search', vector_store_ids: ['vs'] }] })).param).to.equal('tools[0].type');
    expect(refusal(() => decodeResponsesRequest({ input: [{ type: 'code_interpreter_call', id: 'ci' }] })).param).to.equal('input[0].type');
    expect(refusal(() => decodeResponsesRequest({ input: [{ type: 'hologram' }] })).message).to.include('hologram');
    expect(refusal(() => decodeResponsesRequest({ input: [{ type: 'function_call', name: 'f', arguments: '{}' }] })).param).to.equal('input[0].call_id');
    expect(refusal(() => decodeResponsesRequest({ input: 'x', tool_choice: { type: 'web_search_preview' } })).param).to.equal('tool_choice');
  });

  it('allowed_tools offers only the allowed ones, with the mode as the choice', () => {
    const request = decodeResponsesRequest({
      input: 'x',
      tools: ['a', 'b', 'c'].map((name) => ({ type: 'function', name, parameters: {} })),
      tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'b' }] },
    });
    expect(request.tools.map((t) => t.name)).to.deep.equal(['b']);
    expect(request.toolChoice).to.deep.equal({ type: 'any' });
  });

  it('a Messages request to a Responses upstream: stateless, tools not strict, outputs after their calls, foreign reasoning left out', () => {
    const messages = decodeMessagesRequest({
      system: 'Sys.',
      max_tokens: 200,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      tools: [{ name: 'weather', input_schema: { type: 'object' } }],
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'Claude thought.', signature: 'sig-claude' }, { type: 'tool_use', id: 't1', name: 'weather', input: { city: 'Rome' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'hot' }], is_error: true }, { type: 'text', text: 'And?' }] },
      ],
    });
    const { body } = encodeResponsesRequest(messages, { model: 'gpt-5', maxOutputTokens: null });
    expect(body).to.deep.include({ model: 'gpt-5', instructions: 'Sys.', max_output_tokens: 200, store: false, include: ['reasoning.encrypted_content'], reasoning: { effort: 'medium', summary: 'auto' } });
    expect(body['tools']).to.deep.equal([{ type: 'function', name: 'weather', parameters: { type: 'object' }, strict: false }]);
    expect(body['input']).to.deep.equal([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather?' }] },
      // Claude's signed thinking cannot go to OpenAI: left out, not sent as something else.
      { type: 'function_call', call_id: 't1', name: 'weather', arguments: '{"city":"Rome"}' },
      { type: 'function_call_output', call_id: 't1', output: '[tool error] hot' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'And?' }] },
    ]);
    expect(refusal(() => encodeResponsesRequest({ ...messages, stop: ['END'] }, { model: 'gpt-5', maxOutputTokens: null })).param).to.equal('stop_sequences');
  });

  it('OpenAI reasoning from a Responses upstream goes back to it exactly as it came, through a Messages client', async () => {
    const answer = { id: 'resp_u', model: 'gpt-5', output: [{ id: 'rs_9', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Plan.' }], encrypted_content: 'gAAAA-openai' }, { id: 'msg_9', type: 'message', content: [{ type: 'output_text', text: 'Hi' }] }], usage: { input_tokens: 3, output_tokens: 2 } };
    const { decodeResponsesAnswer } = await import('../../../src/formats/canonical/responses-answer.ts');
    const { encodeMessagesAnswer } = await import('../../../src/formats/canonical/messages-answer.ts');
    const message = encodeMessagesAnswer(decodeResponsesAnswer(answer)) as unknown as Json;
    const thinking = (message['content'] as Json[])[0]!;
    expect(thinking).to.deep.include({ type: 'thinking', thinking: 'Plan.' });
    const next = decodeMessagesRequest({ max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: message['content'] }, { role: 'user', content: 'More' }] });
    const { body } = encodeResponsesRequest(next, { model: 'gpt-5', maxOutputTokens: null });
    expect((body['input'] as Json[])[1]).to.deep.equal({ type: 'reasoning', summary: [{ type: 'summary_text', text: 'Plan.' }], encrypted_content: 'gAAAA-openai', id: 'rs_9' });
    // …and never to Claude, which would reject another vendor's signature.
    const toClaude = encodeMessagesRequest(next, { model: 'claude', dialect: DEFAULT_MESSAGES_DIALECT, maxOutputTokens: null }).body;
    expect(JSON.stringify(toClaude)).to.not.include('gAAAA-openai');
  });

  it('a translated Messages stream: gap-free sequence numbers, and its final response is the whole answer\'s', async () => {
    const options = { id: 'resp_t1', createdAt: 5, request: { input: 'x' }, model: 'claude-sonnet-4' };
    const events = await collect(translateStream(messagesEventsFromSse(decodeSse(bytes(fixture('anthropic/thinking-tool.sse')), (e) => e as Error), 'up'), new MessagesStreamDecoder(null), new ResponsesStreamEncoder(options)));
    expect(events.map((e) => e['sequence_number'])).to.deep.equal(events.map((_, i) => i));
    const completed = events.at(-1)!;
    expect(completed['type']).to.equal('response.completed');
    const whole = encodeResponsesAnswer(decodeMessagesAnswer(JSON.parse(fixture('anthropic/thinking-tool.json').toString('utf8')) as Json), options);
    const final = completed['response'] as Json;
    expect((final['output'] as Json[]).map((i) => [i['id'], i['type']])).to.deep.equal((whole['output'] as Json[]).map((i) => [i['id'], i['type']]));
    // Every item added is done, with the same id, and the done item is the one in the final output.
    const added = events.filter((e) => e['type'] === 'response.output_item.added').map((e) => (e['item'] as Json)['id']);
    const done = events.filter((e) => e['type'] === 'response.output_item.done').map((e) => e['item'] as Json);
    expect(done.map((i) => i['id'])).to.deep.equal(added);
    expect(done).to.deep.equal(final['output']);
  });

  it('a Responses upstream\'s stream decodes to blocks a Messages client reads, usage from its terminal event', async () => {
    const { MessagesStreamEncoder } = await import('../../../src/formats/canonical/messages-stream-encode.ts');
    const events = await collect(
      translateStream(
        responsesEventsFromSse(decodeSse(bytes(fixture('openai/responses.sse')), (e) => e as Error), 'up'),
        new ResponsesStreamDecoder(new ToolNames()),
        new MessagesStreamEncoder({ messageId: 'msg_1', model: 'gpt-5', inputTokensEstimate: 9 }),
      ),
    );
    const text = events.filter((e) => e['type'] === 'content_block_delta' && (e['delta'] as Json)['type'] === 'text_delta').map((e) => (e['delta'] as Json)['text']).join('');
    expect(text).to.equal('Olá!');
    const delta = events.find((e) => e['type'] === 'message_delta')!;
    expect(delta['usage']).to.deep.include({ input_tokens: 176, cache_read_input_tokens: 1024, output_tokens: 86 });
    expect(events.at(-1)?.['type']).to.equal('message_stop');
  });

  it('a user\'s text between a call and its output: the tool result still goes first in the Messages turn', () => {
    const body = toMessages({ input: [{ role: 'user', content: 'go' }, { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }, { role: 'user', content: [{ type: 'input_text', text: 'note' }] }, { type: 'function_call_output', call_id: 'c1', output: 'ok' }] });
    expect((body['messages'] as Json[])[2]?.['content']).to.deep.equal([{ type: 'tool_result', tool_use_id: 'c1', content: 'ok' }, { type: 'text', text: 'note' }]);
  });

  it('a turn that only reasoned goes to a Chat upstream with empty text, never a null OpenAI refuses', async () => {
    const { encodeChatRequest } = await import('../../../src/formats/canonical/chat-request-encode.ts');
    const { DEFAULT_CHAT_DIALECT } = await import('../../../src/formats/convert/dialect.ts');
    const request = decodeResponsesRequest({ input: [{ role: 'user', content: 'a' }, { type: 'reasoning', summary: [{ type: 'summary_text', text: 'hm' }] }, { role: 'user', content: 'b' }] });
    const { body } = encodeChatRequest(request, { model: 'gpt-4o', dialect: DEFAULT_CHAT_DIALECT, maxOutputTokens: null });
    expect((body['messages'] as Json[])[1]).to.deep.equal({ role: 'assistant', content: '' });
    // Reasoning followed by the assistant's text is one turn, not two.
    const joined = decodeResponsesRequest({ input: [{ role: 'user', content: 'a' }, { type: 'reasoning', summary: [] }, { role: 'assistant', content: 'answer' }] });
    expect(joined.turns.map((t) => t.role)).to.deep.equal(['user', 'assistant']);
  });

  it('the stream encoder finishes what a decoder left open at the stop, and never loses a part', () => {
    const encoder = new ResponsesStreamEncoder({ id: 'resp_o', createdAt: 0, request: {}, model: 'm' });
    const out: Json[] = [];
    encoder.open(out);
    encoder.push({ type: 'block', index: 0, block: { type: 'text' } }, out);
    encoder.push({ type: 'text', index: 0, text: 'Hi' }, out);
    encoder.push({ type: 'stop', stop: 'end_turn', stopSequence: undefined, usage: undefined }, out);
    const final = out.at(-1)!['response'] as Json;
    expect(((final['output'] as Json[])[0]?.['content'] as Json[])[0]).to.deep.include({ type: 'output_text', text: 'Hi' });
    expect(out.map((e) => e['type'])).to.include.members(['response.output_text.done', 'response.content_part.done', 'response.output_item.done']);
  });
});
