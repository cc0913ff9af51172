import { expect } from 'chai';
import { CHAT_PARAMETERS_VIA_MESSAGES } from '../../src/formats/canonical/chat-request-decode.ts';
import { chatToMessagesRequest } from '../../src/formats/canonical/pairs.ts';
import { call, CHAT_HEADERS, KEYS, startGateway, translationConfig, type TestGateway } from '../support/gateway.ts';

type Json = Record<string, unknown>;

/** The translation config plus a model whose parameters the operator lists by hand. */
const config = (url: string) =>
  translationConfig(url).replace(
    '  - id: demo\n',
    `  - id: o-mini
    routes: [{ provider: openai, model: o4-mini }]
    pricing: { input: 1.1, output: 4.4, reasoning: 4.4, request: 0.002 }
    supported_parameters: [max_tokens, reasoning_effort, tools, tool_choice, response_format]
  - id: demo\n`,
  );

describe('GET /v1/models: pricing and supported_parameters', () => {
  let gw: TestGateway;
  let models: Map<string, Json>;
  before(async () => {
    gw = await startGateway(config('http://127.0.0.1:9'));
    const res = await call(`${gw.url}/v1/models`, { headers: CHAT_HEADERS });
    models = new Map((res.json()['data'] as Json[]).map((m) => [String(m['id']), m]));
  });
  after(() => gw.close());
  const params = (id: string) => models.get(id)?.['supported_parameters'] as string[];

  it("prices each model per token as decimal strings, OpenRouter's convention", () => {
    expect(models.get('o-mini')?.['pricing']).to.deep.equal({
      prompt: '0.0000011',
      completion: '0.0000044',
      input_cache_read: '0.0000011',
      input_cache_write: '0.0000011',
      internal_reasoning: '0.0000044',
      request: '0.002',
    });
    expect(models.get('claude-sonnet-4-6')).to.deep.include({ context_length: 200000 });
  });

  it('lists what a native Chat upstream takes, with its dialect’s reasoning field', () => {
    expect(params('gpt-4o')).to.include.members(['tools', 'tool_choice', 'temperature', 'seed', 'logprobs', 'response_format', 'reasoning_effort']);
    expect(params('gpt-4o')).not.to.include.members(['top_k']);
    // OpenRouter-style: reasoning as `reasoning`, and top_k switched on in its options.
    expect(params('or-claude')).to.include.members(['reasoning', 'include_reasoning', 'top_k', 'tools']);
    expect(params('or-claude')).not.to.include('reasoning_effort');
    // DeepSeek-style: the model decides whether to reason; nothing to ask for.
    expect(params('ds-chat').filter((p) => p.includes('reasoning'))).to.deep.equal([]);
  });

  it('lists what the converter carries for a model reached through a Messages upstream', () => {
    expect(params('claude-sonnet-4-6')).to.deep.equal([...CHAT_PARAMETERS_VIA_MESSAGES]);
    // Refused by the converter, so not advertised.
    expect(params('claude-sonnet-4-6')).not.to.include.members(['logprobs', 'seed', 'frequency_penalty']);
  });

  it("takes the YAML's list over the derived one, and the plugin's declared list over the derived one", () => {
    expect(params('o-mini')).to.deep.equal(['max_tokens', 'reasoning_effort', 'tools', 'tool_choice', 'response_format']);
    // The demo honours max_tokens and a forced tool choice (issue #12).
    expect(params('demo')).to.deep.equal(['max_tokens', 'tools', 'tool_choice']);
  });

  it('the converter list matches what it really carries: each listed parameter reaches the Messages request', () => {
    // A parameter advertised but dropped would be a lie, so the converter itself is asked.
    const request: Json = {
      model: 'x',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 5000,
      temperature: 0.5,
      top_p: 0.9,
      top_k: 5,
      stop: ['END'],
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
      tool_choice: 'auto',
      parallel_tool_calls: false,
      reasoning_effort: 'low',
    };
    const { body } = chatToMessagesRequest(request, { model: 'x', dialect: { defaultMaxTokens: 4096 }, maxOutputTokens: null });
    expect(body).to.deep.include({ max_tokens: 5000, temperature: 0.5, top_p: 0.9, top_k: 5, stop_sequences: ['END'] });
    expect((body['tools'] as Json[]).map((t) => t['name'])).to.deep.equal(['f']);
    expect(body['tool_choice']).to.deep.equal({ type: 'auto', disable_parallel_tool_use: true });
    expect(body['thinking']).to.deep.include({ type: 'enabled' });
    const viaReasoning = chatToMessagesRequest({ ...request, reasoning_effort: undefined, reasoning: { effort: 'low' } }, { model: 'x', dialect: { defaultMaxTokens: 4096 }, maxOutputTokens: null });
    expect(viaReasoning.body['thinking']).to.deep.include({ type: 'enabled' });
    const structured = chatToMessagesRequest(
      { ...request, reasoning_effort: undefined, response_format: { type: 'json_schema', json_schema: { name: 'a', schema: { type: 'object' } } } },
      { model: 'x', dialect: { defaultMaxTokens: 4096 }, maxOutputTokens: null },
    );
    expect(structured.jsonTool).to.be.a('string');
  });

  it('filters by ?supported_parameters=, every listed parameter required', async () => {
    const ids = async (query: string, key: string = KEYS.alice) =>
      ((await call(`${gw.url}/v1/models?${query}`, { headers: { authorization: `Bearer ${key}` } })).json()['data'] as Json[]).map((m) => m['id']);
    expect(await ids('supported_parameters=top_k')).to.deep.equal(['claude-sonnet-4-6', 'claude-same', 'or-claude']);
    expect(await ids('supported_parameters=reasoning_effort,seed')).to.deep.equal(['gpt-4o', 'gpt-same']);
    expect(await ids('supported_parameters=tools&limit=2')).to.deep.equal(['claude-sonnet-4-6', 'claude-same']);
    expect(await ids('supported_parameters=tools', KEYS.restricted)).to.deep.equal(['gpt-4o', 'gpt-same', 'demo']);
  });

  it('GET /v1/models/{id} shows the same entry', async () => {
    const one = (await call(`${gw.url}/v1/models/or-claude`, { headers: CHAT_HEADERS })).json();
    expect(one).to.deep.equal(models.get('or-claude'));
  });
});
