import Anthropic from '@anthropic-ai/sdk';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { z } from 'zod';
import type { RecordedRequest, Reply } from '../support/fake-upstream.ts';
import { call, CHAT_HEADERS, generationOf, KEYS, PROVIDER_KEYS, standardConfig, useUpstreamAndGateway } from '../support/gateway.ts';

/**
 * The Responses API by translation (issue #14; responses-api.md §7): Responses clients on Messages
 * and Chat upstreams, and Messages and Chat clients on a Responses-only upstream, through the
 * canonical form. Junction keeps what it translated, since those upstreams keep nothing.
 */

const fixture = (path: string): string => readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8');
const json = { 'content-type': 'application/json' };
const THINKING_TOOL_SSE = fixture('anthropic/thinking-tool.sse');
const THINKING_TOOL = fixture('anthropic/thinking-tool.json');
const TEXT = fixture('anthropic/text.json');
const TEXT_SSE = fixture('anthropic/text.sse');
const CHAT_TOOL_SSE = fixture('openai/tool-call.sse');
const CHAT_TEXT = fixture('openai/text.json');
const RESPONSES_ANSWER = fixture('openai/responses.json');
const RESPONSES_SSE = fixture('openai/responses.sse');

const config = (url: string): string =>
  standardConfig(
    url,
    `  - id: gpt-5r
    routes: [{ provider: openai-r, model: gpt-5-2025-08-07 }]
    pricing: { input: 1.25, output: 10 }
`,
  ).replace('  - { id: mock, plugin: mock }', `  - { id: mock, plugin: mock }\n  - { id: openai-r, plugin: openai, base_url: "${url}/r/v1", api_key: "${PROVIDER_KEYS.openai}", options: { formats: [responses] } }`);

