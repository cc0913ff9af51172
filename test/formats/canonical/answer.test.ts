import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import type { CanonicalAnswer } from '../../../src/formats/canonical/answer.ts';
import { decodeChatAnswer, encodeChatAnswer } from '../../../src/formats/canonical/chat-answer.ts';
import { decodeMessagesAnswer, encodeMessagesAnswer } from '../../../src/formats/canonical/messages-answer.ts';
import { decodeResponsesAnswer, encodeResponsesAnswer } from '../../../src/formats/canonical/responses-answer.ts';
import { ToolNames } from '../../../src/formats/convert/tool-names.ts';
import type { Json } from '../../../src/formats/convert/json.ts';

/**
 * The canonical form's answers (issue #14; canonical/answer.ts). Each format's own answer decodes
 * and encodes back to itself (rule 1: nothing a format can say is lost on the way through), and
 * the blocks a format has no field for are said the documented way.
 */

const fixture = (path: string): Json => JSON.parse(readFileSync(new URL(`../../fixtures/${path}`, import.meta.url), 'utf8')) as Json;

describe('canonical answers', () => {
  it('a Messages answer with thinking, text and a tool call decodes and encodes back to itself (the counts of its usage)', () => {
    const message = fixture('anthropic/thinking-tool.json');
    const again = encodeMessagesAnswer(decodeMessagesAnswer(message)) as unknown as Json;
    const { usage, ...rest } = again;
    const { usage: originalUsage, ...originalRest } = message;
    expect(rest).to.deep.equal(originalRest);
    const counts = originalUsage as Record<string, unknown>;
    expect(usage).to.deep.equal({
      input_tokens: counts['input_tokens'],
      output_tokens: counts['output_tokens'],
      cache_read_input_tokens: counts['cache_read_input_tokens'],
      cache_creation_input_tokens: counts['cache_creation_input_tokens'],
    });
  });

  it('a Chat completion with a tool call decodes and encodes back to its message, finish and counts', () => {
    const completion = fixture('openai/tool-call.json');
    const again = encodeChatAnswer(decodeChatAnswer(completion, new ToolNames()), { created: 1699896916 }) as unknown as Json;
    const choice = (again['choices'] as Json[])[0] as Json;
    const original = ((completion['choices'] as Json[])[0] as Json)['message'] as Json;
    expect(choice['message']).to.deep.equal({ role: 'assistant', content: null, refusal: null, tool_calls: original['tool_calls'] });
    expect(choice['finish_reason']).to.equal('tool_calls');
    expect(again).to.deep.include({ id: 'chatcmpl-abc123', model: 'gpt-4o-2024-08-06' });
    expect(again['usage']).to.deep.include({ prompt_tokens: 61, completion_tokens: 16, total_tokens: 77 });
  });

  it('usage is Junction\'s convention in canonical: input without cached tokens, reasoning inside output', () => {
    const chat = decodeChatAnswer(
      { choices: [{ message: { content: 'x' }, finish_reason: 'stop' }], usage: { prompt_tokens: 100, completion_tokens: 40, prompt_tokens_details: { cached_tokens: 60, cache_write_tokens: 10 }, completion_tokens_details: { reasoning_tokens: 25 } } },
      new ToolNames(),
    );
    expect(chat.usage).to.deep.equal({ input: 30, output: 40, cacheRead: 60, cacheWrite: 10, reasoning: 25 });
    expect(encodeChatAnswer(chat, { created: 0 }).usage).to.deep.include({ prompt_tokens: 100, completion_tokens: 40 });
  });

  it('blocks a format has no field for: images into the text they follow, a refusal as text with its stop reason', () => {
    const answer: CanonicalAnswer = {
      id: 'x',
      model: 'm',
      blocks: [
        { type: 'text', text: 'Here:' },
        { type: 'image', url: 'data:image/png;base64,AAA' },
        { type: 'image', url: 'https://example.com/b.png' },
        { type: 'refusal', text: 'I cannot draw that.' },
      ],
      stop: 'refusal',
      stopSequence: undefined,
      usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
    };
    const message = encodeMessagesAnswer(answer);
    expect(message.content).to.deep.equal([
      { type: 'text', text: 'Here:\n\n![image](data:image/png;base64,AAA)\n\n![image](https://example.com/b.png)' },
      { type: 'text', text: 'I cannot draw that.' },
    ]);
    expect(message.stop_reason).to.equal('refusal');
    const chat = encodeChatAnswer(answer, { created: 0 });
    expect(chat.choices[0]?.message).to.deep.include({ refusal: 'I cannot draw that.' });
    expect(chat.choices[0]?.finish_reason).to.equal('content_filter');
  });

  it('never invents a signature: reasoning without one is encoded with an empty one', () => {
    const answer: CanonicalAnswer = {
      id: undefined,
      model: 'm',
      blocks: [{ type: 'reasoning', text: 'thinking…' }],
      stop: 'end_turn',
      stopSequence: undefined,
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
    };
    expect(encodeMessagesAnswer(answer).content).to.deep.equal([{ type: 'thinking', thinking: 'thinking…', signature: '' }]);
  });

  it('a Responses answer decodes to its blocks and usage, and encodes back to the same items and counts', () => {
    const response = fixture('openai/responses.json');
    const answer = decodeResponsesAnswer(response);
    expect(answer.blocks).to.deep.equal([{ type: 'reasoning', text: '' }, { type: 'text', text: 'Olá!' }]);
    expect(answer.usage).to.deep.equal({ input: 19, output: 86, cacheRead: 0, cacheWrite: 0, reasoning: 64 });
    const again = encodeResponsesAnswer(answer, { id: 'resp_x', createdAt: 1, request: { max_output_tokens: 4000 } });
    expect((again['output'] as Json[]).map((item) => item['type'])).to.deep.equal(['reasoning', 'message']);
    expect((again['output'] as Json[])[1]).to.deep.include({ id: 'msg_x_1', role: 'assistant', content: [{ type: 'output_text', text: 'Olá!', annotations: [], logprobs: [] }] });
    expect(again['usage']).to.deep.equal(response['usage']);
    expect(again).to.deep.include({ status: 'completed', max_output_tokens: 4000, incomplete_details: null });
  });

  it('tool calls keep their call ids across formats: Responses function_call ⇄ Chat tool_calls ⇄ Messages tool_use', () => {
    const response = { id: 'resp_1', model: 'm', output: [{ id: 'fc_1', type: 'function_call', call_id: 'call_abc', name: 'weather', arguments: '{"city":"Rome"}', status: 'completed' }], usage: { input_tokens: 5, output_tokens: 3 } };
    const answer = decodeResponsesAnswer(response);
    expect(answer.stop).to.equal('tool_use');
    const message = encodeMessagesAnswer(answer);
    expect(message.content).to.deep.equal([{ type: 'tool_use', id: 'call_abc', name: 'weather', input: { city: 'Rome' } }]);
    const chat = encodeChatAnswer(decodeMessagesAnswer(message as unknown as Json), { created: 0 });
    expect(chat.choices[0]?.message.tool_calls?.[0]).to.deep.include({ id: 'call_abc' });
    const back = encodeResponsesAnswer(decodeChatAnswer(chat as unknown as Json, new ToolNames()), { id: 'resp_2', createdAt: 0, request: {} });
    expect((back['output'] as Json[])[0]).to.deep.include({ type: 'function_call', call_id: 'call_abc', name: 'weather', arguments: '{"city":"Rome"}' });
  });

  it('Responses stops: a filtered answer and a length stop end incomplete with their reasons; a call with no id gets one', () => {
    const chat = (finish: string, message: Json) => decodeChatAnswer({ choices: [{ message, finish_reason: finish }] }, new ToolNames());
    const filtered = encodeResponsesAnswer(chat('content_filter', { content: '' }), { id: 'resp_f', createdAt: 0, request: {} });
    expect(filtered).to.deep.include({ status: 'incomplete', incomplete_details: { reason: 'content_filter' } });
    const refused = encodeResponsesAnswer(chat('stop', { content: null, refusal: 'No.' }), { id: 'resp_r', createdAt: 0, request: {} });
    expect(refused).to.deep.include({ status: 'completed', incomplete_details: null });
    const cut = encodeResponsesAnswer(chat('length', { content: 'partial' }), { id: 'resp_l', createdAt: 0, request: {} });
    expect(cut).to.deep.include({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    expect((cut['output'] as Json[])[0]).to.deep.include({ status: 'incomplete' });
    const nameless = encodeResponsesAnswer(chat('tool_calls', { tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }] }), { id: 'resp_t', createdAt: 0, request: {} });
    expect((nameless['output'] as Json[])[0]?.['call_id']).to.match(/^call_.+/);
  });
});
