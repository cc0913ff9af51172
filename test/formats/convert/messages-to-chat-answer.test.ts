import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { messageToChat } from '../../../src/formats/canonical/pairs.ts';
import { messagesEventsToChatChunks } from '../../../src/formats/canonical/pairs.ts';
import { messagesEventsFromSse } from '../../../src/formats/upstream-events.ts';
import { decodeSse } from '../../../src/sse/decode.ts';
import { GatewayError } from '../../../src/errors.ts';
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';

type Json = Record<string, unknown>;
const fixture = (path: string) => readFileSync(new URL(`../../fixtures/${path}`, import.meta.url));

async function* bytes(text: string | Buffer): AsyncGenerator<Uint8Array> {
  yield typeof text === 'string' ? Buffer.from(text) : text;
}

async function chunks(sse: string | Buffer, options: { includeUsage?: boolean; jsonTool?: string | null } = {}): Promise<Json[]> {
  const out: Json[] = [];
  const events = messagesEventsFromSse(decodeSse(bytes(sse), (e) => e as Error), 'up');
  for await (const c of messagesEventsToChatChunks(events, { id: 'chatcmpl-1', created: 7, includeUsage: options.includeUsage ?? false, jsonTool: options.jsonTool ?? null })) {
    out.push(c);
  }
  return out;
}
const deltas = (out: Json[]) => out.map((c) => ((c['choices'] as Json[])[0] ?? {})['delta']);
const frame = (event: Json) => `event: ${String(event['type'])}\ndata: ${JSON.stringify(event)}\n\n`;

describe('Message → Chat answer (protocol.md §D.4)', () => {
  it('joins text, turns tool_use into tool_calls with JSON arguments, thinking into reasoning, and maps usage', () => {
    const message = JSON.parse(fixture('anthropic/thinking-tool.json').toString()) as Json;
    expect(messageToChat(message, { jsonTool: null, created: 7 })).to.deep.equal({
      id: 'msg_01R8GdyyLQUhUfyjqSCMbnWg',
      object: 'chat.completion',
      created: 7,
      model: 'claude-sonnet-4-20250514',
      choices: [
        {
          index: 0,
          logprobs: null,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: "Okay, let's check the weather:",
            refusal: null,
            tool_calls: [{ id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', type: 'function', function: { name: 'weather', arguments: '{"location":"Florence, Italy"}' } }],
            reasoning: 'The user wants the weather in Florence. I should call the weather tool.',
            reasoning_details: [
              { type: 'reasoning.text', text: 'The user wants the weather in Florence. I should call the weather tool.', signature: 'Eq0EkLmNo', format: 'anthropic-claude-v1', index: 0 },
            ],
          },
        },
      ],
      // prompt = input 472 + cache read 100 + cache write 30 (protocol.md §D.6)
      usage: {
        prompt_tokens: 602,
        completion_tokens: 89,
        total_tokens: 691,
        prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 30 },
        completion_tokens_details: { reasoning_tokens: 0 },
      },
    });
  });

  it('maps stop_reason: end_turn and stop_sequence→stop, max_tokens→length, tool_use→tool_calls, refusal→content_filter', () => {
    const expected: Record<string, string> = {
      end_turn: 'stop', stop_sequence: 'stop', pause_turn: 'stop', max_tokens: 'length', model_context_window_exceeded: 'length', tool_use: 'tool_calls', refusal: 'content_filter',
    };
    for (const [stop, finish] of Object.entries(expected)) {
      const chat = messageToChat({ content: [{ type: 'text', text: 'x' }], stop_reason: stop, usage: {} }, { jsonTool: null, created: 0 });
      expect(chat.choices[0]?.finish_reason, stop).to.equal(finish);
    }
  });

  it('returns an emulated response_format answer as content with finish_reason stop', () => {
    const chat = messageToChat(
      { content: [{ type: 'tool_use', id: 't', name: 'json_response', input: { answer: 42 } }], stop_reason: 'tool_use', usage: {} },
      { jsonTool: 'json_response', created: 0 },
    );
    expect(chat.choices[0]?.message.content).to.equal('{"answer":42}');
    expect(chat.choices[0]?.message).not.to.have.property('tool_calls');
    expect(chat.choices[0]?.finish_reason).to.equal('stop');
  });
});

