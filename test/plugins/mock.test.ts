import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import OpenAI from 'openai';
import { KEYS, startGateway, type TestGateway } from '../support/gateway.ts';

const CONFIG = `
auth: { keys: [{ name: alice, key: "${KEYS.alice}" }] }
providers: [{ id: mock, plugin: mock }]
models:
  - { id: demo, routes: [{ provider: mock }], pricing: { input: 0, output: 0 } }
`;
const EXPECTED = `This is Junction's offline demo model. It received 2 text parts; the last one reads: "Say hello"`;

describe('mock plugin (offline demo provider)', () => {
  let gw: TestGateway;
  let anthropic: Anthropic;
  let openai: OpenAI;
  before(async () => {
    gw = await startGateway(CONFIG);
    anthropic = new Anthropic({ baseURL: gw.url, apiKey: KEYS.alice, maxRetries: 0 });
    openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEYS.alice, maxRetries: 0 });
  });
  after(() => gw.close());

  const messagesParams = { model: 'demo', max_tokens: 100, system: 'Be nice.', messages: [{ role: 'user' as const, content: 'Say hello' }] };
  const chatParams = { model: 'demo', messages: [{ role: 'system' as const, content: 'Be nice.' }, { role: 'user' as const, content: 'Say hello' }] };

  it('answers Messages deterministically, whole and streamed, with the same text and usage', async () => {
    const whole = await anthropic.messages.create(messagesParams);
    const again = await anthropic.messages.create(messagesParams);
    const streamed = await anthropic.messages.stream(messagesParams).finalMessage();
    expect(whole.content).to.deep.equal([{ type: 'text', text: EXPECTED }]);
    expect(again.content).to.deep.equal(whole.content);
    expect(streamed.content.map((b) => b.type === 'text' && b.text)).to.deep.equal([EXPECTED]);
    expect(streamed.stop_reason).to.equal('end_turn');
    expect(streamed.usage.output_tokens).to.equal(whole.usage.output_tokens);
    expect(streamed.usage.input_tokens).to.equal(whole.usage.input_tokens);
    expect(whole.usage.input_tokens).to.equal(Math.ceil('Be nice.'.length / 4) + Math.ceil('Say hello'.length / 4));
  });

  it('answers Chat Completions deterministically, whole and streamed, with usage when asked', async () => {
    const whole = await openai.chat.completions.create(chatParams);
    const streamed = await openai.chat.completions
      .stream({ ...chatParams, stream_options: { include_usage: true } })
      .finalChatCompletion();
    expect(whole.choices[0]?.message.content).to.equal(EXPECTED);
    expect(streamed.choices[0]?.message.content).to.equal(EXPECTED);
    expect(streamed.choices[0]?.finish_reason).to.equal('stop');
    expect(streamed.usage).to.deep.equal(whole.usage);
    const noUsage = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEYS.alice}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...chatParams, stream: true }),
    }).then((r) => r.text());
    expect(noUsage).not.to.include('"choices":[]');
    expect(noUsage.trim().endsWith('data: [DONE]')).to.equal(true);
  });

  it('stops at max_tokens with the right stop reason in both formats', async () => {
    const m = await anthropic.messages.stream({ ...messagesParams, max_tokens: 3 }).finalMessage();
    expect(m.stop_reason).to.equal('max_tokens');
    expect(m.usage.output_tokens).to.equal(3);
    expect(m.content[0]?.type === 'text' && m.content[0].text).to.equal("This is Junction's");
    const c = await openai.chat.completions.create({ ...chatParams, max_completion_tokens: 2 });
    expect(c.choices[0]?.finish_reason).to.equal('length');
    expect(c.choices[0]?.message.content).to.equal('This is');
  });

  it('counts tokens', async () => {
    const count = await anthropic.messages.countTokens({ model: 'demo', messages: [{ role: 'user', content: 'Say hello' }] });
    expect(count.input_tokens).to.equal(3);
  });

  it('logs usage for in-process answers, streamed and not', async () => {
    gw.logs.lines.length = 0;
    await anthropic.messages.create(messagesParams);
    await anthropic.messages.stream(messagesParams).finalMessage();
    const lines = await gw.requestLogs(2);
    for (const line of lines.slice(0, 2)) {
      expect(line).to.include({ route: 'in-process', provider: 'mock', status: 200 });
      expect(line['tokens']).to.deep.equal({ input: 5, output: 17, cache_read: 0, cache_write: 0, reasoning: 0 });
    }
  });
});
