import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { FIXTURES } from '../support/fake-upstream.ts';
import { call, KEYS, MESSAGES_HEADERS, PROVIDER_KEYS, translationConfig, useSdkClients, useUpstreamAndGateway } from '../support/gateway.ts';

type Json = Record<string, unknown>;
const WEATHER = { name: 'weather', description: 'Weather for a city', input_schema: { type: 'object' as const, properties: { location: { type: 'string' } }, required: ['location'] } };
const WEATHER_FN = { type: 'function' as const, function: { name: 'weather', parameters: WEATHER.input_schema } };

describe('translated routes through the official SDKs', () => {
  const env = useUpstreamAndGateway(translationConfig);
  const sdk = useSdkClients(env);

  describe('Anthropic SDK → Chat upstream', () => {
    it('sends the upstream a valid Chat request with the provider key and include_usage', async () => {
      await sdk.anthropic.messages.stream({ model: 'gpt-4o', max_tokens: 256, system: 'Be brief.', tools: [WEATHER], messages: [{ role: 'user', content: 'Weather in Florence?' }] }).finalMessage();
      const sent = env.upstream.last();
      expect(sent.url).to.equal('/v1/chat/completions');
      expect(sent.headers['authorization']).to.equal(`Bearer ${PROVIDER_KEYS.openai}`);
      expect(sent.rawHeaders.join('\n')).not.to.include(KEYS.alice);
      expect(sent.json()).to.deep.equal({
        model: 'gpt-4o-2024-08-06',
        messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Weather in Florence?' }],
        max_completion_tokens: 256,
        stream: true,
        stream_options: { include_usage: true },
        tools: [{ type: 'function', function: { name: 'weather', description: 'Weather for a city', parameters: WEATHER.input_schema } }],
      });
    });

    it('finalMessage() returns the text and its usage', async () => {
      const message = await sdk.anthropic.messages.stream({ model: 'gpt-same', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] }).finalMessage();
      expect(message.content).to.deep.equal([{ type: 'text', text: 'Hello! How can I help?' }]);
      expect(message.stop_reason).to.equal('end_turn');
      expect(message.usage).to.deep.include({ input_tokens: 15, output_tokens: 7, cache_read_input_tokens: 4 });
    });

    it('finalMessage() returns tool_use with its parsed input, and the same non-streamed', async () => {
      const streamed = await sdk.anthropic.messages.stream({ model: 'gpt-4o', max_tokens: 64, tools: [WEATHER], messages: [{ role: 'user', content: 'Weather?' }] }).finalMessage();
      expect(streamed.content).to.deep.equal([{ type: 'tool_use', id: 'call_7kE4IjtnwXcGbX6hDM7xFu8T', name: 'weather', input: { location: 'Florence, Italy' } }]);
      expect(streamed.stop_reason).to.equal('tool_use');
      expect(streamed.usage).to.deep.include({ input_tokens: 61, output_tokens: 16 });
      const whole = await sdk.anthropic.messages.create({ model: 'gpt-4o', max_tokens: 64, tools: [WEATHER], messages: [{ role: 'user', content: 'Weather?' }] });
      expect(whole.content).to.deep.equal([{ type: 'tool_use', id: 'call_7kE4IjtnwXcGbX6hDM7xFu8T', name: 'weather', input: { location: 'Florence, Italy' } }]);
    });

    it('finalMessage() returns signed thinking first, from an OpenRouter reasoning stream, and asks for reasoning', async () => {
      env.upstream.script(() => ({ sse: FIXTURES.openrouterReasoningSse() }));
      const message = await sdk.anthropic.messages
        .stream({ model: 'or-claude', max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 }, tools: [WEATHER], messages: [{ role: 'user', content: 'Weather in Florence?' }] })
        .finalMessage();
      expect(message.content.map((b) => b.type)).to.deep.equal(['thinking', 'tool_use']);
      expect(message.content[0]).to.deep.equal({ type: 'thinking', thinking: 'The user is asking for the weather in Florence.', signature: 'Eq0ECkgIDRAB' });
      expect(message.content[1]).to.deep.include({ input: { location: 'Florence, Italy' } });
      expect(message.usage).to.deep.include({ input_tokens: 607, output_tokens: 143 });
      expect(env.upstream.last().json()).to.deep.include({ reasoning: { max_tokens: 2048 }, max_tokens: 4096, model: 'anthropic/claude-sonnet-4.6' });
    });

    it('runs a full tool loop: the tool result reaches the upstream as a tool message after the tool call', async () => {
      const question = { role: 'user' as const, content: 'Weather in Florence?' };
      const first = await sdk.anthropic.messages.stream({ model: 'gpt-4o', max_tokens: 64, tools: [WEATHER], messages: [question] }).finalMessage();
      const toolUse = first.content.find((b) => b.type === 'tool_use');
      if (toolUse?.type !== 'tool_use') throw new Error('expected tool_use');
      env.upstream.script(() => ({ sse: FIXTURES.openaiTextSse() }));
      const second = await sdk.anthropic.messages
        .stream({
          model: 'gpt-4o',
          max_tokens: 64,
          tools: [WEATHER],
          messages: [question, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: '40 C' }] }],
        })
        .finalMessage();
      expect(second.content).to.deep.equal([{ type: 'text', text: 'Hello! How can I help?' }]);
      expect((env.upstream.last().json()['messages'] as Json[]).slice(1)).to.deep.equal([
        { role: 'assistant', content: null, tool_calls: [{ id: toolUse.id, type: 'function', function: { name: 'weather', arguments: '{"location":"Florence, Italy"}' } }] },
        { role: 'tool', tool_call_id: toolUse.id, content: '40 C' },
      ]);
    });

    it('answers count_tokens with the local estimate (Claude Code calls it with ?beta=true: peers.md §2 #15)', async () => {
      const res = await call(`${env.gw.url}/v1/messages/count_tokens?beta=true`, {
        headers: MESSAGES_HEADERS,
        body: { model: 'gpt-4o', system: 'x'.repeat(400), messages: [{ role: 'user', content: 'y'.repeat(400) }] },
      });
      expect(res.status).to.equal(200);
      // The tokenizer's count of what the model reads: system, then the message, each counted on
      // its own (texts of 64+ characters are remembered per key).
      expect(res.json()).to.deep.equal({ input_tokens: countTokens('x'.repeat(400)) + countTokens('y'.repeat(400)) });
      expect(res.headers.get('x-junction-estimate')).to.equal('true');
      expect(env.upstream.requests).to.have.length(0);
    });

    it('serves a prompt that holds special-token text such as <|endoftext|>, counted as text (it was a 500)', async () => {
      const prompt = 'What do <|endoftext|> and <|im_start|> mean to a tokenizer?';
      const message = await sdk.anthropic.messages.create({ model: 'gpt-4o', max_tokens: 64, messages: [{ role: 'user', content: prompt }] });
      expect(message.content).to.have.length.above(0);
      expect((env.upstream.last().json() as { messages: Json[] }).messages).to.deep.equal([{ role: 'user', content: prompt }]);
      const counted = await call(`${env.gw.url}/v1/messages/count_tokens`, { headers: MESSAGES_HEADERS, body: { model: 'gpt-4o', messages: [{ role: 'user', content: prompt }] } });
      expect(counted.json()).to.deep.equal({ input_tokens: countTokens(prompt, { disallowedSpecial: new Set() }) });
    });
  });

  describe('OpenAI SDK → Messages upstream', () => {
    it('sends the upstream a valid Messages request with the provider key and anthropic-version', async () => {
      await sdk.openai.chat.completions.create({ model: 'claude-sonnet-4-6', max_tokens: 300, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }] });
      const sent = env.upstream.last();
      expect(sent.url).to.equal('/v1/messages');
      expect(sent.headers).to.include({ 'x-api-key': PROVIDER_KEYS.anthropic, 'anthropic-version': '2023-06-01' });
      expect(sent.headers['authorization']).to.equal(undefined);
      expect(sent.json()).to.deep.equal({
        model: 'claude-sonnet-4-6-20260217',
        max_tokens: 300,
        system: [{ type: 'text', text: 'Be brief.' }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      });
    });

    it('finalChatCompletion() returns content, tool_calls, reasoning with its signature, and usage', async () => {
      const final = await sdk.openai.chat.completions
        .stream({ model: 'claude-sonnet-4-6', tools: [WEATHER_FN], reasoning_effort: 'medium', max_completion_tokens: 8000, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Weather?' }] })
        .finalChatCompletion();
      const choice = final.choices[0]!;
      expect(choice.message.content).to.equal("Okay, let's check the weather:");
      expect(choice.finish_reason).to.equal('tool_calls');
      const callOut = choice.message.tool_calls?.[0];
      expect(callOut?.id).to.equal('toolu_01T1x1fJ34qAmk2tNTrN7Up6');
      expect(callOut?.type === 'function' && JSON.parse(callOut.function.arguments)).to.deep.equal({ location: 'Florence, Italy' });
      expect((choice.message as unknown as Json)['reasoning_details']).to.deep.equal([
        { type: 'reasoning.text', text: 'The user wants the weather in Florence. I should call the weather tool.', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds', format: 'anthropic-claude-v1', index: 0 },
      ]);
      expect(final.usage).to.deep.include({ prompt_tokens: 624, completion_tokens: 89, total_tokens: 713 });
      expect(env.upstream.last().json()['thinking']).to.deep.equal({ type: 'enabled', budget_tokens: 2048 });
    });

    it('runs a full tool loop with thinking: the signed thinking goes back first, unchanged', async () => {
      const ask = { role: 'user' as const, content: 'Weather?' };
      const first = await sdk.openai.chat.completions
        .stream({ model: 'claude-sonnet-4-6', tools: [WEATHER_FN], reasoning_effort: 'low', max_completion_tokens: 4000, messages: [ask] })
        .finalChatCompletion();
      const assistant = first.choices[0]!.message;
      const toolCall = assistant.tool_calls![0]!;
      env.upstream.script(() => ({ sse: FIXTURES.anthropicTextSse() }));
      const second = await sdk.openai.chat.completions
        .stream({ model: 'claude-sonnet-4-6', tools: [WEATHER_FN], reasoning_effort: 'low', max_completion_tokens: 4000, messages: [ask, assistant, { role: 'tool', tool_call_id: toolCall.id, content: '40 C' }] })
        .finalChatCompletion();
      expect(second.choices[0]?.message.content).to.equal('Hello!');
      expect((env.upstream.last().json()['messages'] as Json[]).slice(1)).to.deep.equal([
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'The user wants the weather in Florence. I should call the weather tool.', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds' },
            { type: 'text', text: "Okay, let's check the weather:" },
            { type: 'tool_use', id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'weather', input: { location: 'Florence, Italy' } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', content: '40 C' }] },
      ]);
    });

    it('returns a non-streamed completion with usage summing input and cache', async () => {
      const completion = await sdk.openai.chat.completions.create({ model: 'claude-sonnet-4-6', tools: [WEATHER_FN], messages: [{ role: 'user', content: 'Weather?' }] });
      expect(completion.usage).to.deep.include({ prompt_tokens: 602, completion_tokens: 89, total_tokens: 691 });
      expect(completion.choices[0]?.message.tool_calls?.[0]).to.deep.include({ id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6' });
    });

    it('answers response_format with JSON content through a forced tool', async () => {
      env.upstream.script(() => ({
        body: { id: 'm', type: 'message', role: 'assistant', model: 'c', content: [{ type: 'tool_use', id: 't', name: 'json_response', input: { answer: 42 } }], stop_reason: 'tool_use', usage: { input_tokens: 5, output_tokens: 3 } },
      }));
      const completion = await sdk.openai.chat.completions.create({
        model: 'claude-sonnet-4-6',
        response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object', properties: { answer: { type: 'number' } } } } },
        messages: [{ role: 'user', content: 'The answer?' }],
      });
      expect(JSON.parse(completion.choices[0]!.message.content!)).to.deep.equal({ answer: 42 });
      expect(completion.choices[0]?.finish_reason).to.equal('stop');
      expect(env.upstream.last().json()['tool_choice']).to.deep.equal({ type: 'tool', name: 'json_response' });
    });

    it('refuses n > 1 with a 400 in the Chat format, sending nothing upstream', async () => {
      const err = await sdk.openai.chat.completions.create({ model: 'claude-sonnet-4-6', n: 2, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(OpenAI.BadRequestError);
      expect(err).to.include({ param: 'n' });
      expect(env.upstream.requests).to.have.length(0);
    });
  });

  describe('the real Claude Code request on a translated route', () => {
    const body = readFileSync(new URL('../fixtures/claude-code/claude-code-request.json', import.meta.url));
    const asGpt = Buffer.from(body.toString('utf8').replace(/"model": "[^"]+"/, '"model": "gpt-4o"'));

    it('reaches the upstream as a valid Chat request with its 24 functions', async () => {
      const res = await fetch(`${env.gw.url}/v1/messages?beta=true`, {
        method: 'POST',
        headers: { ...MESSAGES_HEADERS, 'content-type': 'application/json', 'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14' },
        body: asGpt,
      });
      expect(res.status).to.equal(200);
      await res.text();
      const sent = env.upstream.last().json();
      expect((sent['tools'] as Json[]).map((t) => (t['function'] as Json)['name'])).to.have.length(24);
      expect(sent).to.include({ stream: true, reasoning_effort: 'high', max_completion_tokens: 64000, model: 'gpt-4o-2024-08-06' });
      expect((sent['messages'] as Json[]).map((m) => m['role'])).to.deep.equal(['system', 'user', 'system']);
    });

    it('streams an answer the Anthropic SDK parses', async () => {
      const request = JSON.parse(asGpt.toString('utf8')) as Anthropic.MessageCreateParamsStreaming;
      const message = await sdk.anthropic.messages.stream(request).finalMessage();
      expect(message.content).to.deep.equal([{ type: 'tool_use', id: 'call_7kE4IjtnwXcGbX6hDM7xFu8T', name: 'weather', input: { location: 'Florence, Italy' } }]);
    });
  });

  describe('connections', () => {
    it('reuses each provider\'s upstream connection across translated streams, in both directions', async () => {
      for (let i = 0; i < 3; i++) await sdk.anthropic.messages.stream({ model: 'gpt-4o', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }).finalMessage();
      for (let i = 0; i < 3; i++) await sdk.openai.chat.completions.stream({ model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'x' }] }).finalChatCompletion();
      const ports = env.upstream.requests.map((r) => r.remotePort);
      expect(ports).to.have.length(6);
      // One pool per provider (a reload renews a changed provider's alone: issue #16).
      expect([new Set(ports.slice(0, 3)).size, new Set(ports.slice(3)).size], `upstream ports ${ports.join(', ')}`).to.deep.equal([1, 1]);
    });
  });

  describe('failures', () => {
    it('passes an upstream 429 on in the caller format, with retry-after', async () => {
      env.upstream.script(() => ({ status: 429, headers: { 'retry-after': '12' }, body: { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } } }));
      const err = await sdk.anthropic.messages.create({ model: 'gpt-4o', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(Anthropic.RateLimitError);
      const apiError = err as InstanceType<typeof Anthropic.APIError>;
      expect(apiError.headers?.get('retry-after')).to.equal('12');
      expect(apiError.error).to.deep.include({ type: 'error', error: { type: 'rate_limit_error', message: 'upstream provider "openai": Rate limit reached' } });
    });

    it('passes an Anthropic 529 on to a Chat client as 529 overloaded_error', async () => {
      env.upstream.script(() => ({ status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }));
      const err = await sdk.openai.chat.completions.create({ model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(OpenAI.InternalServerError);
      expect(err).to.include({ status: 529, type: 'overloaded_error' });
    });

    it('turns an error an upstream reports with HTTP 200 into that error, not an empty success', async () => {
      for (const body of [
        { error: { message: 'Provider returned error', code: 502 } },
        { id: 'g', choices: [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'error', error: { code: 429, message: 'Rate limited upstream' } }] },
      ]) {
        env.upstream.script(() => ({ body }));
        const res = await call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: { model: 'gpt-4o', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] } });
        expect(res.status, JSON.stringify(body)).to.be.oneOf([502, 429]);
        expect(res.json()['type']).to.equal('error');
      }
    });

    it('turns an upstream 401 into a 502 that says nothing of the provider key', async () => {
      env.upstream.script(() => ({ status: 401, body: { error: { message: `Incorrect API key provided: ${PROVIDER_KEYS.openai}` } } }));
      const res = await call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: { model: 'gpt-4o', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] } });
      expect(res.status).to.equal(502);
      expect(res.text).not.to.include(PROVIDER_KEYS.openai);
    });

    it('makes both SDKs raise when a translated stream is cut or reports an error mid-way', async () => {
      env.upstream.script(() => ({ sse: FIXTURES.openaiToolSse(), resetAfterEvents: 2 }));
      const cut = await sdk.anthropic.messages.stream({ model: 'gpt-4o', max_tokens: 8, tools: [WEATHER], messages: [{ role: 'user', content: 'x' }] }).finalMessage().then(() => 'resolved', (e: unknown) => e);
      expect(cut).to.be.instanceOf(Anthropic.APIError);
      expect(String(cut)).to.include('ended the response early');

      env.upstream.script(() => ({
        sse: `${FIXTURES.anthropicTextSse().split('event: content_block_delta')[0]}event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n`,
      }));
      const inBand = await sdk.openai.chat.completions.stream({ model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'x' }] }).finalChatCompletion().then(() => 'resolved', (e: unknown) => e);
      expect(inBand).to.be.instanceOf(OpenAI.APIError);
      expect(String(inBand)).to.include('Overloaded');
    });

    it('aborts the upstream when the client leaves a translated stream', async () => {
      env.upstream.script(() => ({ sse: FIXTURES.openaiTextSse(), eventDelayMs: 300 }));
      const controller = new AbortController();
      const res = await fetch(`${env.gw.url}/v1/messages`, {
        method: 'POST',
        headers: { ...MESSAGES_HEADERS, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o', max_tokens: 8, stream: true, messages: [{ role: 'user', content: 'x' }] }),
        signal: controller.signal,
      });
      const reader = res.body!.getReader();
      await reader.read();
      const abortedAt = performance.now();
      controller.abort();
      const closedAt = await env.upstream.last().closed;
      expect(env.upstream.last().aborted()).to.equal(true);
      expect(closedAt - abortedAt).to.be.below(250);
    });
  });
});
