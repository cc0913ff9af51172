import Anthropic from '@anthropic-ai/sdk';
import AnthropicV0 from '@anthropic-ai/sdk-v0';
import { expect } from 'chai';
import { FakeUpstream, FIXTURES } from '../support/fake-upstream.ts';
import { KEYS, PROVIDER_KEYS, standardConfig, startGateway, type TestGateway } from '../support/gateway.ts';

/** The two SDK lines in use (real-clients.md): 1.x sends Bearer and a 2026 version, 0.x x-api-key and 2023-06-01. */
const STYLES = [
  {
    name: 'Anthropic SDK 1.x (Bearer)',
    client: (baseURL: string, apiKey: string) => new Anthropic({ baseURL, apiKey, maxRetries: 0 }),
    credentialHeader: 'authorization',
    version: '2026-10-21',
  },
  {
    name: 'Anthropic SDK 0.x (x-api-key)',
    client: (baseURL: string, apiKey: string) => new AnthropicV0({ baseURL, apiKey, maxRetries: 0 }) as unknown as Anthropic,
    credentialHeader: 'x-api-key',
    version: '2023-06-01',
  },
] as const;

const WEATHER_TOOL = {
  name: 'weather',
  description: 'Get weather information for a location',
  input_schema: { type: 'object' as const, properties: { location: { type: 'string' } }, required: ['location'] },
};

