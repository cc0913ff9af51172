import { expect } from 'chai';
import { chatToMessagesRequest } from '../../../src/formats/canonical/pairs.ts';
import { DEFAULT_MESSAGES_DIALECT } from '../../../src/formats/convert/dialect.ts';
import { GatewayError } from '../../../src/errors.ts';

type Json = Record<string, unknown>;
const convert = (request: Json, maxOutputTokens: number | null = null) =>
  chatToMessagesRequest(request, { model: 'claude-up', dialect: DEFAULT_MESSAGES_DIALECT, maxOutputTokens });
const body = (request: Json) => convert(request).body;

describe('Chat request → Messages request (protocol.md §D.3)', () => {
  it('moves system and developer messages into system, and maps the sampling fields', () => {
    expect(
      body({
        model: 'cat',
        max_completion_tokens: 500,
        temperature: 0.3,
        top_p: 0.8,
        stop: 'END',
        user: 'u-9',
        stream: true,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
          { role: 'developer', content: [{ type: 'text', text: 'Use French.' }] },
        ],
      }),
    ).to.deep.equal({
      model: 'claude-up',
      max_tokens: 500,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      system: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: 'Use French.' }],
      temperature: 0.3,
      top_p: 0.8,
      stop_sequences: ['END'],
      metadata: { user_id: 'u-9' },
      stream: true,
    });
  });

  it('takes max_tokens from the request, else the catalogue, else the dialect default', () => {
    expect(body({ max_tokens: 77, messages: [{ role: 'user', content: 'x' }] })['max_tokens']).to.equal(77);
    expect(convert({ messages: [{ role: 'user', content: 'x' }] }, 32000).body['max_tokens']).to.equal(32000);
    expect(body({ messages: [{ role: 'user', content: 'x' }] })['max_tokens']).to.equal(4096);
  });

  it('clamps temperature into Anthropic’s 0–1 range and keeps stop lists, dropping blank entries', () => {
    const out = body({ temperature: 1.7, stop: ['a', ' ', 'b'], messages: [{ role: 'user', content: 'x' }] });
    expect(out['temperature']).to.equal(1);
    expect(out['stop_sequences']).to.deep.equal(['a', 'b']);
  });

  it('converts images: a data URL to a base64 source (a PDF one to a document), a URL to a url source', () => {
    const out = body({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'See' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBOR' } },
            { type: 'image_url', image_url: { url: 'https://x/y.jpg', detail: 'high' } },
            { type: 'image_url', image_url: { url: 'data:application/pdf;base64,JVBER' } },
            { type: 'file', file: { filename: 'a.txt', file_data: `data:text/plain;base64,${Buffer.from('hello').toString('base64')}` } },
          ],
        },
      ],
    });
    expect((out['messages'] as Json[])[0]?.['content']).to.deep.equal([
      { type: 'text', text: 'See' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } },
      { type: 'image', source: { type: 'url', url: 'https://x/y.jpg' } },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBER' } },
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'hello' }, title: 'a.txt' },
    ]);
  });

  it('turns tool_calls into tool_use and consecutive tool messages into tool_results of one user turn', () => {
    const out = body({
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_2', type: 'function', function: { name: 'weather', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '20 C' },
        { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '25 C' }] },
        { role: 'user', content: 'Thanks' },
      ],
    });
    expect(out['messages']).to.deep.equal([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'call_1', name: 'weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'call_2', name: 'weather', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: '20 C' },
          { type: 'tool_result', tool_use_id: 'call_2', content: '25 C' },
          { type: 'text', text: 'Thanks' },
        ],
      },
    ]);
  });

  it('puts replayed signed thinking first in the assistant turn and skips empty text', () => {
    const out = body({
      messages: [
        { role: 'user', content: 'x' },
        {
          role: 'assistant',
          content: '',
          reasoning: 'Think.',
          reasoning_details: [
            { type: 'reasoning.text', text: 'Think.', signature: 'SIG', format: 'anthropic-claude-v1', index: 0 },
            { type: 'reasoning.encrypted', data: 'ENC', format: 'anthropic-claude-v1', index: 1 },
            { type: 'reasoning.summary', summary: 'other vendor', format: 'openai-responses-v1', index: 2 },
          ],
          tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
      ],
    });
    expect((out['messages'] as Json[])[1]?.['content']).to.deep.equal([
      { type: 'thinking', thinking: 'Think.', signature: 'SIG' },
      { type: 'redacted_thinking', data: 'ENC' },
      { type: 'tool_use', id: 'c', name: 'f', input: {} },
    ]);
  });

  it('maps tools, tool_choice and parallel_tool_calls', () => {
    const tools = [{ type: 'function', function: { name: 'f', description: 'F', parameters: { type: 'object', properties: { a: { type: 'string' } } } } }];
    const expectedTools = [{ name: 'f', description: 'F', input_schema: { type: 'object', properties: { a: { type: 'string' } } } }];
    const cases: [unknown, Json][] = [
      ['auto', { type: 'auto' }],
      ['required', { type: 'any' }],
      ['none', { type: 'none' }],
      [{ type: 'function', function: { name: 'f' } }, { type: 'tool', name: 'f' }],
    ];
    for (const [choice, expected] of cases) {
      const out = body({ tools, tool_choice: choice, messages: [{ role: 'user', content: 'x' }] });
      expect(out['tools']).to.deep.equal(expectedTools);
      expect(out['tool_choice']).to.deep.equal(expected);
    }
    expect(body({ tools, parallel_tool_calls: false, messages: [{ role: 'user', content: 'x' }] })['tool_choice']).to.deep.equal({ type: 'auto', disable_parallel_tool_use: true });
    expect(body({ tools: [{ type: 'function', function: { name: 'g' } }], messages: [{ role: 'user', content: 'x' }] })['tools']).to.deep.equal([
      { name: 'g', input_schema: { type: 'object', properties: {} } },
    ]);
  });

  it('turns reasoning_effort or OpenRouter reasoning into a thinking budget below max_tokens', () => {
    const base = { max_completion_tokens: 8000, messages: [{ role: 'user', content: 'x' }] };
    expect(body({ ...base, reasoning_effort: 'low' })['thinking']).to.deep.equal({ type: 'enabled', budget_tokens: 1024 });
    expect(body({ ...base, reasoning_effort: 'medium' })['thinking']).to.deep.equal({ type: 'enabled', budget_tokens: 2048 });
    expect(body({ ...base, reasoning_effort: 'high' })['thinking']).to.deep.equal({ type: 'enabled', budget_tokens: 4096 });
    expect(body({ ...base, reasoning: { max_tokens: 3000 } })['thinking']).to.deep.equal({ type: 'enabled', budget_tokens: 3000 });
    expect(body({ ...base, reasoning_effort: 'none' })).not.to.have.property('thinking');
    expect(() => body({ ...base, max_completion_tokens: 2000, reasoning_effort: 'high' })).to.throw(GatewayError, /reasoning_effort/);
  });

  it('refuses what Messages cannot do with a 400 naming the parameter (never a silent drop)', () => {
    const x = [{ role: 'user', content: 'x' }];
    const refused: [Json, string][] = [
      [{ n: 2, messages: x }, 'n'],
      [{ logprobs: true, messages: x }, 'logprobs'],
      [{ logit_bias: { '50256': -100 }, messages: x }, 'logit_bias'],
      [{ frequency_penalty: 0.5, messages: x }, 'frequency_penalty'],
      [{ presence_penalty: -1, messages: x }, 'presence_penalty'],
      [{ modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' }, messages: x }, 'modalities'],
      [{ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }] }] }, 'messages'],
      [{ tools: [{ type: 'custom', custom: { name: 'c' } }], messages: x }, 'tools[0].type'],
      [{ web_search_options: {}, messages: x }, 'web_search_options'],
      [{ functions: [{ name: 'f' }], messages: x }, 'functions'],
    ];
    for (const [request, param] of refused) {
      const err = (() => {
        try {
          body(request);
        } catch (e) {
          return e;
        }
        return null;
      })();
      expect(err, param).to.be.instanceOf(GatewayError);
      expect(err).to.include({ status: 400, param });
    }
    // Neutral values of the same fields are fine.
    expect(() => body({ n: 1, logprobs: false, frequency_penalty: 0, presence_penalty: null, messages: x })).not.to.throw();
  });

  it('implements response_format with a forced tool', () => {
    const schema = { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'] };
    const out = convert({ response_format: { type: 'json_schema', json_schema: { name: 'result', schema } }, messages: [{ role: 'user', content: 'x' }] });
    expect(out.jsonTool).to.equal('json_response');
    expect(out.body['tools']).to.deep.equal([{ name: 'json_response', description: 'Reply with the answer as this tool’s input.', input_schema: schema }]);
    expect(out.body['tool_choice']).to.deep.equal({ type: 'tool', name: 'json_response' });
    const jsonObject = convert({ response_format: { type: 'json_object' }, messages: [{ role: 'user', content: 'x' }] });
    expect((jsonObject.body['tools'] as Json[])[0]?.['input_schema']).to.deep.equal({ type: 'object' });
  });

  it('strips trailing whitespace from a final assistant prefill, which Anthropic refuses', () => {
    const out = body({ messages: [{ role: 'user', content: 'JSON please' }, { role: 'assistant', content: '{\n  ' }] });
    expect((out['messages'] as Json[]).at(-1)).to.deep.equal({ role: 'assistant', content: [{ type: 'text', text: '{' }] });
  });

  it('keeps assistant refusal parts as text', () => {
    const out = body({
      messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot.' }] }, { role: 'user', content: 'b' }],
    });
    expect((out['messages'] as Json[])[1]).to.deep.equal({ role: 'assistant', content: [{ type: 'text', text: 'I cannot.' }] });
  });

  it('refuses response_format together with reasoning, which Anthropic cannot combine', () => {
    expect(() =>
      body({ reasoning_effort: 'low', max_completion_tokens: 4000, response_format: { type: 'json_object' }, messages: [{ role: 'user', content: 'x' }] }),
    ).to.throw(GatewayError, /response_format/);
  });

  it('turns OpenRouter’s reasoning: {enabled: true} on with the default budget', () => {
    expect(body({ max_completion_tokens: 8000, reasoning: { enabled: true }, messages: [{ role: 'user', content: 'x' }] })['thinking']).to.deep.equal({
      type: 'enabled',
      budget_tokens: 2048,
    });
  });
});
