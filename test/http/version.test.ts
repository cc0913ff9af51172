import { expect } from 'chai';
import { call, KEYS, useUpstreamAndGateway } from '../support/gateway.ts';

const body = { model: 'claude-sonnet-4-6', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };

describe('anthropic-version', () => {
  const env = useUpstreamAndGateway();

  for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
    it(`is required on ${path}: 400 with the API's exact message, nothing sent upstream`, async () => {
      const res = await call(`${env.gw.url}${path}`, { headers: { 'x-api-key': KEYS.alice }, body });
      expect(res.status).to.equal(400);
      expect(res.json()['error']).to.deep.equal({ type: 'invalid_request_error', message: 'anthropic-version: header is required' });
      expect(env.upstream.requests).to.have.length(0);
    });
  }

  for (const bad of ['latest', '2023-13-01', '2023-02-30', '2023-01-01', '20230601']) {
    it(`refuses "${bad}" with 400`, async () => {
      const res = await call(`${env.gw.url}/v1/messages`, { headers: { 'x-api-key': KEYS.alice, 'anthropic-version': bad }, body });
      expect(res.status).to.equal(400);
      expect((res.json()['error'] as { message: string }).message).to.include(`"${bad}"`);
      expect(env.upstream.requests).to.have.length(0);
    });
  }

  for (const good of ['2023-06-01', '2026-10-21', '2031-01-01']) {
    it(`accepts ${good} and forwards it unchanged on a native route`, async () => {
      const res = await call(`${env.gw.url}/v1/messages`, { headers: { 'x-api-key': KEYS.alice, 'anthropic-version': good }, body });
      expect(res.status).to.equal(200);
      expect(env.upstream.last().headers['anthropic-version']).to.equal(good);
    });
  }

  it('is not required on the chat endpoint', async () => {
    const res = await call(`${env.gw.url}/v1/chat/completions`, {
      headers: { authorization: `Bearer ${KEYS.alice}` },
      body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(res.status).to.equal(200);
  });
});
