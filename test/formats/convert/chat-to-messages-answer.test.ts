import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { chatToMessage } from '../../../src/formats/canonical/pairs.ts';
import { chatChunksToMessagesEvents } from '../../../src/formats/canonical/pairs.ts';
import { ToolNames } from '../../../src/formats/convert/tool-names.ts';
import { DEFAULT_CHAT_DIALECT } from '../../../src/formats/convert/dialect.ts';
import { messagesToChatRequest } from '../../../src/formats/canonical/pairs.ts';
import { chatChunksFromSse } from '../../../src/formats/upstream-events.ts';
import { decodeSse } from '../../../src/sse/decode.ts';
import { GatewayError } from '../../../src/errors.ts';

type Json = Record<string, unknown>;
const fixture = (path: string) => readFileSync(new URL(`../../fixtures/${path}`, import.meta.url));

async function* bytes(...chunks: (string | Buffer)[]): AsyncGenerator<Uint8Array> {
  for (const chunk of chunks) yield typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
}

/** Upstream SSE bytes → client events, through the same pieces the gateway uses. */
async function events(sse: string | Buffer, toolNames = new ToolNames()): Promise<Json[]> {
  const out: Json[] = [];
  const chunks = chatChunksFromSse(decodeSse(bytes(sse), (e) => e as Error), 'up');
  for await (const e of chatChunksToMessagesEvents(chunks, { messageId: 'msg_1', model: 'm', inputTokensEstimate: 50, toolNames, provider: 'up' })) out.push(e);
  return out;
}
const chunk = (delta: Json, finish: string | null = null, extra: Json = {}) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
const usageChunk = (usage: Json) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage })}\n\n`;
const DONE = 'data: [DONE]\n\n';

const START = {
  type: 'message_start',
  message: {
    id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, stop_sequence: null,
    usage: { input_tokens: 50, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  },
};
const PING = { type: 'ping' };

describe('Chat answer → Message (protocol.md §D.4)', () => {
  const completion = (message: Json, finish: string, usage: Json = { prompt_tokens: 10, completion_tokens: 5 }) => ({
    id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-x', choices: [{ index: 0, message, finish_reason: finish }], usage,
  });

  it('maps finish_reason: stop→end_turn, length→max_tokens, tool_calls→tool_use, content_filter→refusal', () => {
    const expected: Record<string, string> = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use', content_filter: 'refusal' };
    for (const [finish, stop] of Object.entries(expected)) {
      expect(chatToMessage(completion({ role: 'assistant', content: 'x' }, finish), new ToolNames()).stop_reason).to.equal(stop);
    }
  });

  it('puts thinking first, then text, then tool_use with parsed input and the same ids', () => {
    const message = chatToMessage(
      completion(
        {
          role: 'assistant',
          content: 'Calling.',
          reasoning_content: 'Plan: call the tool.',
          tool_calls: [
            { id: 'call_A', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
            { id: 'functions.Bash:0', type: 'function', function: { name: 'bash', arguments: 'not json' } },
          ],
        },
        'tool_calls',
      ),
      new ToolNames(),
    );
    expect(message.content).to.deep.equal([
      { type: 'thinking', thinking: 'Plan: call the tool.', signature: '' },
      { type: 'text', text: 'Calling.' },
      { type: 'tool_use', id: 'call_A', name: 'weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'functions_Bash_0', name: 'bash', input: { raw_arguments: 'not json' } },
    ]);
  });

  it('keeps an Anthropic signature from reasoning_details and never invents one', () => {
    const signed = chatToMessage(
      completion(
        {
          role: 'assistant',
          content: 'Hi',
          reasoning: 'Think.',
          reasoning_details: [
            { type: 'reasoning.text', text: 'Think.', format: 'anthropic-claude-v1', index: 0 },
            { type: 'reasoning.text', signature: 'SIG', format: 'anthropic-claude-v1', index: 0 },
          ],
        },
        'stop',
      ),
      new ToolNames(),
    );
    expect(signed.content[0]).to.deep.equal({ type: 'thinking', thinking: 'Think.', signature: 'SIG' });
    const openaiSummary = chatToMessage(
      completion({ role: 'assistant', content: 'Hi', reasoning_details: [{ type: 'reasoning.summary', summary: 'Sum.', format: 'openai-responses-v1' }, { type: 'reasoning.encrypted', data: 'gAAA', format: 'openai-responses-v1' }] }, 'stop'),
      new ToolNames(),
    );
    expect(openaiSummary.content[0]).to.deep.equal({ type: 'thinking', thinking: 'Sum.', signature: '' });
    // Another vendor's encrypted reasoning is kept, opaque and clearly not an Anthropic block.
    const redacted = openaiSummary.content[1] as unknown as { type: string; data: string };
    expect(redacted.type).to.equal('redacted_thinking');
    expect(redacted.data.startsWith('junction.reasoning.v1:')).to.equal(true);
    expect(openaiSummary.content[2]).to.deep.include({ type: 'text', text: 'Hi' });
  });

  it('round-trips another vendor’s reasoning state through a Messages client unchanged (peers.md §2 #10)', () => {
    const gemini = [
      { type: 'reasoning.text', text: 'Thinking…', signature: 'gemini-thought-sig', format: 'google-gemini-v1', index: 0 },
      { type: 'reasoning.encrypted', data: 'opaque-state', format: 'google-gemini-v1', index: 1, id: 'r1' },
    ];
    const message = chatToMessage(
      completion({ role: 'assistant', content: null, reasoning_details: gemini, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, 'tool_calls'),
      new ToolNames(),
    );
    // The client sends the assistant turn back as it got it; the next Chat request carries the items as they were.
    const next = messagesToChatRequest(
      { max_tokens: 10, messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: message.content }] },
      { model: 'm', dialect: { ...DEFAULT_CHAT_DIALECT, reasoning: 'reasoning_details' }, maxOutputTokens: null },
    );
    const assistant = (next.body['messages'] as Json[])[1]!;
    expect(assistant['reasoning_details']).to.deep.equal(gemini);
    expect(assistant['tool_calls']).to.deep.equal([{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }]);
  });

  it('maps usage: input excludes cached tokens, cache reads and writes apart', () => {
    const message = chatToMessage(
      completion({ role: 'assistant', content: 'x' }, 'stop', { prompt_tokens: 100, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 60, cache_write_tokens: 10 } }),
      new ToolNames(),
    );
    expect(message.usage).to.deep.include({ input_tokens: 30, output_tokens: 7, cache_read_input_tokens: 60, cache_creation_input_tokens: 10 });
  });

  it('turns a refusal into text with stop_reason refusal', () => {
    const message = chatToMessage(completion({ role: 'assistant', content: null, refusal: 'I cannot help.' }, 'stop'), new ToolNames());
    expect(message.content).to.deep.equal([{ type: 'text', text: 'I cannot help.' }]);
    expect(message.stop_reason).to.equal('refusal');
  });

  it('restores shortened tool names', () => {
    const names = new ToolNames();
    const short = names.upstream('x'.repeat(80));
    const message = chatToMessage(completion({ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: short, arguments: '{}' } }] }, 'tool_calls'), names);
    expect(message.content[0]).to.deep.include({ name: 'x'.repeat(80) });
  });
});

describe('Chat stream → Messages events (protocol.md §D.8)', () => {
  it('turns the recorded tool stream into the worked example of §D.8', async () => {
    expect(await events(fixture('openai/tool-call.sse'))).to.deep.equal([
      START,
      PING,
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'call_7kE4IjtnwXcGbX6hDM7xFu8T', name: 'weather', input: {} } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: 'location' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '":"Florence, Italy"}' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { input_tokens: 61, output_tokens: 16, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } },
      { type: 'message_stop' },
    ]);
  });

  it('opens no block for a role-only first chunk, and carries text deltas in one block', async () => {
    expect(await events(fixture('openai/text.sse'))).to.deep.equal([
      START,
      PING,
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: '! How can I help?' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { input_tokens: 15, output_tokens: 7, cache_read_input_tokens: 4, cache_creation_input_tokens: 0 } },
      { type: 'message_stop' },
    ]);
  });

  it('turns OpenRouter reasoning into a signed thinking block before the tool call, ignoring its comment line', async () => {
    const out = await events(fixture('openai/openrouter-reasoning.sse'));
    expect(out.slice(2, 8)).to.deep.equal([
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'The user is asking for' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: ' the weather in Florence.' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'Eq0ECkgIDRAB' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_bdrk_01N8hD5cYDw4WfvnjKXAkA2W', name: 'weather', input: {} } },
    ]);
    // OpenRouter repeats finish_reason in its usage chunk: one message_delta, with the usage.
    const deltas = out.filter((e) => e['type'] === 'message_delta');
    expect(deltas).to.deep.equal([
      { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { input_tokens: 607, output_tokens: 143, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } },
    ]);
    expect(out.at(-1)).to.deep.equal({ type: 'message_stop' });
  });

  it('gives parallel tool calls one block each, in order: the first streams live, later ones come whole at the finish', async () => {
    const out = await events(
      chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '' } }] }) +
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"x":1}' } }] }) +
        chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'g', arguments: '{"y":' } }] }) +
        chunk({ tool_calls: [{ index: 1, function: { arguments: '2}' } }] }) +
        chunk({}, 'tool_calls') + usageChunk({ prompt_tokens: 1, completion_tokens: 2 }) + DONE,
    );
    expect(out.slice(2)).to.deep.equal([
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'call_a', name: 'f', input: {} } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"x":1}' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'call_b', name: 'g', input: {} } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"y":2}' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { input_tokens: 1, output_tokens: 2, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } },
      { type: 'message_stop' },
    ]);
  });

  it('never emits an empty block or delta, and an empty answer is still a valid stream (peers.md §2 #8)', async () => {
    const out = await events(chunk({ role: 'assistant', content: '' }) + chunk({ content: '' }) + chunk({}, 'stop') + usageChunk({ prompt_tokens: 3, completion_tokens: 0 }) + DONE);
    expect(out).to.deep.equal([
      START,
      PING,
      { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { input_tokens: 3, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } },
      { type: 'message_stop' },
    ]);
  });

  it('holds message_delta for the usage chunk and drops anything after it', async () => {
    const out = await events(chunk({ content: 'a' }) + chunk({}, 'length') + usageChunk({ prompt_tokens: 9, completion_tokens: 1 }) + chunk({ content: 'late' }) + DONE);
    expect(out.filter((e) => e['type'] === 'message_delta')).to.deep.equal([
      { type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { input_tokens: 9, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } },
    ]);
    expect(JSON.stringify(out)).not.to.include('late');
  });

  it('ends normally at [DONE] without a usage chunk, with the estimate as input', async () => {
    const out = await events(chunk({ content: 'a' }) + chunk({}, 'stop') + DONE);
    expect(out.at(-2)).to.deep.equal({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { input_tokens: 50, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } });
  });

  it('raises on an in-band error chunk, an OpenRouter error finish, and a stream cut before it finished', async () => {
    const failures: [string, RegExp][] = [
      [chunk({ content: 'a' }) + 'data: {"error":{"message":"Overloaded","code":529}}\n\n', /Overloaded/],
      [chunk({ content: 'a' }) + `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'error', error: { code: 502, message: 'Provider returned error' } }] })}\n\n`, /Provider returned error/],
      [chunk({ content: 'a' }), /ended the response early/],
      ['data: {not json\n\n', /not JSON/],
    ];
    for (const [sse, message] of failures) {
      const err = await events(sse).then(() => null, (e: unknown) => e);
      expect(err, sse).to.be.instanceOf(GatewayError);
      expect((err as Error).message).to.match(message);
    }
    const overloaded = await events(failures[0]![0]).catch((e: GatewayError) => e);
    expect(overloaded).to.include({ status: 529, type: 'overloaded_error' });
  });

  it('keeps interleaved arguments of parallel tool calls apart (§D.8 step 7)', async () => {
    const sse =
      chunk({ tool_calls: [{ index: 0, id: 'a', function: { name: 'f', arguments: '{"p":' } }] }) +
      chunk({ tool_calls: [{ index: 1, id: 'b', function: { name: 'g', arguments: '{"q":' } }] }) +
      chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }, { index: 1, function: { arguments: '2}' } }] }) +
      chunk({}, 'tool_calls') + DONE;
    const out = await events(sse);
    const inputs = new Map<number, string>();
    for (const e of out) {
      if (e['type'] === 'content_block_delta') {
        const index = e['index'] as number;
        inputs.set(index, (inputs.get(index) ?? '') + String((e['delta'] as Json)['partial_json']));
      }
    }
    expect([...inputs.values()].map((text) => JSON.parse(text))).to.deep.equal([{ p: 1 }, { q: 2 }]);
  });

  it('fails loudly when a tool’s arguments continue after other content followed them', async () => {
    const sse =
      chunk({ tool_calls: [{ index: 0, id: 'a', function: { name: 'f', arguments: '{' } }] }) +
      chunk({ content: 'text in between' }) +
      chunk({ tool_calls: [{ index: 0, function: { arguments: '}' } }] }) + chunk({}, 'tool_calls') + DONE;
    const err = await events(sse).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(GatewayError);
  });

  it('reads array content in deltas, as some servers stream it', async () => {
    const out = await events(chunk({ role: 'assistant', content: [{ type: 'text', text: 'Hello ' }] }) + chunk({ content: [{ type: 'text', text: 'there' }] }) + chunk({}, 'stop') + DONE);
    expect(out.filter((e) => e['type'] === 'content_block_delta').map((e) => (e['delta'] as Json)['text'])).to.deep.equal(['Hello ', 'there']);
  });

  it('opens a new tool block for a new id, with or without an index', async () => {
    for (const index of [undefined, 0]) {
      const call = (id: string, name: string, args: string) => ({ ...(index !== undefined && { index }), id, type: 'function', function: { name, arguments: args } });
      const out = await events(
        chunk({ role: 'assistant', tool_calls: [call('call_a', 'get_weather', '{"city":"Paris"}')] }) +
          chunk({ tool_calls: [call('call_b', 'get_time', '{"tz":"CET"}')] }) + chunk({}, 'tool_calls') + DONE,
      );
      const starts = out.filter((e) => e['type'] === 'content_block_start').map((e) => (e['content_block'] as Json)['id']);
      expect(starts, String(index)).to.deep.equal(['call_a', 'call_b']);
    }
  });

  it('does not take an empty finish_reason for a finish', async () => {
    const out = await events(chunk({ content: 'a' }, '') + chunk({ content: 'b' }, '') + chunk({}, 'stop') + DONE);
    expect(out.filter((e) => e['type'] === 'content_block_start')).to.have.length(1);
    const cut = await events(chunk({ content: 'a' }, '')).catch((e: unknown) => e);
    expect((cut as Error).message).to.include('ended the response early');
  });

  it('gives each reasoning item its own thinking block and signature, streamed or not', async () => {
    const F = 'anthropic-claude-v1';
    const streamed = await events(
      chunk({ reasoning_details: [{ type: 'reasoning.text', text: 'first', format: F, index: 0 }] }) +
        chunk({ reasoning_details: [{ type: 'reasoning.text', signature: 'SIG_0', format: F, index: 0 }] }) +
        chunk({ reasoning_details: [{ type: 'reasoning.text', text: 'second', format: F, index: 1 }] }) +
        chunk({ reasoning_details: [{ type: 'reasoning.text', signature: 'SIG_1', format: F, index: 1 }] }) +
        chunk({ content: 'ok' }, 'stop') + DONE,
    );
    const thinking = streamed.filter((e) => e['type'] === 'content_block_delta' && ['thinking_delta', 'signature_delta'].includes(String((e['delta'] as Json)['type'])));
    expect(thinking.map((e) => [e['index'], (e['delta'] as Json)['thinking'] ?? (e['delta'] as Json)['signature']])).to.deep.equal([
      [0, 'first'], [0, 'SIG_0'], [1, 'second'], [1, 'SIG_1'],
    ]);
    const whole = chatToMessage(
      { choices: [{ index: 0, finish_reason: 'stop', message: { content: 'ok', reasoning_details: [
        { type: 'reasoning.text', text: 'first', signature: 'SIG_0', format: F, index: 0 },
        { type: 'reasoning.text', text: 'second', signature: 'SIG_1', format: F, index: 1 },
      ] } }] },
      new ToolNames(),
    );
    expect(whole.content.slice(0, 2)).to.deep.equal([
      { type: 'thinking', thinking: 'first', signature: 'SIG_0' },
      { type: 'thinking', thinking: 'second', signature: 'SIG_1' },
    ]);
  });

  it('keeps a signature that comes with no thinking text, in a thinking block of its own', async () => {
    const item = { type: 'reasoning.text', signature: 'gemini-sig', format: 'google-gemini-v1', index: 0 };
    const whole = chatToMessage({ choices: [{ index: 0, finish_reason: 'stop', message: { content: 'ok', reasoning_details: [item] } }] }, new ToolNames());
    expect(whole.content[0]).to.deep.include({ type: 'thinking', thinking: '' });
    expect((whole.content[0] as { signature: string }).signature.startsWith('junction.reasoning.v1:')).to.equal(true);
    const streamed = await events(chunk({ tool_calls: [{ index: 0, id: 'c', function: { name: 'f', arguments: '{}' } }] }) + chunk({ reasoning_details: [item] }, 'tool_calls') + DONE);
    expect(streamed.some((e) => (e['delta'] as Json | undefined)?.['type'] === 'signature_delta')).to.equal(true);
  });

  it('does not finish early on a refusal when usage rides on every chunk', async () => {
    const withUsage = (delta: Json, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: 'c', choices: [{ index: 0, delta, finish_reason: finish }], usage: { prompt_tokens: 1, completion_tokens: 1 } })}\n\n`;
    const out = await events(withUsage({ refusal: "I'm sorry, " }) + withUsage({ refusal: 'I cannot.' }) + withUsage({}, 'stop') + DONE);
    const text = out.filter((e) => e['type'] === 'content_block_delta').map((e) => (e['delta'] as Json)['text']).join('');
    expect(text).to.equal("I'm sorry, I cannot.");
    expect(out.find((e) => e['type'] === 'message_delta')).to.deep.include({ delta: { stop_reason: 'refusal', stop_sequence: null } });
  });

  it('takes tool arguments sent as an object, and makes up unique ids for calls that have none', () => {
    const message = chatToMessage(
      { choices: [{ index: 0, finish_reason: 'tool_calls', message: { tool_calls: [
        { type: 'function', function: { name: 'f', arguments: { a: 1 } } },
        { type: 'function', function: { name: 'g', arguments: '{}' } },
      ] } }] },
      new ToolNames(),
    );
    const [first, second] = message.content as unknown as { id: string; input: unknown }[];
    expect(first!.input).to.deep.equal({ a: 1 });
    expect(first!.id).to.match(/^toolu_[0-9a-f]{24}$/);
    expect(first!.id).not.to.equal(second!.id);
  });
});