const at = (path: string, reply: Reply) => (req: RecordedRequest): Reply | undefined => (req.url === path ? reply : undefined);
describe('responses, translated', () => {
  const env = useUpstreamAndGateway(config);
  let openai: OpenAI;
  before(() => {
    openai = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: KEYS.alice, maxRetries: 0 });
  });

  describe('a Responses client on a Messages upstream', () => {
    it('responses.create: instructions, tools and limits go up as Messages; the answer comes back as items with reasoning, text and a call', async () => {
      env.upstream.script(at('/v1/messages', { body: THINKING_TOOL, headers: json }));
      const { data: response, response: raw } = await openai.responses.create({
        model: 'claude-sonnet-4-6',
        instructions: 'Be brief.',
        input: 'Weather in Florence?',
        max_output_tokens: 3000,
        reasoning: { effort: 'low' },
        tools: [{ type: 'function', name: 'weather', parameters: { type: 'object', properties: { location: { type: 'string' } } }, strict: false }],
      }).withResponse();
      const sent = env.upstream.last().json();
      expect(sent).to.deep.include({ model: 'claude-sonnet-4-6-20260217', max_tokens: 3000, system: [{ type: 'text', text: 'Be brief.' }], thinking: { type: 'enabled', budget_tokens: 1024 } });
      expect(sent['messages']).to.deep.equal([{ role: 'user', content: [{ type: 'text', text: 'Weather in Florence?' }] }]);
      expect(sent['tools']).to.deep.equal([{ name: 'weather', input_schema: { type: 'object', properties: { location: { type: 'string' } } } }]);
      expect(env.upstream.last().headers['x-api-key']).to.equal(PROVIDER_KEYS.anthropic);
      expect(response.output.map((item) => item.type)).to.deep.equal(['reasoning', 'message', 'function_call']);
      const call = response.output[2];
      expect(call?.type === 'function_call' && call).to.deep.include({ call_id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'weather', arguments: '{"location":"Florence, Italy"}' });
      expect(response.output_text).to.equal("Okay, let's check the weather:");
      expect(response.usage).to.deep.include({ input_tokens: 602, output_tokens: 89 });
      expect(response.id).to.match(/^resp_/);
      const row = await generationOf(env.gw.url, raw.headers.get('x-request-id'));
      expect(row).to.deep.include({ endpoint: 'responses', route: 'translated' });
      expect(row.tokens).to.deep.include({ input: 472, cache_read: 100, cache_write: 30, output: 89 });
    });

    it('responses.stream: every event in order with gap-free sequence numbers; the strict accumulator builds the same answer', async () => {
      env.upstream.script(at('/v1/messages', { sse: THINKING_TOOL_SSE }));
      const stream = openai.responses.stream({ model: 'claude-sonnet-4-6', input: 'Weather in Florence?', tools: [{ type: 'function', name: 'weather', parameters: {}, strict: false }] });
      const events: { type: string; sequence_number: number }[] = [];
      stream.on('event', (event) => events.push(event));
      const final = await stream.finalResponse();
      expect(events.map((e) => e.sequence_number)).to.deep.equal(events.map((_, i) => i));
      expect(events[0]?.type).to.equal('response.created');
      expect(events.at(-1)?.type).to.equal('response.completed');
      expect(final.output.map((item) => item.type)).to.deep.equal(['reasoning', 'message', 'function_call']);
      const reasoning = final.output[0];
      expect(reasoning?.type === 'reasoning' && reasoning.summary[0]?.text).to.equal('The user wants the weather in Florence. I should call the weather tool.');
      const fc = final.output[2];
      expect(fc?.type === 'function_call' && JSON.parse(fc.arguments)).to.deep.equal({ location: 'Florence, Italy' });
      expect(final.usage?.input_tokens).to.be.greaterThan(0);
    });

    it('reasoning survives the round trip: the signed thinking comes back to Claude byte for byte, from encrypted_content', async () => {
      env.upstream.script(at('/v1/messages', { body: THINKING_TOOL, headers: json }));
      const first = await openai.responses.create({ model: 'claude-sonnet-4-6', input: 'Weather in Florence?', store: false, include: ['reasoning.encrypted_content'] });
      const reasoning = first.output.find((item) => item.type === 'reasoning');
      expect(reasoning?.type === 'reasoning' && reasoning.encrypted_content).to.be.a('string');
      const fc = first.output.find((item) => item.type === 'function_call');
      env.upstream.script(at('/v1/messages', { body: TEXT, headers: json }));
      await openai.responses.create({
        model: 'claude-sonnet-4-6',
        store: false,
        // Codex replays items without their ids.
        input: [
          { role: 'user', content: 'Weather in Florence?' },
          ...first.output.map((item) => ({ ...item, id: undefined }) as unknown as OpenAI.Responses.ResponseInputItem),
          { type: 'function_call_output', call_id: fc?.type === 'function_call' ? fc.call_id : '', output: '21 C' },
        ],
      });
      const messages = env.upstream.last().json()['messages'] as Record<string, unknown>[];
      expect(messages[1]?.['content']).to.deep.equal([
        { type: 'thinking', thinking: 'The user wants the weather in Florence. I should call the weather tool.', signature: 'Eq0EkLmNo' },
        { type: 'text', text: "Okay, let's check the weather:" },
        { type: 'tool_use', id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'weather', input: { location: 'Florence, Italy' } },
      ]);
      expect(messages[2]?.['content']).to.deep.equal([{ type: 'tool_result', tool_use_id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', content: '21 C' }]);
    });

    it('a freeform custom tool (Codex apply_patch) goes as a one-string function and its call comes back as custom_tool_call input', async () => {
      const patch = '*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch';
      const answer = JSON.parse(TEXT) as Record<string, unknown>;
      answer['content'] = [{ type: 'tool_use', id: 'toolu_patch', name: 'apply_patch', input: { input: patch } }];
      answer['stop_reason'] = 'tool_use';
      env.upstream.script(at('/v1/messages', { body: answer, headers: json }));
      const tools: OpenAI.Responses.Tool[] = [{ type: 'custom', name: 'apply_patch', description: 'Edit files.', format: { type: 'grammar', syntax: 'lark', definition: 'start: "*** Begin Patch"' } }];
      const response = await openai.responses.create({ model: 'claude-sonnet-4-6', input: 'Add a.txt', tools });
      const sentTool = (env.upstream.last().json()['tools'] as Record<string, unknown>[])[0];
      expect(sentTool).to.deep.include({ name: 'apply_patch' });
      expect(sentTool?.['description']).to.include('Edit files.').and.include('start: "*** Begin Patch"');
      expect(sentTool?.['input_schema']).to.have.nested.property('properties.input.type', 'string');
      expect(response.output[0]).to.deep.include({ type: 'custom_tool_call', call_id: 'toolu_patch', name: 'apply_patch', input: patch });
      env.upstream.script(at('/v1/messages', { body: TEXT, headers: json }));
      await openai.responses.create({
        model: 'claude-sonnet-4-6',
        tools,
        input: [{ role: 'user', content: 'Add a.txt' }, { type: 'custom_tool_call', call_id: 'toolu_patch', name: 'apply_patch', input: patch }, { type: 'custom_tool_call_output', call_id: 'toolu_patch', output: 'Done' }],
      });
      const messages = env.upstream.last().json()['messages'] as Record<string, unknown>[];
      expect(messages[1]?.['content']).to.deep.equal([{ type: 'tool_use', id: 'toolu_patch', name: 'apply_patch', input: { input: patch } }]);
      expect(messages[2]?.['content']).to.deep.equal([{ type: 'tool_result', tool_use_id: 'toolu_patch', content: 'Done' }]);
    });

    it('a namespace of the client\'s own tools (Codex\'s sub-agent tools) is offered flat and its calls come back namespaced', async () => {
      const answer = JSON.parse(TEXT) as Record<string, unknown>;
      answer['content'] = [{ type: 'tool_use', id: 'toolu_ns', name: 'agents__spawn', input: { task: 'x' } }];
      answer['stop_reason'] = 'tool_use';
      env.upstream.script(at('/v1/messages', { body: answer, headers: json }));
      const tools = [{ type: 'namespace', name: 'agents', description: 'Sub-agents.', tools: [{ type: 'function', name: 'spawn', parameters: { type: 'object', properties: { task: { type: 'string' } } }, strict: false }] }];
      const res = await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'claude-sonnet-4-6', input: 'Delegate.', tools } });
      expect((env.upstream.last().json()['tools'] as Record<string, unknown>[]).map((t) => t['name'])).to.deep.equal(['agents__spawn']);
      expect((res.json()['output'] as Record<string, unknown>[])[0]).to.deep.include({ type: 'function_call', name: 'spawn', namespace: 'agents', call_id: 'toolu_ns' });
      env.upstream.script(at('/v1/messages', { body: TEXT, headers: json }));
      const replay = [{ role: 'user', content: 'Delegate.' }, { type: 'function_call', call_id: 'toolu_ns', name: 'spawn', namespace: 'agents', arguments: '{"task":"x"}' }, { type: 'function_call_output', call_id: 'toolu_ns', output: 'ok' }];
      await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'claude-sonnet-4-6', input: replay, tools } });
      expect((env.upstream.last().json()['messages'] as Record<string, unknown>[])[1]?.['content']).to.deep.equal([{ type: 'tool_use', id: 'toolu_ns', name: 'agents__spawn', input: { task: 'x' } }]);
    });

    it('responses.parse with a zod schema: structured output through the forced tool, parsed', async () => {
      const answer = JSON.parse(TEXT) as Record<string, unknown>;
      answer['content'] = [{ type: 'tool_use', id: 'toolu_json', name: 'json_response', input: { city: 'Rome', celsius: 21 } }];
      answer['stop_reason'] = 'tool_use';
      env.upstream.script(at('/v1/messages', { body: answer, headers: json }));
      const { zodTextFormat } = await import('openai/helpers/zod');
      const parsed = await openai.responses.parse({ model: 'claude-sonnet-4-6', input: 'Weather?', text: { format: zodTextFormat(z.object({ city: z.string(), celsius: z.number() }), 'weather') } });
      expect(parsed.output_parsed).to.deep.equal({ city: 'Rome', celsius: 21 });
      expect(parsed.status).to.equal('completed');
      expect(env.upstream.last().json()['tool_choice']).to.deep.equal({ type: 'tool', name: 'json_response' });
    });

    it('a length stop is status incomplete with its reason', async () => {
      const answer = JSON.parse(TEXT) as Record<string, unknown>;
      answer['stop_reason'] = 'max_tokens';
      env.upstream.script(at('/v1/messages', { body: answer, headers: json }));
      const response = await openai.responses.create({ model: 'claude-sonnet-4-6', input: 'Say a lot', max_output_tokens: 5 });
      expect(response.status).to.equal('incomplete');
      expect(response.incomplete_details).to.deep.equal({ reason: 'max_output_tokens' });
    });

    it('images and files in the input become image and document blocks', async () => {
      env.upstream.script(at('/v1/messages', { body: TEXT, headers: json }));
      await openai.responses.create({
        model: 'claude-sonnet-4-6',
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'What are these?' },
              { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' },
              { type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' },
            ],
          },
        ],
      });
      expect((env.upstream.last().json()['messages'] as Record<string, unknown>[])[0]?.['content']).to.deep.equal([
        { type: 'text', text: 'What are these?' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
        { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }, title: 'a.pdf' },
      ]);
    });
  });

  describe('a Responses client on a Chat upstream', () => {
    it('streams a tool call: function_call item with the Chat call id, arguments streamed; usage billed', async () => {
      env.upstream.script(at('/v1/chat/completions', { sse: CHAT_TOOL_SSE }));
      const stream = openai.responses.stream({ model: 'gpt-4o', input: 'Weather?', tools: [{ type: 'function', name: 'get_weather', parameters: {}, strict: false }] });
      const final = await stream.finalResponse();
      const sent = env.upstream.last().json();
      expect(sent).to.deep.include({ model: 'gpt-4o-2024-08-06', stream: true, stream_options: { include_usage: true } });
      expect(sent['tools']).to.deep.equal([{ type: 'function', function: { name: 'get_weather', parameters: {}, strict: false } }]);
      const fc = final.output.find((item) => item.type === 'function_call');
      expect(fc?.type === 'function_call' && fc.call_id).to.match(/^call_/);
      expect(fc?.type === 'function_call' && JSON.parse(fc.arguments)).to.be.an('object');
      // Billed from the Chat upstream's own usage chunk.
      env.upstream.script(at('/v1/chat/completions', { sse: CHAT_TOOL_SSE }));
      const raw = await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'gpt-4o', input: 'Weather?', stream: true, store: false } });
      const row = await generationOf(env.gw.url, raw.headers.get('x-request-id'));
      expect(row).to.deep.include({ endpoint: 'responses', route: 'translated' });
      expect(row.tokens).to.deep.include({ input: 61, output: 16 });
    });

    it('a refusal streamed by a Chat upstream is a refusal part of a completed response, as in the whole answer', async () => {
      const chunk = (delta: Record<string, unknown>, finish: string | null = null) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      const refusalSse = `${chunk({ role: 'assistant', content: '' })}${chunk({ refusal: 'I can' })}${chunk({ refusal: 'not help.' })}${chunk({}, 'stop')}data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } })}\n\ndata: [DONE]\n\n`;
      env.upstream.script(at('/v1/chat/completions', { sse: refusalSse }));
      const final = await openai.responses.stream({ model: 'gpt-4o', input: 'Bad idea?' }).finalResponse();
      expect(final.status).to.equal('completed');
      const message = final.output[0];
      // (The SDK's finalResponse adds `parsed` to every part.)
      expect(message?.type === 'message' && message.content).to.have.length(1);
      expect(message?.type === 'message' && message.content[0]).to.deep.include({ type: 'refusal', refusal: 'I cannot help.' });
    });

    it('the Vercel AI SDK: generateText, streamText and a tool loop with store (item_reference resolved from Junction\'s store)', async () => {
      const provider = createOpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: KEYS.alice });
      const textAnswer = (text: string) => ({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } });
      env.upstream.script(at('/v1/chat/completions', { body: textAnswer('Olá!'), headers: json }));
      expect((await generateText({ model: provider.responses('gpt-4o'), prompt: 'Say hi' })).text).to.equal('Olá!');
      env.upstream.script(at('/v1/chat/completions', { sse: fixture('openai/text.sse') }));
      const streamed = streamText({ model: provider.responses('gpt-4o'), prompt: 'Say hi' });
      expect(await streamed.text).to.be.a('string').and.not.equal('');
      const callAnswer = { ...textAnswer(''), choices: [{ index: 0, message: { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'call_w1', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } }] }, finish_reason: 'tool_calls' }] };
      let turns = 0;
      env.upstream.script((req) => (req.url === '/v1/chat/completions' ? { body: ++turns === 1 ? callAnswer : textAnswer('21 C in Rome.'), headers: json } : undefined));
      // What the SDK itself sent Junction: its second request names the stored answer by reference.
      const sentByClient: Record<string, unknown>[] = [];
      const watched = createOpenAI({
        baseURL: `${env.gw.url}/v1`,
        apiKey: KEYS.alice,
        fetch: async (url, init) => {
          if (typeof init?.body === 'string') sentByClient.push(JSON.parse(init.body) as Record<string, unknown>);
          return fetch(url, init);
        },
      });
      const result = await generateText({
        model: watched.responses('gpt-4o'),
        prompt: 'Weather in Rome?',
        tools: { weather: tool({ description: 'weather', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => ({ city, celsius: 21 }) }) },
        stopWhen: stepCountIs(3),
      });
      expect(result.text).to.equal('21 C in Rome.');
      expect((sentByClient[1]?.['input'] as Record<string, unknown>[]).map((item) => item['type'])).to.include('item_reference');
      const second = env.upstream.last().json()['messages'] as Record<string, unknown>[];
      // The SDK sent the assistant's text as an item_reference: Junction put the stored item back.
      expect(second.map((m) => m['role'])).to.deep.equal(['user', 'assistant', 'tool']);
      expect(second[1]).to.deep.include({ content: 'Checking.' });
      expect(second[2]).to.deep.include({ tool_call_id: 'call_w1' });
    });
  });

  describe('state Junction keeps for translated routes', () => {
    it('previous_response_id replays the stored conversation; GET, input_items and DELETE answer from Junction\'s store; another key gets 404', async () => {
      env.upstream.script(at('/v1/messages', { body: TEXT, headers: json }));
      const first = await openai.responses.create({ model: 'claude-sonnet-4-6', input: 'My name is Ada.' });
      env.upstream.script(at('/v1/messages', { body: TEXT, headers: json }));
      const second = await openai.responses.create({ model: 'claude-sonnet-4-6', input: 'What is my name?', previous_response_id: first.id });
      expect(second.previous_response_id).to.equal(first.id);
      const messages = env.upstream.last().json()['messages'] as Record<string, unknown>[];
      expect(messages.map((m) => m['role'])).to.deep.equal(['user', 'assistant', 'user']);
      expect(messages[0]?.['content']).to.deep.equal([{ type: 'text', text: 'My name is Ada.' }]);
      env.upstream.reset();
      const got = await openai.responses.retrieve(second.id);
      expect(got.output_text).to.equal(second.output_text);
      const items = await call(`${env.gw.url}/v1/responses/${second.id}/input_items?order=asc`, { headers: CHAT_HEADERS });
      expect((items.json()['data'] as Record<string, unknown>[]).map((i) => i['role'] ?? i['type'])).to.deep.equal(['user', 'assistant', 'user']);
      const bob = await call(`${env.gw.url}/v1/responses/${second.id}`, { headers: { authorization: `Bearer ${KEYS.restricted}` } });
      expect(bob.status).to.equal(404);
      const page = (await call(`${env.gw.url}/v1/responses/${second.id}/input_items?order=asc&limit=2`, { headers: CHAT_HEADERS })).json();
      expect(page).to.deep.include({ has_more: true });
      const rest = (await call(`${env.gw.url}/v1/responses/${second.id}/input_items?order=asc&limit=2&after=${String(page['last_id'])}`, { headers: CHAT_HEADERS })).json();
      expect(rest).to.deep.include({ has_more: false });
      expect(rest['data']).to.have.length(1);
      const deleted = await call(`${env.gw.url}/v1/responses/${second.id}`, { method: 'DELETE', headers: CHAT_HEADERS });
      expect(deleted.json()).to.deep.equal({ id: second.id, object: 'response.deleted', deleted: true });
      expect((await call(`${env.gw.url}/v1/responses/${second.id}`, { headers: CHAT_HEADERS })).status).to.equal(404);
      expect(env.upstream.requests).to.have.length(0);
      // The first response's items still belong to it: deleting the continuation took none of them.
      const firstMessage = first.output.find((item) => item.type === 'message');
      env.upstream.script(at('/v1/messages', { body: TEXT, headers: json }));
      const again = await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'claude-sonnet-4-6', store: false, input: [{ id: firstMessage?.id }, { role: 'user', content: 'Again?' }] } });
      expect(again.status, again.text).to.equal(200);
      // An untyped reference (the SDK's type allows it) was put back as the stored message.
      expect((env.upstream.last().json()['messages'] as Record<string, unknown>[])[0]).to.deep.include({ role: 'assistant' });
    });

    it('an id one key writes into its input cannot take over another key\'s stored item', async () => {
      env.upstream.script(at('/v1/messages', { body: TEXT, headers: json }));
      const mine = await openai.responses.create({ model: 'claude-sonnet-4-6', input: 'Mine.' });
      const itemId = mine.output.find((item) => item.type === 'message')?.id ?? '';
      env.upstream.script(at('/v1/messages', { body: TEXT, headers: json }));
      const other = await call(`${env.gw.url}/v1/responses`, { headers: { authorization: `Bearer ${KEYS.restricted}` }, body: { model: 'gpt-4o', input: [{ type: 'message', id: itemId, role: 'user', content: 'hijack' }] } });
      expect(other.status, other.text).to.equal(200);
      env.upstream.script(at('/v1/messages', { body: TEXT, headers: json }));
      const res = await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'claude-sonnet-4-6', input: [{ type: 'item_reference', id: itemId }, { role: 'user', content: 'And?' }] } });
      expect(res.status, res.text).to.equal(200);
    });

    it('input_tokens of a continuation counts the conversation Junction replays, not only the bytes sent (issue #17)', async () => {
      env.upstream.script(at('/v1/chat/completions', { body: CHAT_TEXT, headers: json }));
      const first = await openai.responses.create({ model: 'gpt-4o', instructions: 'Be brief.', input: 'My name is Ada, and this sentence makes the first turn long enough to count.' });
      const count = async (body: Record<string, unknown>): Promise<number> => {
        const res = await call(`${env.gw.url}/v1/responses/input_tokens`, { headers: CHAT_HEADERS, body: { model: 'gpt-4o', ...body } });
        expect(res.headers.get('x-junction-estimate'), res.text).to.equal('true');
        return res.json()['input_tokens'] as number;
      };
      const alone = await count({ input: 'What is my name?' });
      const continued = await count({ input: 'What is my name?', previous_response_id: first.id });
      const firstMessage = first.output.find((item) => item.type === 'message');
      const replayed = await count({ input: [{ type: 'item_reference', id: firstMessage?.id }, { role: 'user', content: 'What is my name?' }] });
      expect(continued).to.be.greaterThan(alone + 10);
      expect(replayed).to.be.greaterThan(alone);
      expect(env.upstream.requests.filter((r) => r.url.includes('input_tokens'))).to.have.length(0);
    });

    it('an upstream that ends its stream after saying all of it, without its end marker: one terminal event, response kept', async () => {
      env.upstream.script(at('/v1/messages', { sse: TEXT_SSE.slice(0, TEXT_SSE.indexOf('event: message_stop')), resetAfterEvents: 100 }));
      const raw = await call(`${env.gw.url}/v1/responses`, { headers: CHAT_HEADERS, body: { model: 'claude-sonnet-4-6', input: 'Hi', stream: true } });
      const frames = raw.text.trimEnd().split('\n\n');
      expect(frames.at(-1)).to.match(/^event: response\.completed\n/);
      expect(raw.text).to.not.include('response.failed');
    });

    it('a streamed translated response is kept too; store: false keeps nothing', async () => {
      env.upstream.script(at('/v1/messages', { sse: TEXT_SSE }));
      const final = await openai.responses.stream({ model: 'claude-sonnet-4-6', input: 'Hi' }).finalResponse();
      expect((await openai.responses.retrieve(final.id)).id).to.equal(final.id);
      env.upstream.script(at('/v1/messages', { body: TEXT, headers: json }));
      const unstored = await openai.responses.create({ model: 'claude-sonnet-4-6', input: 'Hi', store: false });
      expect((await call(`${env.gw.url}/v1/responses/${unstored.id}`, { headers: CHAT_HEADERS })).status).to.equal(404);
    });
  });

  describe('Messages and Chat clients on a Responses-only upstream', () => {
    it('the Anthropic SDK: the request goes up as Responses (instructions, store false, encrypted reasoning asked back); the answer comes back as a Message', async () => {
      env.upstream.script(at('/r/v1/responses', { body: RESPONSES_ANSWER, headers: json }));
      const anthropic = new Anthropic({ baseURL: env.gw.url, apiKey: KEYS.alice, maxRetries: 0 });
      const message = await anthropic.messages.create({ model: 'gpt-5r', max_tokens: 500, system: 'Be brief.', messages: [{ role: 'user', content: 'Say hi in Portuguese' }] });
      const sent = env.upstream.last().json();
      expect(sent).to.deep.include({ model: 'gpt-5-2025-08-07', instructions: 'Be brief.', max_output_tokens: 500, store: false, include: ['reasoning.encrypted_content'] });
      expect(sent['input']).to.deep.equal([{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Say hi in Portuguese' }] }]);
      expect(env.upstream.last().headers['authorization']).to.equal(`Bearer ${PROVIDER_KEYS.openai}`);
      expect(message.content.find((b) => b.type === 'text')).to.deep.include({ text: 'Olá!' });
      expect(message.usage).to.deep.include({ output_tokens: 86 });
    });

    it('the Anthropic SDK streams it (Claude Code\'s way): message_start first, text deltas, message_stop', async () => {
      env.upstream.script(at('/r/v1/responses', { sse: RESPONSES_SSE }));
      const anthropic = new Anthropic({ baseURL: env.gw.url, apiKey: KEYS.alice, maxRetries: 0 });
      const stream = anthropic.messages.stream({ model: 'gpt-5r', max_tokens: 500, messages: [{ role: 'user', content: 'Say hi' }] });
      const final = await stream.finalMessage();
      expect(final.content.filter((b) => b.type === 'text').map((b) => (b.type === 'text' ? b.text : '')).join('')).to.equal('Olá!');
      expect(final.usage.output_tokens).to.equal(86);
      expect(env.upstream.last().json()).to.deep.include({ stream: true });
    });

    it('the real Claude Code request (76 KB, 24 tools, thinking) reaches a Responses-only model whole', async () => {
      const claudeCode = JSON.parse(fixture('claude-code/claude-code-request.json')) as Record<string, unknown>;
      env.upstream.script(at('/r/v1/responses', { sse: RESPONSES_SSE }));
      const res = await call(`${env.gw.url}/v1/messages`, {
        headers: { 'x-api-key': KEYS.alice, 'anthropic-version': '2023-06-01' },
        body: { ...claudeCode, model: 'gpt-5r', stream: true },
      });
      expect(res.status).to.equal(200);
      expect(res.text.trimEnd().split('\n\n').at(-1)).to.match(/^event: message_stop\n/);
      const sent = env.upstream.last().json();
      const tools = sent['tools'] as Record<string, unknown>[];
      expect(tools).to.have.length((claudeCode['tools'] as unknown[]).length);
      expect(tools.every((t) => t['type'] === 'function' && t['strict'] === false)).to.equal(true);
      const system = (claudeCode['system'] as { text: string }[]).map((b) => b.text).join('\n\n');
      expect(sent['instructions']).to.be.a('string').and.satisfy((text: string) => text.startsWith(system));
      expect(sent).to.deep.include({ store: false, stream: true });
      // Claude Code's user id is about 150 characters; OpenAI takes 64 (hashed, stable per user).
      expect(String(sent['safety_identifier'])).to.have.length.at.most(64);
      if (claudeCode['thinking'] !== undefined) expect(sent['reasoning']).to.have.property('summary', 'auto');
      const input = sent['input'] as Record<string, unknown>[];
      expect(input.every((item) => ['message', 'function_call', 'function_call_output', 'reasoning'].includes(String(item['type'])))).to.equal(true);
    });

    it('the openai SDK\'s Chat client: a tool loop through the Responses upstream keeps the call id', async () => {
      const callAnswer = RESPONSES_ANSWER.replace(/"output":\[.*\],"parallel_tool_calls"/, '"output":[{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_r1","name":"weather","arguments":"{\\"city\\":\\"Rome\\"}"}],"parallel_tool_calls"');
      env.upstream.script(at('/r/v1/responses', { body: callAnswer, headers: json }));
      const tools: OpenAI.Chat.ChatCompletionTool[] = [{ type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
      const first = await openai.chat.completions.create({ model: 'gpt-5r', messages: [{ role: 'user', content: 'Weather?' }], tools });
      expect(first.choices[0]?.finish_reason).to.equal('tool_calls');
      const toolCall = first.choices[0]?.message.tool_calls?.[0];
      expect(toolCall).to.deep.include({ id: 'call_r1' });
      env.upstream.script(at('/r/v1/responses', { body: RESPONSES_ANSWER, headers: json }));
      await openai.chat.completions.create({ model: 'gpt-5r', tools, messages: [{ role: 'user', content: 'Weather?' }, first.choices[0]!.message, { role: 'tool', tool_call_id: 'call_r1', content: '21 C' }] });
      const input = env.upstream.last().json()['input'] as Record<string, unknown>[];
      expect(input.slice(1)).to.deep.equal([
        { type: 'function_call', call_id: 'call_r1', name: 'weather', arguments: '{"city":"Rome"}' },
        { type: 'function_call_output', call_id: 'call_r1', output: '21 C' },
      ]);
    });

    it('stop sequences, which the Responses API has not: a 400 naming the client\'s field, nothing sent', async () => {
      env.upstream.reset();
      const res = await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model: 'gpt-5r', messages: [{ role: 'user', content: 'x' }], stop: ['END'] } });
      expect(res.status).to.equal(400);
      expect(res.json()).to.have.nested.property('error.param', 'stop');
      expect(env.upstream.requests).to.have.length(0);
    });
  });
});