for (const style of STYLES) {
  describe(`${style.name} through a native route`, () => {
    let upstream: FakeUpstream;
    let gw: TestGateway;
    let client: Anthropic;
    before(async () => {
      upstream = await new FakeUpstream().start();
      gw = await startGateway(standardConfig(upstream.url));
      client = style.client(gw.url, KEYS.alice);
    });
    after(async () => {
      await gw.close();
      await upstream.close();
    });
    afterEach(() => upstream.reset());

    it('sends its own credential style, which the gateway accepts and never forwards', async () => {
      await client.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
      const seen = upstream.last();
      expect(seen.headers['anthropic-version']).to.equal(style.version);
      expect(seen.headers['x-api-key']).to.equal(PROVIDER_KEYS.anthropic);
      expect(seen.headers['authorization']).to.equal(undefined);
      expect(seen.rawHeaders.join('\n')).not.to.include(KEYS.alice);
      expect(seen.json()['model']).to.equal('claude-sonnet-4-6-20260217');
    });

    it('messages.create returns the upstream message', async () => {
      const message = await client.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
      expect(message.content).to.deep.equal([{ type: 'text', text: 'Hello! How can I help?' }]);
      expect(message.usage.input_tokens).to.equal(12);
    });

    it('messages.stream().finalMessage() assembles thinking, text and tool_use with their usage', async () => {
      const stream = client.messages.stream({
        model: 'claude-sonnet-4-6',
        max_tokens: 2048,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        tools: [WEATHER_TOOL],
        messages: [{ role: 'user', content: "What's the weather in Florence?" }],
      });
      const message = await stream.finalMessage();
      expect(upstream.last().headers['x-stainless-helper-method']).to.equal('stream');
      expect(message.content.map((b) => b.type)).to.deep.equal(['thinking', 'text', 'tool_use']);
      const [thinking, , toolUse] = message.content;
      expect(thinking).to.deep.include({
        thinking: 'The user wants the weather in Florence. I should call the weather tool.',
        signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds',
      });
      expect(toolUse).to.deep.include({ id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'weather', input: { location: 'Florence, Italy' } });
      expect(message.stop_reason).to.equal('tool_use');
      expect(message.usage).to.deep.include({ input_tokens: 424, output_tokens: 89, cache_read_input_tokens: 200 });
    });

    it('runs a tool loop: the second turn carries thinking, tool_use and tool_result upstream unchanged', async () => {
      const first = await client.messages
        .stream({
          model: 'claude-sonnet-4-6',
          max_tokens: 2048,
          thinking: { type: 'enabled', budget_tokens: 1024 },
          tools: [WEATHER_TOOL],
          messages: [{ role: 'user', content: "What's the weather in Florence?" }],
        })
        .finalMessage();
      const toolUse = first.content.find((b) => b.type === 'tool_use');
      if (toolUse?.type !== 'tool_use') throw new Error('expected a tool_use block');
      const secondParams = {
        model: 'claude-sonnet-4-6',
        max_tokens: 2048,
        thinking: { type: 'enabled' as const, budget_tokens: 1024 },
        tools: [WEATHER_TOOL],
        messages: [
          { role: 'user' as const, content: "What's the weather in Florence?" },
          { role: 'assistant' as const, content: first.content },
          { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: toolUse.id, content: '40 C', is_error: false }] },
        ],
      };
      upstream.script(() => ({ sse: FIXTURES.anthropicTextSse() }));
      const second = await client.messages.stream(secondParams as Anthropic.MessageCreateParams).finalMessage();
      expect(second.content).to.deep.equal([{ type: 'text', text: 'Hello!' }]);
      const sent = upstream.last().json() as { messages: { content: unknown }[] };
      expect(sent.messages[1]?.content).to.deep.equal(JSON.parse(JSON.stringify(first.content)));
      expect(sent.messages[2]?.content).to.deep.equal([{ type: 'tool_result', tool_use_id: toolUse.id, content: '40 C', is_error: false }]);
    });

    it('messages.countTokens is answered by the upstream count_tokens', async () => {
      const count = await client.messages.countTokens({ model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'Hello, world' }] });
      expect(count.input_tokens).to.equal(14);
      expect(upstream.last().url).to.equal('/v1/messages/count_tokens');
    });

    it('models.list() pages through the catalogue', async () => {
      const ids: string[] = [];
      for await (const model of client.models.list({ limit: 2 })) {
        ids.push(model.id);
        expect(model.type).to.equal('model');
        expect(model.display_name).to.be.a('string');
        expect(model.created_at).to.match(/^\d{4}-\d{2}-\d{2}T/);
      }
      expect(ids).to.deep.equal(['claude-sonnet-4-6', 'claude-same', 'gpt-4o', 'gpt-same', 'demo']);
      const one = await client.models.retrieve('claude-sonnet-4-6');
      expect(one.display_name).to.equal('Claude Sonnet 4.5');
    });

    it('raises typed errors with the gateway request id', async () => {
      const notFound = await client.messages
        .create({ model: 'no-such-model', max_tokens: 1, messages: [{ role: 'user', content: 'x' }] })
        .catch((err: unknown) => err);
      expect(notFound).to.be.instanceOf(style.name.includes('0.x') ? AnthropicV0.NotFoundError : Anthropic.NotFoundError);
      const apiError = notFound as InstanceType<typeof Anthropic.APIError>;
      expect(apiError.status).to.equal(404);
      expect(apiError.requestID).to.match(/^req_[0-9a-f]{32}$/);
      expect(apiError.error).to.deep.include({ type: 'error', error: { type: 'not_found_error', message: 'model "no-such-model" not found' } });
      const badKey = await style
        .client(gw.url, 'sk-jct-not-a-real-key-00000')
        .messages.create({ model: 'claude-sonnet-4-6', max_tokens: 1, messages: [{ role: 'user', content: 'x' }] })
        .catch((err: unknown) => err);
      expect((badKey as InstanceType<typeof Anthropic.APIError>).status).to.equal(401);
      expect(upstream.requests).to.have.length(0);
    });

    it('raises when the upstream cuts a stream, rather than returning a partial message', async () => {
      upstream.script(() => ({ sse: FIXTURES.anthropicToolSse(), resetAfterEvents: 5 }));
      const outcome = await client.messages
        .stream({ model: 'claude-sonnet-4-6', max_tokens: 64, messages: [{ role: 'user', content: 'x' }] })
        .finalMessage()
        .then(
          () => 'resolved',
          (err: unknown) => err,
        );
      expect(outcome).to.be.instanceOf(Error);
      expect(String(outcome)).to.include('ended the response early');
    });
  });
}
