import { createOpenAI } from '@ai-sdk/openai';
import { streamText } from 'ai';
import { expect } from 'chai';
import OpenAI from 'openai';
import { awsError, cutEvery, eventStream, frame, sigV4Refusal, useAwsEnv } from '../../support/aws-fake.ts';
import type { RecordedRequest, Reply } from '../../support/fake-upstream.ts';
import { call, generationOf, KEYS, MESSAGES_HEADERS, useSdkClients, useUpstreamAndGateway, oneKeyConfig } from '../../support/gateway.ts';

/**
 * The `bedrock` plugin's Converse path (issue #15; providers.md §1.3) for models other than
 * Claude, against a fake that refuses what Converse refuses: a bad SigV4 signature, a first turn
 * that is not the user's, roles that do not alternate, blank text, tool ids or names outside
 * `[a-zA-Z0-9_-]{1,64}`, tool blocks without a toolConfig, a temperature above 1, inference
 * settings Converse does not have, and `model` in the body. Streams come as real event-stream
 * frames, the usage in `metadata` after `messageStop`.
 */

const REGION = 'us-east-1';
const MODEL = 'us.amazon.nova-pro-v1:0';
const PATH = `/model/${encodeURIComponent(MODEL)}`;
const json = { 'content-type': 'application/json' };
const ID = /^[a-zA-Z0-9_-]{1,64}$/;
const INFERENCE = new Set(['maxTokens', 'temperature', 'topP', 'stopSequences']);
type Json = Record<string, unknown>;
const validation = (message: string): Reply => awsError(400, 'ValidationException', message);

function converseRefusal(body: Json): Reply | undefined {
  if ('model' in body) return validation('extraneous key [model] is not permitted');
  const messages = body['messages'] as Json[];
  if (messages[0]?.['role'] !== 'user') return validation('A conversation must start with a user message.');
  for (const [i, message] of messages.entries()) {
    if (i > 0 && messages[i - 1]!['role'] === message['role']) return validation('A conversation must alternate between user and assistant roles.');
    for (const block of message['content'] as Json[]) {
      if (typeof block['text'] === 'string' && block['text'].trim() === '') return validation('The text field in the ContentBlock object is blank.');
      const use = (block['toolUse'] ?? block['toolResult']) as Json | undefined;
      if (use && !body['toolConfig']) return validation('The toolConfig field must be defined when using toolUse and toolResult content blocks.');
      if (use && !ID.test(String(use['toolUseId']))) return validation('toolUseId: must satisfy [a-zA-Z0-9_-]+');
    }
  }
  for (const tool of ((body['toolConfig'] as Json | undefined)?.['tools'] as Json[] | undefined) ?? []) {
    if (!ID.test(String((tool['toolSpec'] as Json)['name']))) return validation('toolSpec.name: must satisfy [a-zA-Z0-9_-]+');
  }
  const inference = (body['inferenceConfig'] ?? {}) as Json;
  for (const key of Object.keys(inference)) if (!INFERENCE.has(key)) return validation(`inferenceConfig: extraneous key [${key}] is not permitted`);
  if (typeof inference['temperature'] === 'number' && inference['temperature'] > 1) return validation('temperature: must be less than or equal to 1');
  return undefined;
}

const converse = (path: string, reply: (body: Json) => Reply) => async (req: RecordedRequest): Promise<Reply | undefined> => {
  const refused = await sigV4Refusal(req, REGION);
  if (refused) return refused;
  if (req.url !== path) return awsError(404, 'UnknownOperationException', `no route ${req.url}`);
  const body = req.json();
  return converseRefusal(body) ?? reply(body);
};

const answer = (content: Json[], stopReason: string, usage: Json = { inputTokens: 30, outputTokens: 12, totalTokens: 42 }): Reply => ({ headers: json, body: { output: { message: { role: 'assistant', content } }, stopReason, usage, metrics: { latencyMs: 300 } } });
const event = (type: string, payload: Json): Buffer => frame(type, { ...payload, p: 'abcdefghij' });