describe('Messages stream → Chat chunks (protocol.md §D.9)', () => {
  it('streams role first, then content, then the finish chunk; usage only when asked', async () => {
    const without = await chunks(fixture('anthropic/text.sse'));
    expect(deltas(without)).to.deep.equal([{ role: 'assistant', content: '' }, { content: 'Hello' }, { content: '!' }, {}]);
    expect((without.at(-1)!['choices'] as Json[])[0]).to.include({ finish_reason: 'stop' });
    expect(without.every((c) => !('usage' in c))).to.equal(true);

    const withUsage = await chunks(fixture('anthropic/text.sse'), { includeUsage: true });
    expect(withUsage.at(-1)).to.deep.include({
      choices: [],
      usage: { prompt_tokens: 25, completion_tokens: 15, total_tokens: 40, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } },
    });
    expect(withUsage.slice(0, -1).every((c) => c['usage'] === null)).to.equal(true);
    expect(withUsage[0]).to.include({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 7, model: 'claude-opus-4-1-20250805' });
  });

  it('streams tool calls with index, id and name first, then argument text only, never an empty fragment (peers.md §2 #6)', async () => {
    const out = deltas(await chunks(fixture('anthropic/thinking-tool.sse'), { includeUsage: true }));
    const toolDeltas = out.filter((d) => d && typeof d === 'object' && 'tool_calls' in d);
    expect(toolDeltas).to.deep.equal([
      { tool_calls: [{ index: 0, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', type: 'function', function: { name: 'weather', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"location": "Flor' } }] },
      { tool_calls: [{ index: 0, function: { arguments: 'ence, Italy"}' } }] },
    ]);
  });

  it('streams thinking as reasoning text, then every complete reasoning_details item once, before the finish', async () => {
    const out = deltas(await chunks(fixture('anthropic/thinking-tool.sse')));
    expect(out.slice(1, 3)).to.deep.equal([{ reasoning: 'The user wants the weather in Florence.' }, { reasoning: ' I should call the weather tool.' }]);
    const withDetails = out.filter((d) => d && typeof d === 'object' && 'reasoning_details' in d);
    expect(withDetails).to.deep.equal([
      {
        reasoning_details: [
          {
            type: 'reasoning.text',
            text: 'The user wants the weather in Florence. I should call the weather tool.',
            signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds',
            format: 'anthropic-claude-v1',
            index: 0,
          },
        ],
      },
    ]);
    expect(out.indexOf(withDetails[0])).to.equal(out.length - 2); // just before the finish chunk
  });

  it('keeps every reasoning item in the OpenAI SDK’s finalChatCompletion(), thinking and redacted alike', async () => {
    const sse = [
      { type: 'message_start', message: { id: 'm', model: 'c', usage: { input_tokens: 3 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'T1' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'S1' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'R1' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'content_block_start', index: 2, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'Hi' } },
      { type: 'content_block_stop', index: 2 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 5 } },
      { type: 'message_stop' },
    ].map(frame).join('');
    const out = await chunks(sse);
    // The SDK's own accumulator, fed the chunks as newline-delimited JSON (its readable-stream format).
    const body = out.map((c) => JSON.stringify(c)).join('\n');
    const stream = ChatCompletionStream.fromReadableStream(new Response(body).body!);
    const final = await stream.finalChatCompletion();
    expect((final.choices[0]!.message as unknown as Json)['reasoning_details']).to.deep.equal([
      { type: 'reasoning.text', text: 'T1', signature: 'S1', format: 'anthropic-claude-v1', index: 0 },
      { type: 'reasoning.encrypted', data: 'R1', format: 'anthropic-claude-v1', index: 1 },
    ]);
    expect(final.choices[0]!.message.content).to.equal('Hi');
  });

  it('passes on content a block start already carries', async () => {
    const sse = [
      { type: 'message_start', message: { id: 'm', model: 'c', usage: {} } },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: 'Pre' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 't', name: 'f', input: { a: 1 } } },
      { type: 'content_block_stop', index: 1 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 1 } },
      { type: 'message_stop' },
    ].map(frame).join('');
    expect(deltas(await chunks(sse))).to.deep.equal([
      { role: 'assistant', content: '' },
      { content: 'Pre' },
      { tool_calls: [{ index: 0, id: 't', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
      {},
    ]);
  });

  it('counts tool calls apart from other blocks (tool index 0 even at block index 2)', async () => {
    const out = deltas(await chunks(fixture('anthropic/thinking-tool.sse')));
    expect(JSON.stringify(out)).not.to.include('"index":2');
  });

  it('streams an emulated response_format answer as content', async () => {
    const sse = [
      { type: 'message_start', message: { id: 'm', model: 'c', usage: { input_tokens: 3, output_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't', name: 'json_response', input: {} } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"a":' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '1}' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 5 } },
      { type: 'message_stop' },
    ].map(frame).join('');
    const out = await chunks(sse, { jsonTool: 'json_response' });
    expect(deltas(out)).to.deep.equal([{ role: 'assistant', content: '' }, { content: '{"a":' }, { content: '1}' }, {}]);
    expect((out.at(-1)!['choices'] as Json[])[0]).to.include({ finish_reason: 'stop' });
  });

  it('raises on an in-band error event with its type, and on a stream cut before message_stop', async () => {
    const overloaded = frame({ type: 'message_start', message: { id: 'm', model: 'c', usage: {} } }) + 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
    const err = await chunks(overloaded).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(GatewayError);
    expect(err).to.include({ type: 'overloaded_error', status: 529 });
    const cut = fixture('anthropic/text.sse').toString().split('event: message_delta')[0]!;
    const truncated = await chunks(cut).catch((e: unknown) => e);
    expect((truncated as Error).message).to.include('ended the response early');
  });
});
