import { expect } from 'chai';
import OpenAI from 'openai';
import { FIXTURES } from '../support/fake-upstream.ts';
import { KEYS, PROVIDER_KEYS, useUpstreamAndGateway } from '../support/gateway.ts';

const WEATHER_TOOL = {
  type: 'function' as const,
  function: { name: 'weather', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } },
};

describe('OpenAI SDK through a native route', () => {
  const env = useUpstreamAndGateway();
  let client: OpenAI;
  before(() => {
    client = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: KEYS.alice, maxRetries: 0 });
  });

  it('chat.completions.create returns the upstream completion, and the provider key went upstream', async () => {
    const completion = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] });
    expect(completion.choices[0]?.message.content).to.equal('Hello! How can I help?');
    expect(completion.usage?.prompt_tokens_details?.cached_tokens).to.equal(4);
    const seen = env.upstream.last();
    expect(seen.headers['authorization']).to.equal(`Bearer ${PROVIDER_KEYS.openai}`);
    expect(seen.rawHeaders.join('\n')).not.to.include(KEYS.alice);
    expect(seen.json()['model']).to.equal('gpt-4o-2024-08-06');
  });

  it('returns tool_calls from a non-streamed completion', async () => {
    const completion = await client.chat.completions.create({ model: 'gpt-4o', tools: [WEATHER_TOOL], messages: [{ role: 'user', content: 'Weather?' }] });
    const call = completion.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === 'function' && call.function).to.deep.equal({ name: 'weather', arguments: '{"location":"Florence, Italy"}' });
  });

  it('chat.completions.stream().finalChatCompletion() assembles tool_calls and usage', async () => {
    const stream = client.chat.completions.stream({
      model: 'gpt-4o',
      tools: [WEATHER_TOOL],
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'Weather in Florence?' }],
    });
    const final = await stream.finalChatCompletion();
    const choice = final.choices[0];
    expect(choice?.finish_reason).to.equal('tool_calls');
    const call = choice?.message.tool_calls?.[0];
    expect(call?.id).to.equal('call_7kE4IjtnwXcGbX6hDM7xFu8T');
    expect(call?.type === 'function' && JSON.parse(call.function.arguments)).to.deep.equal({ location: 'Florence, Italy' });
    expect(final.usage).to.deep.include({ prompt_tokens: 61, completion_tokens: 16, total_tokens: 77 });
  });

  it('passes an OpenRouter reasoning stream through untouched: comments, reasoning deltas, signature, usage', async () => {
    env.upstream.script(() => ({ sse: FIXTURES.openrouterReasoningSse() }));
    const logged = env.gw.logs.requests().length;
    const stream = client.chat.completions.stream({
      model: 'gpt-4o',
      tools: [WEATHER_TOOL],
      reasoning_effort: 'low',
      messages: [{ role: 'user', content: 'Weather in Florence?' }],
    });
    let reasoning = '';
    const details: unknown[] = [];
    stream.on('chunk', (chunk) => {
      const delta = chunk.choices[0]?.delta as { reasoning?: string | null; reasoning_details?: unknown[] } | undefined;
      reasoning += delta?.reasoning ?? '';
      details.push(...(delta?.reasoning_details ?? []));
    });
    const final = await stream.finalChatCompletion();
    expect(reasoning).to.equal('The user is asking for the weather in Florence.');
    expect(details).to.deep.include({ type: 'reasoning.text', signature: 'Eq0ECkgIDRAB', format: 'anthropic-claude-v1', index: 0 });
    const call = final.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === 'function' && JSON.parse(call.function.arguments)).to.deep.equal({ location: 'Florence, Italy' });
    expect(final.usage).to.deep.include({ prompt_tokens: 607, completion_tokens: 143, cost: 0.001322 });
    expect(env.upstream.last().json()['reasoning_effort']).to.equal('low');
    const line = (await env.gw.requestLogs(logged + 1))[logged];
    expect(line?.['tokens']).to.deep.equal({ input: 607, output: 143, cache_read: 0, cache_write: 0, reasoning: 99 });
    const raw = await fetch(`${env.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEYS.alice}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'x' }] }),
    }).then((r) => r.text());
    expect(raw).to.equal(FIXTURES.openrouterReasoningSse());
  });

  it('streams text with finalChatCompletion()', async () => {
    const final = await client.chat.completions
      .stream({ model: 'gpt-same', messages: [{ role: 'user', content: 'Hi' }] })
      .finalChatCompletion();
    expect(final.choices[0]?.message.content).to.equal('Hello! How can I help?');
    expect(env.upstream.last().json()['stream']).to.equal(true);
  });

  it('runs a tool loop: the tool result goes upstream as sent', async () => {
    const first = await client.chat.completions.create({ model: 'gpt-4o', tools: [WEATHER_TOOL], messages: [{ role: 'user', content: 'Weather?' }] });
    const message = first.choices[0]?.message;
    const call = message?.tool_calls?.[0];
    if (!message || !call) throw new Error('expected a tool call');
    await client.chat.completions.create({
      model: 'gpt-4o',
      tools: [WEATHER_TOOL],
      messages: [{ role: 'user', content: 'Weather?' }, message, { role: 'tool', tool_call_id: call.id, content: '40 C' }],
    });
    const sent = env.upstream.last().json() as { messages: Record<string, unknown>[] };
    expect(sent.messages[2]).to.deep.equal({ role: 'tool', tool_call_id: 'call_7kE4IjtnwXcGbX6hDM7xFu8T', content: '40 C' });
  });

  it('models.list() lists the catalogue with pricing and context length', async () => {
    const models = [];
    for await (const model of client.models.list()) models.push(model);
    expect(models.map((m) => m.id)).to.deep.equal(['claude-sonnet-4-6', 'claude-same', 'gpt-4o', 'gpt-same', 'demo']);
    const first = models[0] as unknown as Record<string, unknown>;
    expect(first).to.deep.include({ object: 'model', owned_by: 'anthropic', context_length: 200000 });
    expect(first['pricing']).to.deep.include({ prompt: '0.000003', completion: '0.000015', input_cache_read: '0.0000003' });
    expect(first['architecture']).to.deep.include({ input_modalities: ['text', 'image'], output_modalities: ['text'] });
  });

  it('raises typed errors: 404 with code model_not_found, 401, 400 naming the param', async () => {
    const notFound = await client.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(notFound).to.be.instanceOf(OpenAI.NotFoundError);
    expect(notFound).to.include({ status: 404, code: 'model_not_found', param: 'model' });
    expect((notFound as InstanceType<typeof OpenAI.APIError>).requestID).to.match(/^req_/);
    const bad = await client.chat.completions.create({ model: 'gpt-4o', temperature: 9, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(bad).to.be.instanceOf(OpenAI.BadRequestError);
    expect(bad).to.include({ param: 'temperature' });
    const unauth = await new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: 'sk-jct-wrong-0000000000', maxRetries: 0 }).models.list().catch((e: unknown) => e);
    expect(unauth).to.be.instanceOf(OpenAI.AuthenticationError);
    expect(env.upstream.requests).to.have.length(0);
  });

  it('raises when the upstream cuts a stream, rather than returning a partial completion', async () => {
    env.upstream.script(() => ({ sse: FIXTURES.openaiToolSse(), resetAfterEvents: 3 }));
    const outcome = await client.chat.completions
      .stream({ model: 'gpt-4o', tools: [WEATHER_TOOL], messages: [{ role: 'user', content: 'x' }] })
      .finalChatCompletion()
      .then(
        () => 'resolved',
        (err: unknown) => err,
      );
    expect(outcome).to.be.instanceOf(OpenAI.APIError);
    expect(String(outcome)).to.include('ended the response early');
  });
});
