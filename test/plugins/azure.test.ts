import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import OpenAI from 'openai';
import { FIXTURES, type RecordedRequest, type Reply } from '../support/fake-upstream.ts';
import { call, CHAT_HEADERS, generationOf, KEYS, MESSAGES_HEADERS, startGateway, useUpstreamAndGateway, oneKeyConfig } from '../support/gateway.ts';

/**
 * The `azure` plugin (issue #15; providers.md §4) against a fake that enforces what Azure does:
 * the `api-key` header (a bearer token is refused), both URL shapes (the v1 API, and deployment
 * URLs with `api-version`), streams that open with an empty-`choices` frame of prompt filter
 * results, a `content_filter` finish, a 400 `content_filter` error and 429 with `retry-after-ms`.
 * Claude on Azure AI Foundry is the `anthropic` plugin's, at the resource's `/anthropic` prefix.
 */

const AZURE_KEY = 'azure-key-0123456789';
const json = { 'content-type': 'application/json' };
const FILTER_FRAME = `data: ${JSON.stringify({ choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: [{ prompt_index: 0, content_filter_results: { hate: { filtered: false, severity: 'safe' } } }] })}\n\n`;
const azureSse = (sse: string): string => FILTER_FRAME + sse;
const CONTENT_FILTER_ERROR = {
  error: { message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.", type: null, param: 'prompt', code: 'content_filter', status: 400 },
};

const config = (url: string): string => oneKeyConfig(`
providers:
  - { id: azure, plugin: azure, base_url: "${url}/openai/v1", api_key: "${AZURE_KEY}" }
  - { id: azure-legacy, plugin: azure, base_url: "${url}", api_key: "${AZURE_KEY}", options: { api_version: 2024-10-21 } }
  - { id: foundry-claude, plugin: anthropic, base_url: "${url}/anthropic", api_key: "${AZURE_KEY}" }
models:
  - { id: gpt-4o, routes: [{ provider: azure, model: my-gpt4o }], pricing: { input: 2.5, output: 10 } }
  - { id: gpt-4o-legacy, routes: [{ provider: azure-legacy, model: my-gpt4o }], pricing: { input: 2.5, output: 10 } }
  - { id: claude-foundry, routes: [{ provider: foundry-claude, model: my-claude-deployment }], pricing: { input: 3, output: 15 } }
`);

/** Azure's checks before anything else: its key in `api-key`, never a bearer token. */
function azure(reply: (req: RecordedRequest) => Reply | undefined) {
  return (req: RecordedRequest): Reply | undefined => {
    if (req.headers['authorization'] !== undefined || req.headers['api-key'] !== AZURE_KEY) {
      return { status: 401, headers: json, body: { error: { code: '401', message: 'Access denied due to invalid subscription key or wrong API endpoint.' } } };
    }
    return reply(req);
  };
}

describe('azure plugin (Azure OpenAI) and Claude on Azure AI Foundry', () => {
  const env = useUpstreamAndGateway(config);
  let openai: OpenAI;
  let anthropic: Anthropic;
  before(() => {
    openai = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: KEYS.alice, maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: env.gw.url, apiKey: KEYS.alice, maxRetries: 0 });
  });

  it('v1 API: a Chat stream goes through natively with api-key, its prompt-filter frame included; the SDK accumulates it and usage is billed', async () => {
    env.upstream.script(azure((req) => (req.url === '/openai/v1/chat/completions' ? { sse: azureSse(FIXTURES.openaiTextSse()) } : undefined)));
    const stream = openai.chat.completions.stream({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    const completion = await stream.finalChatCompletion();
    expect(completion.choices[0]?.message.content).to.be.a('string').and.not.equal('');
    expect(env.upstream.last().json()).to.include({ model: 'my-gpt4o' });
    const raw = await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'hi' }] } });
    expect(raw.text.startsWith(FILTER_FRAME)).to.equal(true);
    const row = await generationOf(env.gw.url, raw.headers.get('x-request-id'));
    expect(row).to.deep.include({ route: 'native' });
    expect(row.tokens.output).to.be.above(0);
  });

  it('v1 API: a Messages client (Claude Code\'s way) is translated; the empty-choices frame does not trip the converter', async () => {
    env.upstream.script(azure((req) => (req.url === '/openai/v1/chat/completions' ? { sse: azureSse(FIXTURES.openaiTextSse()) } : undefined)));
    const message = await anthropic.messages.stream({ model: 'gpt-4o', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
    expect(message.content.find((b) => b.type === 'text')).to.have.property('text').that.is.a('string').and.not.empty;
    expect(env.upstream.last().json()).to.deep.include({ model: 'my-gpt4o', stream_options: { include_usage: true } });
  });

  it('v1 API: the Responses API goes through natively', async () => {
    env.upstream.script(azure((req) => (req.url === '/openai/v1/responses' ? { body: { id: 'resp_az', object: 'response', status: 'completed', model: 'gpt-4o', output: [{ id: 'msg_az', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hi from Azure', annotations: [] }] }], usage: { input_tokens: 3, output_tokens: 4, total_tokens: 7 } }, headers: json } : undefined)));
    const response = await openai.responses.create({ model: 'gpt-4o', input: 'hi', store: false });
    expect(response.output_text).to.equal('Hi from Azure');
    expect(env.upstream.last().url).to.equal('/openai/v1/responses');
  });

  it('deployment URLs with api_version: Chat and Messages clients reach /openai/deployments/{deployment}/chat/completions?api-version=…', async () => {
    const path = '/openai/deployments/my-gpt4o/chat/completions?api-version=2024-10-21';
    env.upstream.script(azure((req) => (req.url === path ? { body: FIXTURES.openaiText(), headers: json } : undefined)));
    const completion = await openai.chat.completions.create({ model: 'gpt-4o-legacy', messages: [{ role: 'user', content: 'hi' }] });
    expect(completion.choices[0]?.message.content).to.be.a('string');
    expect(env.upstream.last().url).to.equal(path);
    env.upstream.script(azure((req) => (req.url === path ? { body: FIXTURES.openaiText(), headers: json } : undefined)));
    const message = await anthropic.messages.create({ model: 'gpt-4o-legacy', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    expect(message.content[0]).to.have.property('type', 'text');
    expect(env.upstream.last().url).to.equal(path);
  });

  it('a content_filter finish is a refusal to a Messages client; a filtered prompt is the 400 Azure sent, in the caller\'s format', async () => {
    const filtered = { ...(JSON.parse(FIXTURES.openaiText().toString()) as Record<string, unknown>), choices: [{ index: 0, message: { role: 'assistant', content: null }, finish_reason: 'content_filter', content_filter_results: { violence: { filtered: true, severity: 'high' } } }] };
    env.upstream.script(azure(() => ({ body: filtered, headers: json })));
    const message = await anthropic.messages.create({ model: 'gpt-4o', max_tokens: 50, messages: [{ role: 'user', content: 'x' }] });
    expect(message.stop_reason).to.equal('refusal');
    env.upstream.script(azure(() => ({ status: 400, body: CONTENT_FILTER_ERROR, headers: json })));
    const chat = await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] } });
    expect(chat.status).to.equal(400);
    expect(chat.json()).to.have.nested.property('error.code', 'content_filter');
    env.upstream.script(azure(() => ({ status: 400, body: CONTENT_FILTER_ERROR, headers: json })));
    const messages = await call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: { model: 'gpt-4o', max_tokens: 50, messages: [{ role: 'user', content: 'x' }] } });
    expect(messages.status).to.equal(400);
    expect(messages.json()).to.have.nested.property('error.type', 'invalid_request_error');
    expect(messages.json()).to.have.nested.property('error.message').that.includes('content management policy');
  });

  it('429 with retry-after-ms: the client is told when to come back', async () => {
    env.upstream.script(azure(() => ({ status: 429, headers: { ...json, 'retry-after-ms': '1500', 'retry-after': '2' }, body: { error: { code: '429', message: 'Requests to the ChatCompletions_Create Operation have exceeded the token rate limit.' } } })));
    const res = await call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: { model: 'gpt-4o', max_tokens: 50, messages: [{ role: 'user', content: 'x' }] } });
    expect(res.status).to.equal(429);
    expect(res.headers.get('retry-after')).to.be.oneOf(['2', '1.5']);
  });

  it('Claude on Azure AI Foundry through the anthropic plugin: /anthropic/v1/messages, the key as x-api-key, the deployment as model', async () => {
    env.upstream.script((req) =>
      req.url === '/anthropic/v1/messages' && req.headers['x-api-key'] === AZURE_KEY ? { sse: FIXTURES.anthropicTextSse() } : { status: 404, headers: json, body: { error: { type: 'not_found_error', message: 'no' } } },
    );
    const message = await anthropic.messages.stream({ model: 'claude-foundry', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
    expect(message.content[0]).to.have.property('type', 'text');
    expect(env.upstream.last().json()).to.include({ model: 'my-claude-deployment' });
  });

  it('a missing base_url stops start-up, naming it', async () => {
    let thrown: unknown;
    try {
      const gw = await startGateway(`
auth: { keys: [{ name: alice, key: "${KEYS.alice}" }] }
providers: [{ id: az, plugin: azure, api_key: k }]
models: [{ id: m, routes: [{ provider: az }], pricing: { input: 1, output: 1 } }]
`);
      await gw.close();
    } catch (err) {
      thrown = err;
    }
    expect(String(thrown)).to.include('providers[0].base_url');
  });

  it('a v1 base_url without the /openai/v1 prefix, and a dated version that refuses what Junction sends, stop start-up', async () => {
    const problem = async (provider: string): Promise<string> => {
      try {
        const gw = await startGateway(`
auth: { keys: [{ name: alice, key: "${KEYS.alice}" }] }
providers: [${provider}]
models: [{ id: m, routes: [{ provider: az }], pricing: { input: 1, output: 1 } }]
`);
        await gw.close();
      } catch (err) {
        return String(err);
      }
      return 'started';
    };
    expect(await problem('{ id: az, plugin: azure, base_url: "https://r.openai.azure.com", api_key: k }')).to.include('providers[0].base_url').and.include('/openai/v1');
    expect(await problem('{ id: az, plugin: azure, base_url: "https://r.openai.azure.com", api_key: k, options: { api_version: 2024-06-01 } }')).to.include('providers[0].options.api_version');
  });
});
