import { expect } from 'chai';
import OpenAI from 'openai';
import { FIXTURES } from '../support/fake-upstream.ts';
import { call, CHAT_HEADERS, MESSAGES_HEADERS, translationConfig, useSdkClients, useUpstreamAndGateway } from '../support/gateway.ts';

/**
 * Every pitfall users filed against peer gateways (../shared/reference/peers.md §2), each as a test
 * of Junction's behaviour in the same situation.
 */
type Json = Record<string, unknown>;
const chunk = (delta: Json, finish: string | null = null, extra: Json = {}) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish, ...extra }] })}\n\n`;
const usage = (prompt: number, completion: number) => `data: ${JSON.stringify({ id: 'c', choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion } })}\n\n`;
const DONE = 'data: [DONE]\n\n';
const WEATHER = { name: 'weather', input_schema: { type: 'object' as const, properties: { location: { type: 'string' } } } };

/** SSE text → [{event, data}] with data parsed. */
function events(text: string): { event: string | undefined; data: Json }[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '' && !block.startsWith(':'))
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1] ?? '';
      return { event, data: data === '[DONE]' ? { done: true } : (JSON.parse(data) as Json) };
    });
}

/** Checks the Messages stream grammar of protocol.md §A.8 / §D.8 invariants. */
function expectValidMessagesStream(list: { event: string | undefined; data: Json }[]): void {
  expect(list[0]?.event).to.equal('message_start');
  expect(list.at(-1)?.event).to.equal('message_stop');
  let open: number | null = null;
  let next = 0;
  for (const { event, data } of list) {
    expect(data['type'], 'event name equals data.type').to.equal(event);
    if (event === 'content_block_start') {
      expect(open, 'blocks never overlap').to.equal(null);
      expect(data['index'], 'indices count up from 0').to.equal(next++);
      open = data['index'] as number;
    } else if (event === 'content_block_delta') {
      expect(data['index'], 'deltas go to the open block').to.equal(open);
    } else if (event === 'content_block_stop') {
      expect(data['index']).to.equal(open);
      open = null;
    } else if (event === 'message_delta') {
      expect(open, 'every block is closed before message_delta').to.equal(null);
    }
  }
}

describe('peer gateway pitfalls (peers.md §2)', () => {
  const env = useUpstreamAndGateway(translationConfig);
  const sdk = useSdkClients(env);
  const messagesStream = async (model: string, extra: Json = {}) => {
    const res = await call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: { model, max_tokens: 1000, stream: true, messages: [{ role: 'user', content: 'x' }], ...extra } });
    return events(res.text);
  };
  const chatStream = async (model: string, extra: Json = {}) => {
    const res = await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model, stream: true, messages: [{ role: 'user', content: 'x' }], ...extra } });
    return { text: res.text, list: events(res.text) };
  };

  describe('tool use in translated streams', () => {
    it('#1 litellm#25836: tool arguments arrive as input_json_delta, not lost after an empty tool_use start', async () => {
      const list = await messagesStream('gpt-4o', { tools: [WEATHER] });
      expectValidMessagesStream(list);
      const json = list.filter((e) => (e.data['delta'] as Json | undefined)?.['type'] === 'input_json_delta').map((e) => (e.data['delta'] as Json)['partial_json']);
      expect(JSON.parse(json.join(''))).to.deep.equal({ location: 'Florence, Italy' });
    });

    it('#2 litellm#29491: a custom OpenAI-compatible provider under Claude Code keeps tool arguments', async () => {
      env.upstream.script(() => ({ sse: FIXTURES.openaiToolSse() }));
      const message = await sdk.anthropic.messages
        .stream({ model: 'ds-chat', max_tokens: 100, tools: [WEATHER], messages: [{ role: 'user', content: 'x' }] }, { headers: { 'anthropic-beta': 'claude-code-20250219', 'x-app': 'cli' } })
        .finalMessage();
      expect(message.content[0]).to.deep.include({ type: 'tool_use', input: { location: 'Florence, Italy' } });
    });

    it('#3 litellm#13373: text then a tool call streams without "Content block not found"', async () => {
      env.upstream.script(() => ({
        sse: chunk({ role: 'assistant', content: 'Let me check.' }) + chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"location":"Rome"}' } }] }) + chunk({}, 'tool_calls') + usage(5, 5) + DONE,
      }));
      const stream = sdk.anthropic.messages.stream({ model: 'gpt-4o', max_tokens: 100, tools: [WEATHER], messages: [{ role: 'user', content: 'x' }] });
      const message = await stream.finalMessage();
      expect(message.content.map((b) => b.type)).to.deep.equal(['text', 'tool_use']);
    });

    it('#4 bifrost PR #3441: every parallel tool call, indices from 0 in a tool-only stream, all closed, ids made valid', async () => {
      env.upstream.script(() => ({
        sse:
          chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'functions.weather:0', type: 'function', function: { name: 'weather', arguments: '{"location":"A"}' } }] }) +
          chunk({ tool_calls: [{ index: 1, id: 'functions.weather:1', type: 'function', function: { name: 'weather', arguments: '{"location":"B"}' } }] }) +
          chunk({}, 'tool_calls') + usage(1, 1) + DONE,
      }));
      const list = await messagesStream('gpt-4o', { tools: [WEATHER] });
      expectValidMessagesStream(list);
      const starts = list.filter((e) => e.event === 'content_block_start').map((e) => e.data['content_block'] as Json);
      expect(starts.map((b) => [b['id'], b['name']])).to.deep.equal([['functions_weather_0', 'weather'], ['functions_weather_1', 'weather']]);
    });

    it('#5 bifrost#2048: tool input deltas are passed on as they arrive, not buffered to the end', async () => {
      env.upstream.script(() => ({ sse: FIXTURES.openaiToolSse(), eventDelayMs: 150 }));
      const res = await fetch(`${env.gw.url}/v1/messages`, {
        method: 'POST',
        headers: { ...MESSAGES_HEADERS, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o', max_tokens: 100, stream: true, tools: [WEATHER], messages: [{ role: 'user', content: 'x' }] }),
      });
      const reader = res.body!.getReader();
      const start = performance.now();
      let text = '';
      let firstDeltaAt = 0;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += Buffer.from(value).toString();
        if (!firstDeltaAt && text.includes('input_json_delta')) firstDeltaAt = performance.now() - start;
      }
      const total = performance.now() - start;
      // Six upstream events 150 ms apart: the first argument fragment must not wait for the last.
      expect(firstDeltaAt).to.be.greaterThan(0);
      expect(total - firstDeltaAt).to.be.greaterThan(300);
    });

    it('#6 bifrost#3443: continuation tool chunks carry only index and argument text, never an empty fragment', async () => {
      const { list } = await chatStream('claude-sonnet-4-6', { tools: [{ type: 'function', function: { name: 'weather' } }] });
      const toolDeltas = list.map((e) => ((e.data['choices'] as Json[] | undefined)?.[0]?.['delta'] as Json | undefined)?.['tool_calls'] as Json[] | undefined).filter((t) => t !== undefined);
      const [first, ...rest] = toolDeltas.map((t) => t[0]!);
      expect(first).to.include({ index: 0, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', type: 'function' });
      expect(rest.length).to.be.greaterThan(0);
      for (const continuation of rest) {
        expect(Object.keys(continuation).sort()).to.deep.equal(['function', 'index']);
        expect(Object.keys(continuation['function'] as Json)).to.deep.equal(['arguments']);
        expect((continuation['function'] as Json)['arguments']).to.not.equal('');
      }
    });

    it('#7 bifrost PR #1354: arguments that arrive all at the end, or never, still make a valid tool_use', async () => {
      env.upstream.script(() => ({
        sse:
          chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'weather', arguments: '' } }] }) +
          chunk({ tool_calls: [{ index: 1, id: 'c2', type: 'function', function: { name: 'noargs', arguments: '' } }] }) +
          chunk({}, 'tool_calls') + usage(1, 1) + DONE,
      }));
      const message = await sdk.anthropic.messages.stream({ model: 'gpt-4o', max_tokens: 100, tools: [WEATHER], messages: [{ role: 'user', content: 'x' }] }).finalMessage();
      expect(message.content).to.deep.equal([
        { type: 'tool_use', id: 'c1', name: 'weather', input: {} },
        { type: 'tool_use', id: 'c2', name: 'noargs', input: {} },
      ]);
      env.upstream.script(() => ({
        sse: chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"location":"Oslo"}' } }] }, 'tool_calls') + usage(1, 1) + DONE,
      }));
      const late = await sdk.anthropic.messages.stream({ model: 'gpt-4o', max_tokens: 100, tools: [WEATHER], messages: [{ role: 'user', content: 'x' }] }).finalMessage();
      expect(late.content[0]).to.deep.include({ input: { location: 'Oslo' } });
    });

    it('#8 claude-code-router#212/#639: an empty answer is a valid, empty message (no empty text block)', async () => {
      env.upstream.script(() => ({ sse: chunk({ role: 'assistant', content: '' }) + chunk({}, 'stop') + usage(3, 0) + DONE }));
      const message = await sdk.anthropic.messages.stream({ model: 'gpt-4o', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] }).finalMessage();
      expect(message.content).to.deep.equal([]);
      expect(message.stop_reason).to.equal('end_turn');
    });
  });

  describe('thinking and reasoning continuity', () => {
    it('#9 litellm#9255: reasoning without a signature gets none invented, and none is sent back', async () => {
      env.upstream.script(() => ({ sse: chunk({ role: 'assistant', reasoning: 'Hmm.' }) + chunk({ content: 'Hi' }, 'stop') + usage(1, 1) + DONE }));
      const message = await sdk.anthropic.messages.stream({ model: 'or-claude', max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'x' }] }).finalMessage();
      expect(message.content[0]).to.deep.equal({ type: 'thinking', thinking: 'Hmm.', signature: '' });
      env.upstream.script(undefined);
      await sdk.anthropic.messages.create({ model: 'or-claude', max_tokens: 10, messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: message.content }, { role: 'user', content: 'y' }] });
      const replayed = (env.upstream.last().json()['messages'] as Json[])[1]!;
      expect(replayed['reasoning_details']).to.deep.equal([{ type: 'reasoning.text', text: 'Hmm.', format: 'anthropic-claude-v1', index: 0 }]);
    });

    it('#10 claude-code-router#1057/#1081: Gemini reasoning_details survive the round trip through an Anthropic client', async () => {
      const details = [
        { type: 'reasoning.text', text: 'Considering.', signature: 'gemini-sig', format: 'google-gemini-v1', index: 0 },
        { type: 'reasoning.encrypted', data: 'gemini-state', format: 'google-gemini-v1', index: 1 },
      ];
      env.upstream.script(() => ({
        sse: chunk({ role: 'assistant', reasoning: 'Considering.', reasoning_details: details }) + chunk({ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'weather', arguments: '{}' } }] }, 'tool_calls') + usage(1, 1) + DONE,
      }));
      const first = await sdk.anthropic.messages.stream({ model: 'or-claude', max_tokens: 4000, tools: [WEATHER], messages: [{ role: 'user', content: 'x' }] }).finalMessage();
      env.upstream.script(undefined);
      await sdk.anthropic.messages.create({
        model: 'or-claude',
        max_tokens: 100,
        tools: [WEATHER],
        messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'ok' }] }],
      });
      expect((env.upstream.last().json()['messages'] as Json[])[1]!['reasoning_details']).to.deep.equal(details);
    });

    it('#11 claude-code-router#1050/#1249: DeepSeek gets reasoning_content back on assistant turns with tools', async () => {
      env.upstream.script(() => ({
        sse: chunk({ role: 'assistant', reasoning_content: 'I need the weather.' }) + chunk({ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'weather', arguments: '{}' } }] }, 'tool_calls') + usage(1, 1) + DONE,
      }));
      const first = await sdk.anthropic.messages.stream({ model: 'ds-chat', max_tokens: 4000, tools: [WEATHER], messages: [{ role: 'user', content: 'x' }] }).finalMessage();
      env.upstream.script(undefined);
      await sdk.anthropic.messages.create({
        model: 'ds-chat',
        max_tokens: 100,
        tools: [WEATHER],
        messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'ok' }] }],
      });
      expect((env.upstream.last().json()['messages'] as Json[])[1]).to.deep.include({ reasoning_content: 'I need the weather.' });
    });

    it('#12 bifrost#2446: a vLLM thinking stream keeps every delta in a block of its own kind', async () => {
      env.upstream.script(() => ({
        sse: chunk({ role: 'assistant', reasoning_content: 'Step 1.' }) + chunk({ reasoning_content: ' Step 2.' }) + chunk({ content: 'Answer' }) + chunk({ reasoning_content: 'Afterthought.' }) + chunk({}, 'stop') + usage(1, 1) + DONE,
      }));
      const list = await messagesStream('ds-chat');
      expectValidMessagesStream(list);
      const kinds = new Map<number, string>();
      for (const { event, data } of list) {
        if (event === 'content_block_start') kinds.set(data['index'] as number, (data['content_block'] as Json)['type'] as string);
        if (event === 'content_block_delta') {
          const type = (data['delta'] as Json)['type'];
          expect(kinds.get(data['index'] as number)).to.equal(type === 'thinking_delta' ? 'thinking' : 'text');
        }
      }
      expect([...kinds.values()]).to.deep.equal(['thinking', 'text', 'thinking']);
    });

    it('#13 bifrost#6342: replayed thinking blocks reach Claude unchanged, natively and from Chat clients', async () => {
      const thinking = { type: 'thinking', thinking: 'Exact text — with ünïcode.', signature: 'SIG/+=' };
      const body = `{"model":"claude-same","max_tokens":10,"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[${JSON.stringify(thinking)},{"type":"text","text":"a"}]},{"role":"user","content":"y"}]}`;
      await call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body });
      expect(env.upstream.last().body.toString()).to.equal(body);
      await sdk.openai.chat.completions.create({
        model: 'claude-sonnet-4-6',
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: 'a', reasoning_details: [{ type: 'reasoning.text', text: thinking.thinking, signature: thinking.signature, format: 'anthropic-claude-v1', index: 0 }] } as unknown as OpenAI.ChatCompletionAssistantMessageParam,
          { role: 'user', content: 'y' },
        ],
      });
      expect(((env.upstream.last().json()['messages'] as Json[])[1]!['content'] as Json[])[0]).to.deep.equal(thinking);
    });

    it('#14 claude-code-hub#518: reasoning from non-Anthropic channels never carries an Anthropic-looking signature', async () => {
      env.upstream.script(() => ({
        sse: chunk({ role: 'assistant', reasoning_details: [{ type: 'reasoning.text', text: 'T', signature: 'sig', format: 'openai-responses-v1', index: 0 }] }) + chunk({ content: 'Hi' }, 'stop') + usage(1, 1) + DONE,
      }));
      const message = await sdk.anthropic.messages.stream({ model: 'or-claude', max_tokens: 4000, messages: [{ role: 'user', content: 'x' }] }).finalMessage();
      const signature = (message.content[0] as { signature: string }).signature;
      expect(signature.startsWith('junction.reasoning.v1:')).to.equal(true);
    });
  });

  describe('Claude Code specifics', () => {
    it('#15 litellm#13252: count_tokens?beta=true answers on native and translated routes', async () => {
      for (const model of ['claude-same', 'gpt-4o']) {
        const res = await call(`${env.gw.url}/v1/messages/count_tokens?beta=true`, { headers: MESSAGES_HEADERS, body: { model, messages: [{ role: 'user', content: 'hello' }] } });
        expect(res.status, model).to.equal(200);
        expect(res.json()['input_tokens']).to.be.a('number');
      }
    });

    it('#16 litellm#9016/#21471: anthropic-beta reaches native upstreams', async () => {
      await call(`${env.gw.url}/v1/messages`, { headers: { ...MESSAGES_HEADERS, 'anthropic-beta': 'context-1m-2025-08-07,advanced-tool-use-2025-11-20' }, body: { model: 'claude-same', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] } });
      expect(env.upstream.last().headers['anthropic-beta']).to.equal('context-1m-2025-08-07,advanced-tool-use-2025-11-20');
    });

    it('#17 litellm PR #38790: cache_control ttl never reaches Chat upstreams', async () => {
      const request = {
        model: 'or-claude',
        max_tokens: 10,
        system: [{ type: 'text', text: 'sys', cache_control: { type: 'ephemeral', ttl: '1h' } }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'x', cache_control: { type: 'ephemeral', ttl: '1h' } }] }],
      };
      await call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: request });
      const sent = JSON.stringify(env.upstream.last().json());
      expect(sent).not.to.include('ttl');
      expect(sent).to.include('"cache_control":{"type":"ephemeral"}');
      await call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: { ...request, model: 'gpt-4o' } });
      expect(JSON.stringify(env.upstream.last().json())).not.to.include('cache_control');
    });

    it('#18 Portkey PR #1593: top-level cache_control survives Chat → Anthropic', async () => {
      await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model: 'claude-sonnet-4-6', cache_control: { type: 'ephemeral' }, messages: [{ role: 'user', content: 'x' }] } });
      expect(env.upstream.last().json()['cache_control']).to.deep.equal({ type: 'ephemeral' });
    });

    it('#19 claude-code-router#895: max_tokens is clamped to the model’s output limit', async () => {
      await call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: { model: 'ds-chat', max_tokens: 64000, messages: [{ role: 'user', content: 'x' }] } });
      expect(env.upstream.last().json()['max_tokens']).to.equal(8192);
    });
  });

  describe('stop reasons, finish reasons and usage', () => {
    it('#20 litellm#40064: the matched stop sequence is kept across formats', async () => {
      env.upstream.script(() => ({ body: { id: 'c', choices: [{ index: 0, message: { role: 'assistant', content: 'a' }, finish_reason: 'stop', stop_reason: '###' }], usage: {} } }));
      const fromChat = await sdk.anthropic.messages.create({ model: 'ds-chat', max_tokens: 10, stop_sequences: ['###'], messages: [{ role: 'user', content: 'x' }] });
      expect(fromChat).to.include({ stop_reason: 'stop_sequence', stop_sequence: '###' });
      env.upstream.script(() => ({ body: { id: 'm', type: 'message', role: 'assistant', model: 'c', content: [{ type: 'text', text: 'a' }], stop_reason: 'stop_sequence', stop_sequence: '###', usage: {} } }));
      const fromMessages = await sdk.openai.chat.completions.create({ model: 'claude-sonnet-4-6', stop: '###', messages: [{ role: 'user', content: 'x' }] });
      expect(fromMessages.choices[0]).to.include({ finish_reason: 'stop', stop_reason: '###' });
    });

    it('#21 litellm PR #23800: refusal maps both ways; newer stop reasons are not folded into stop', async () => {
      env.upstream.script(() => ({ body: { id: 'c', choices: [{ index: 0, message: { role: 'assistant', content: 'no' }, finish_reason: 'content_filter' }], usage: {} } }));
      expect((await sdk.anthropic.messages.create({ model: 'gpt-4o', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })).stop_reason).to.equal('refusal');
      for (const [stop, finish] of [['refusal', 'content_filter'], ['model_context_window_exceeded', 'length']]) {
        env.upstream.script(() => ({ body: { id: 'm', type: 'message', role: 'assistant', model: 'c', content: [{ type: 'text', text: 'a' }], stop_reason: stop, usage: {} } }));
        expect((await sdk.openai.chat.completions.create({ model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'x' }] })).choices[0]?.finish_reason).to.equal(finish);
      }
    });

    it('#22 Kong anthropic driver: Chat clients get OpenAI finish reasons and streamed tool calls, never end_turn', async () => {
      const { list } = await chatStream('claude-sonnet-4-6', { tools: [{ type: 'function', function: { name: 'weather' } }] });
      const finishes = list.map((e) => (e.data['choices'] as Json[] | undefined)?.[0]?.['finish_reason']).filter((f) => f != null);
      expect(finishes).to.deep.equal(['tool_calls']);
      expect(JSON.stringify(list)).not.to.include('end_turn');
    });

    it('#23 Portkey#1338: exactly one usage chunk with include_usage, none without', async () => {
      const asked = await chatStream('claude-sonnet-4-6', { stream_options: { include_usage: true } });
      expect(asked.list.filter((e) => e.data['usage'] != null)).to.have.length(1);
      const notAsked = await chatStream('claude-sonnet-4-6');
      expect(notAsked.list.filter((e) => e.data['usage'] != null)).to.have.length(0);
      expect(notAsked.text.trim().endsWith('data: [DONE]')).to.equal(true);
    });

    it('#24 CLIProxyAPI#1700: message_start reports an input estimate, not 0, and message_delta the real count', async () => {
      const list = await messagesStream('gpt-4o', { system: 'y'.repeat(4000) });
      const start = (list[0]!.data['message'] as Json)['usage'] as Json;
      expect(start['input_tokens']).to.be.greaterThan(900);
      const delta = list.find((e) => e.event === 'message_delta')!.data['usage'] as Json;
      expect(delta['input_tokens']).to.equal(15);
    });

    it('#25 litellm#38507: OpenRouter usage on translated streams is read and recorded, not logged as zero', async () => {
      env.upstream.script(() => ({ sse: FIXTURES.openrouterReasoningSse() }));
      const logged = env.gw.logs.requests().length;
      await sdk.anthropic.messages.stream({ model: 'or-claude', max_tokens: 4000, tools: [WEATHER], messages: [{ role: 'user', content: 'x' }] }).finalMessage();
      const line = (await env.gw.requestLogs(logged + 1))[logged]!;
      expect(line).to.include({ route: 'translated', provider: 'openrouter' });
      expect(line['tokens']).to.deep.include({ input: 607, output: 143 });
    });
  });

  describe('streams that stall, fail or end early', () => {
    it('#26 litellm PR #37322: a translated stream opens with message_start and ping before the first token', async () => {
      env.upstream.script(() => ({ sse: chunk({ role: 'assistant', content: '' }) + chunk({ content: 'late token' }) + chunk({}, 'stop') + usage(1, 1) + DONE, eventDelayMs: 300 }));
      const res = await fetch(`${env.gw.url}/v1/messages`, {
        method: 'POST',
        headers: { ...MESSAGES_HEADERS, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'x' }] }),
      });
      const first = Buffer.from((await res.body!.getReader().read()).value!).toString();
      expect(first).to.include('event: message_start').and.to.include('event: ping').and.not.to.include('late token');
    });

    it('#27 Portkey#722: an overloaded_error mid-stream reaches Chat clients as an error line, not finish_reason "error"', async () => {
      env.upstream.script(() => ({ sse: FIXTURES.anthropicTextSse().split('event: content_block_stop')[0] + 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n' }));
      const { text, list } = await chatStream('claude-sonnet-4-6');
      expect(list.at(-1)!.data).to.deep.include({ error: { message: 'upstream provider "anthropic": Overloaded', type: 'overloaded_error', param: null, code: null } });
      expect(text).not.to.include('"finish_reason":"error"').and.not.to.include('[DONE]');
    });

    it('#28 bifrost#5546: an upstream that dies mid-stream never yields a clean [DONE] or message_stop', async () => {
      env.upstream.script(() => ({ sse: FIXTURES.anthropicTextSse(), resetAfterEvents: 4 }));
      const chat = await chatStream('claude-sonnet-4-6');
      expect(chat.text).not.to.include('[DONE]');
      expect(chat.list.at(-1)!.data).to.have.property('error');
      env.upstream.script(() => ({ sse: FIXTURES.openaiTextSse(), resetAfterEvents: 2 }));
      const messages = await messagesStream('gpt-4o');
      expect(messages.at(-1)!.event).to.equal('error');
      expect(messages.some((e) => e.event === 'message_stop')).to.equal(false);
    });
  });

  describe('client disconnects', () => {
    const abortMidStream = async (model: string, path: string, headers: Record<string, string>) => {
      const controller = new AbortController();
      const res = await fetch(`${env.gw.url}${path}`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ model, max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'x' }] }),
        signal: controller.signal,
      });
      await res.body!.getReader().read();
      const at = performance.now();
      controller.abort();
      return (await env.upstream.last().closed) - at;
    };

    it('#29 new-api#4184: a client that cancels a translated stream stops the upstream', async () => {
      env.upstream.script(() => ({ sse: FIXTURES.anthropicTextSse(), eventDelayMs: 200 }));
      expect(await abortMidStream('claude-sonnet-4-6', '/v1/chat/completions', CHAT_HEADERS)).to.be.below(200);
      expect(env.upstream.last().aborted()).to.equal(true);
    });

    it('#30 litellm#17364: a client that cancels a native stream stops the upstream', async () => {
      env.upstream.script(() => ({ sse: FIXTURES.anthropicTextSse(), eventDelayMs: 200 }));
      expect(await abortMidStream('claude-same', '/v1/messages', MESSAGES_HEADERS)).to.be.below(200);
      expect(env.upstream.last().aborted()).to.equal(true);
    });

    it('#31 bifrost#3164: a client that leaves before the first byte closes the upstream connection', async () => {
      env.upstream.script(() => ({ hang: true }));
      const controller = new AbortController();
      const pending = fetch(`${env.gw.url}/v1/messages`, {
        method: 'POST',
        headers: { ...MESSAGES_HEADERS, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'x' }] }),
        signal: controller.signal,
      }).catch(() => undefined);
      while (env.upstream.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
      const at = performance.now();
      controller.abort();
      await pending;
      expect((await env.upstream.last().closed) - at).to.be.below(200);
    });

    it('#32 OpenRouter typescript-sdk#194: an aborted stream still records the usage seen so far', async () => {
      env.upstream.script(() => ({ sse: FIXTURES.openaiTextSse(), eventDelayMs: 200 }));
      const logged = env.gw.logs.requests().length;
      await abortMidStream('gpt-4o', '/v1/messages', MESSAGES_HEADERS);
      const line = (await env.gw.requestLogs(logged + 1))[logged]!;
      expect(line['error']).to.equal('client_disconnected');
      expect((line['tokens'] as Json)['input']).to.be.greaterThan(0);
    });
  });

  describe('multimodal output through Chat Completions', () => {
    it('#33 new-api#1723: modalities reach the upstream on a native Chat route', async () => {
      await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model: 'gpt-4o', modalities: ['image', 'text'], messages: [{ role: 'user', content: 'draw' }] } });
      expect(env.upstream.last().json()['modalities']).to.deep.equal(['image', 'text']);
    });

    it('#34 litellm PR #9646: generated images pass natively as OpenRouter sends them, and become Markdown for Messages clients', async () => {
      const image = { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } };
      const answer = { id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'Here.', images: [image] }, finish_reason: 'stop' }], usage: {} };
      env.upstream.script(() => ({ body: answer }));
      const native = await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'draw' }] } });
      expect(native.json()).to.deep.equal({ ...answer, usage: { cost: 0 } });
      const translated = await sdk.anthropic.messages.create({ model: 'gpt-4o', max_tokens: 10, messages: [{ role: 'user', content: 'draw' }] });
      expect(translated.content).to.deep.equal([{ type: 'text', text: 'Here.\n\n![image](data:image/png;base64,iVBORw0KGgo=)' }]);
    });
  });
});
