import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import type { RecordedRequest, Reply } from '../support/fake-upstream.ts';
import { call, CHAT_HEADERS, generationOf, KEYS, useUpstreamAndGateway } from '../support/gateway.ts';

/**
 * A third-party plugin with a wire format of its own (issue #14): `test/fixtures/plugins/gemini-like.js`
 * brings only its format's codec (canonical ⇄ a Gemini-like generateContent API) and the core
 * serves Messages, Chat and Responses clients through it, whole and streamed, with usage billed
 * and a cut stream ending in an in-band error.
 */

const PLUGINS_DIR = fileURLToPath(new URL('../fixtures/plugins/', import.meta.url));
const json = { 'content-type': 'application/json' };

const config = (url: string): string => `
log: { level: info }
auth: { keys: [{ name: alice, key: "${KEYS.alice}", balance_usd: 10 }] }
providers:
  - { id: gem, plugin: ./gemini-like.js, base_url: "${url}", api_key: gem-secret }
models:
  - { id: gem-pro, routes: [{ provider: gem, model: gemini-like-pro }], pricing: { input: 1, output: 2 } }
`;

const ANSWER = { responseId: 'g1', modelVersion: 'gemini-like-pro-001', candidates: [{ content: { role: 'model', parts: [{ text: 'Ciao!' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 3 } };
const CALL = { ...ANSWER, candidates: [{ content: { role: 'model', parts: [{ functionCall: { id: 'fn_1', name: 'weather', args: { city: 'Rome' } } }] }, finishReason: 'STOP' }] };
const sse = (...events: object[]): string => events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('');
const STREAM = sse(
  { responseId: 'g2', modelVersion: 'gemini-like-pro-001', candidates: [{ content: { parts: [{ text: 'Ci' }] } }] },
  { candidates: [{ content: { parts: [{ text: 'ao!' }] } }] },
  { candidates: [{ content: { parts: [{ text: '' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 3 } },
);

const generate = (reply: Reply) => (req: RecordedRequest): Reply | undefined => (req.url.startsWith('/v1beta/models/gemini-like-pro:') ? reply : undefined);

describe('a plugin\'s own wire format (translate.upstream: custom)', () => {
  const env = useUpstreamAndGateway(config, { dir: PLUGINS_DIR });

  it('a Messages client: the plugin encodes the canonical request, the core answers in Messages, usage billed', async () => {
    env.upstream.script(generate({ body: ANSWER, headers: json }));
    const anthropic = new Anthropic({ baseURL: env.gw.url, apiKey: KEYS.alice, maxRetries: 0 });
    const { data: message, response } = await anthropic.messages
      .create({ model: 'gem-pro', max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'Say hi in Italian' }] })
      .withResponse();
    expect(env.upstream.last().url).to.equal('/v1beta/models/gemini-like-pro:generateContent');
    expect(env.upstream.last().headers['x-goog-api-key']).to.equal('gem-secret');
    expect(env.upstream.last().json()).to.deep.equal({
      contents: [{ role: 'user', parts: [{ text: 'Say hi in Italian' }] }],
      generationConfig: { maxOutputTokens: 100 },
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
    });
    expect(message.content).to.deep.equal([{ type: 'text', text: 'Ciao!' }]);
    expect(message.usage).to.deep.include({ input_tokens: 7, output_tokens: 3 });
    const row = await generationOf(env.gw.url, response.headers.get('request-id') ?? response.headers.get('x-request-id'));
    expect(row).to.deep.include({ route: 'translated' });
    expect(row.tokens).to.deep.include({ input: 7, output: 3 });
  });

  it('a Chat client streams: the core frames the plugin\'s events as Chat chunks, usage from its stop', async () => {
    env.upstream.script(generate({ sse: STREAM }));
    const openai = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: KEYS.alice, maxRetries: 0 });
    const stream = await openai.chat.completions.create({ model: 'gem-pro', messages: [{ role: 'user', content: 'Say hi' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).to.equal('Ciao!');
    expect(usage).to.deep.include({ prompt_tokens: 7, completion_tokens: 3 });
    expect(env.upstream.last().url).to.equal('/v1beta/models/gemini-like-pro:streamGenerateContent?alt=sse');
  });

  it('a Responses client with a tool: the plugin\'s function call comes back as a function_call item', async () => {
    env.upstream.script(generate({ body: CALL, headers: json }));
    const openai = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: KEYS.alice, maxRetries: 0 });
    const response = await openai.responses.create({ model: 'gem-pro', input: 'Weather in Rome?', store: false, tools: [{ type: 'function', name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }] });
    expect(response.output[0]).to.deep.include({ type: 'function_call', call_id: 'fn_1', name: 'weather', arguments: '{"city":"Rome"}' });
    expect(env.upstream.last().json()['tools']).to.deep.equal([{ functionDeclarations: [{ name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }] }]);
  });

  it('a stream the plugin never saw stop (cut upstream) ends in an in-band error, not a clean end', async () => {
    env.upstream.script(generate({ sse: STREAM.slice(0, STREAM.lastIndexOf('data: ')) }));
    const res = await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model: 'gem-pro', messages: [{ role: 'user', content: 'x' }], stream: true } });
    expect(res.text).to.include('"error"');
    expect(res.text).to.not.include('[DONE]');
  });

  it('an error the plugin\'s decoder throws reaches the client in-band', async () => {
    env.upstream.script(generate({ sse: sse({ candidates: [{ content: { parts: [{ text: 'Ci' }] } }] }, { error: { message: 'quota exhausted' } }) }));
    const res = await call(`${env.gw.url}/v1/messages`, { headers: { 'x-api-key': KEYS.alice, 'anthropic-version': '2023-06-01' }, body: { model: 'gem-pro', max_tokens: 50, messages: [{ role: 'user', content: 'x' }], stream: true } });
    const last = res.text.trimEnd().split('\n\n').at(-1) ?? '';
    expect(last).to.match(/^event: error\n/);
    expect(last).to.include('quota exhausted');
  });
});
