import { expect } from 'chai';
import { call, CHAT_HEADERS, KEYS, MESSAGES_HEADERS, PROVIDER_KEYS, useUpstreamAndGateway } from '../support/gateway.ts';

const PROMPT_CANARY = 'PROMPT-CANARY-7f3a91';

describe('request log', () => {
  const env = useUpstreamAndGateway();

  it('writes one structured line per request with id, key name, model, route, upstream, status, latency and tokens', async () => {
    env.gw.logs.lines.length = 0;
    const res = await call(`${env.gw.url}/v1/messages`, {
      headers: MESSAGES_HEADERS,
      body: { model: 'claude-sonnet-4-6', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] },
    });
    const [line] = await env.gw.requestLogs(1);
    expect(line).to.deep.include({
      msg: 'request',
      req_id: res.headers.get('x-request-id'),
      key_name: 'alice',
      model: 'claude-sonnet-4-6',
      provider: 'anthropic',
      upstream_model: 'claude-sonnet-4-6-20260217',
      route: 'native',
      status: 200,
      upstream_status: 200,
      // The upstream's own id, to trace a ticket across the hop (issue #16).
      upstream_req_id: 'req_upstream_msg',
      method: 'POST',
      path: '/v1/messages',
    });
    expect(line?.['ms']).to.be.a('number');
    expect(line?.['ttfb_ms']).to.be.a('number');
    expect(line?.['tokens']).to.deep.equal({ input: 12, output: 9, cache_read: 0, cache_write: 0, reasoning: 0 });
  });

  it('a translated request logs its upstream\'s own id too', async () => {
    env.gw.logs.lines.length = 0;
    await call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: { model: 'gpt-4o', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] } });
    const [line] = await env.gw.requestLogs(1);
    expect(line).to.deep.include({ route: 'translated', upstream_req_id: 'req_upstream_chat' });
  });

  it('never holds a key, a provider key or prompt text, on any path', async () => {
    env.gw.logs.lines.length = 0;
    env.gw.logs.raw.length = 0;
    const prompt = [{ role: 'user', content: `${PROMPT_CANARY} secret plans` }];
    const requests = [
      call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: { model: 'claude-sonnet-4-6', max_tokens: 5, messages: prompt } }),
      call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: { model: 'claude-sonnet-4-6', max_tokens: 5, stream: true, messages: prompt } }),
      call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model: 'gpt-4o', messages: prompt } }),
      call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model: 'demo', stream: true, messages: prompt } }),
      call(`${env.gw.url}/v1/chat/completions`, { headers: { authorization: 'Bearer sk-jct-WRONG-KEY-CANARY-0000' }, body: { model: 'gpt-4o', messages: prompt } }),
      call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model: 'gpt-4o', temperature: 7, messages: prompt } }),
      call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: `{"model":"gpt-4o","messages":"${PROMPT_CANARY}` }),
    ];
    await Promise.all(requests);
    const lines = await env.gw.requestLogs(requests.length);
    expect(lines).to.have.length(requests.length);
    const all = env.gw.logs.raw.join('\n');
    for (const secret of [KEYS.alice, 'WRONG-KEY-CANARY', PROVIDER_KEYS.anthropic, PROVIDER_KEYS.openai, PROMPT_CANARY, 'secret plans']) {
      expect(all, secret).not.to.include(secret);
    }
  });
});