const config = (url: string): string => oneKeyConfig(`
providers:
  - { id: bedrock, plugin: bedrock, base_url: "${url}", options: { region: ${REGION} } }
models:
  - { id: nova, routes: [{ provider: bedrock, model: "${MODEL}" }], pricing: { input: 0.8, output: 3.2 } }
`);

describe('bedrock plugin: other models through Converse', () => {
  useAwsEnv();
  const env = useUpstreamAndGateway(config);
  const sdk = useSdkClients(env);

  it('an OpenAI SDK tool loop: tools as toolSpecs, the call and its result tied by id, temperature kept in range, billed', async () => {
    const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get.weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];
    env.upstream.script(converse(`${PATH}/converse`, () => answer([{ text: 'Checking.' }, { toolUse: { toolUseId: 'tooluse_abc123', name: 'get_weather', input: { city: 'Oslo' } } }], 'tool_use')));
    const first = await sdk.openai.chat.completions.create({ model: 'nova', temperature: 1.5, tools, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Weather in Oslo?' }] });
    const toolCall = first.choices[0]?.message.tool_calls?.[0];
    expect(first.choices[0]?.finish_reason).to.equal('tool_calls');
    expect(toolCall?.type === 'function' && toolCall.function).to.deep.equal({ name: 'get.weather', arguments: '{"city":"Oslo"}' });
    const sent = env.upstream.last().json();
    expect(sent['system']).to.deep.equal([{ text: 'Be brief.' }]);
    expect(sent['inferenceConfig']).to.deep.include({ temperature: 1 });
    env.upstream.script(converse(`${PATH}/converse`, () => answer([{ text: 'Sunny, 18 C.' }], 'end_turn')));
    const second = await sdk.openai.chat.completions.create({
      model: 'nova',
      tools,
      messages: [{ role: 'user', content: 'Weather in Oslo?' }, first.choices[0]!.message, { role: 'tool', tool_call_id: toolCall!.id, content: '18 C, sunny' }],
    });
    expect(second.choices[0]?.message.content).to.equal('Sunny, 18 C.');
    const history = env.upstream.last().json()['messages'] as Json[];
    expect(history.map((m) => m['role'])).to.deep.equal(['user', 'assistant', 'user']);
    expect((history[2]!['content'] as Json[])[0]).to.deep.equal({ toolResult: { toolUseId: 'tooluse_abc123', content: [{ text: '18 C, sunny' }], status: 'success' } });
    expect(second.usage).to.deep.include({ prompt_tokens: 30, completion_tokens: 12 });
  });

  it('an Anthropic SDK stream: text opened by its first delta, a tool call with streamed input, the usage from metadata after messageStop, frames cut every 5 bytes', async () => {
    const frames = Buffer.concat([
      event('messageStart', { role: 'assistant' }),
      event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Let me ' } }),
      event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'check.' } }),
      event('contentBlockStop', { contentBlockIndex: 0 }),
      event('contentBlockStart', { contentBlockIndex: 1, start: { toolUse: { toolUseId: 'tooluse_x1', name: 'weather' } } }),
      event('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '{"city":' } } }),
      event('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '"Oslo"}' } } }),
      event('contentBlockStop', { contentBlockIndex: 1 }),
      event('messageStop', { stopReason: 'tool_use' }),
      event('metadata', { usage: { inputTokens: 40, outputTokens: 9, totalTokens: 49 }, metrics: { latencyMs: 200 } }),
    ]);
    env.upstream.script(converse(`${PATH}/converse-stream`, () => eventStream(cutEvery(frames, 5))));
    const res = await call(`${env.gw.url}/v1/messages`, { headers: { ...MESSAGES_HEADERS }, body: { model: 'nova', max_tokens: 100, stream: true, tools: [{ name: 'weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }], messages: [{ role: 'user', content: 'Weather?' }] } });
    const final = await sdk.anthropic.messages.stream({ model: 'nova', max_tokens: 100, tools: [{ name: 'weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }], messages: [{ role: 'user', content: 'Weather?' }] }).finalMessage();
    expect(final.content).to.have.length(2);
    expect(final.content[0]).to.deep.include({ type: 'text', text: 'Let me check.' });
    expect(final.content[1]).to.deep.include({ type: 'tool_use', id: 'tooluse_x1', name: 'weather', input: { city: 'Oslo' } });
    expect(final.stop_reason).to.equal('tool_use');
    expect(final.usage.output_tokens).to.equal(9);
    const generation = await generationOf(env.gw.url, res.headers.get('x-request-id'));
    expect(generation.tokens['input']).to.equal(40);
    expect(generation.tokens['output']).to.equal(9);
  });

  it('the Vercel AI SDK streams text from a Converse model', async () => {
    const frames = [event('messageStart', { role: 'assistant' }), event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hello ' } }), event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'there.' } }), event('contentBlockStop', { contentBlockIndex: 0 }), event('messageStop', { stopReason: 'end_turn' }), event('metadata', { usage: { inputTokens: 5, outputTokens: 2, totalTokens: 7 } })];
    env.upstream.script(converse(`${PATH}/converse-stream`, () => eventStream(frames)));
    const provider = createOpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: KEYS.alice });
    const result = streamText({ model: provider.chat('nova'), prompt: 'Hi' });
    let text = '';
    for await (const part of result.textStream) text += part;
    expect(text).to.equal('Hello there.');
    expect((await result.usage).inputTokens).to.equal(5);
  });

  it('structured output: the schema as a forced tool, its input the answer\'s text', async () => {
    env.upstream.script(converse(`${PATH}/converse`, () => answer([{ toolUse: { toolUseId: 'tooluse_j', name: 'json_response', input: { city: 'Oslo', temp: 18 } } }], 'tool_use')));
    const completion = await sdk.openai.chat.completions.create({ model: 'nova', messages: [{ role: 'user', content: 'Weather as JSON' }], response_format: { type: 'json_schema', json_schema: { name: 'w', schema: { type: 'object', properties: { city: { type: 'string' }, temp: { type: 'number' } } } } } });
    expect(JSON.parse(completion.choices[0]!.message.content!)).to.deep.equal({ city: 'Oslo', temp: 18 });
    expect(completion.choices[0]?.finish_reason).to.equal('stop');
    expect((env.upstream.last().json()['toolConfig'] as Json)['toolChoice']).to.deep.equal({ tool: { name: 'json_response' } });
  });

  it('a guardrail stopping the answer is a refusal, and an exception mid-stream an in-band error with its type', async () => {
    env.upstream.script(converse(`${PATH}/converse`, () => answer([{ text: 'Sorry, I cannot help with that.' }], 'guardrail_intervened')));
    const message = await sdk.anthropic.messages.create({ model: 'nova', max_tokens: 50, messages: [{ role: 'user', content: 'Something' }] });
    expect(message.stop_reason).to.equal('refusal');
    const frames = [event('messageStart', { role: 'assistant' }), event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hel' } }), frame('modelStreamErrorException', { message: 'The model failed mid-way.', originalStatusCode: 500 }, 'exception')];
    env.upstream.script(converse(`${PATH}/converse-stream`, () => eventStream(frames)));
    const res = await call(`${env.gw.url}/v1/chat/completions`, { headers: { authorization: `Bearer ${KEYS.alice}` }, body: { model: 'nova', stream: true, messages: [{ role: 'user', content: 'Hi' }] } });
    expect(res.text).to.include('modelStreamErrorException').and.include('The model failed mid-way.');
    // Mapped as Bedrock's table says: a model error is the upstream's (502, api_error).
    const line = res.text.split('\n').find((l) => l.startsWith('data: {"error"'));
    expect((JSON.parse(line!.slice(6)) as { error: Json }).error['type']).to.equal('api_error');
    expect(res.text).not.to.include('"finish_reason":"stop"');
  });

  it('a URL image is refused with a 400 naming the field, and nothing is sent', async () => {
    const res = await call(`${env.gw.url}/v1/chat/completions`, { headers: { authorization: `Bearer ${KEYS.alice}` }, body: { model: 'nova', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }] } });
    expect(res.status).to.equal(400);
    expect(res.text).to.include('base64');
    expect(env.upstream.requests).to.have.length(0);
  });
});
