import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { FakeUpstream } from '../support/fake-upstream.ts';
import { KEYS, PROVIDER_KEYS, standardConfig, startGateway, type TestGateway } from '../support/gateway.ts';

// A real Claude Code 2.1 request (76 KB, 24 tools) and its headers (see fixtures/claude-code/README.md).
const SHARED = new URL('../fixtures/claude-code/', import.meta.url);
const BODY = readFileSync(new URL('claude-code-request.json', SHARED));
const CAPTURED = JSON.parse(readFileSync(new URL('claude-code-request.headers.json', SHARED), 'utf8')) as {
  url: string;
  headers: Record<string, string>;
};

describe('the real Claude Code request through a native route', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  const model = (JSON.parse(BODY.toString('utf8')) as { model: string }).model;

  before(async () => {
    upstream = await new FakeUpstream().start();
    // Claude Code sends the model id verbatim (ANTHROPIC_MODEL), so the catalogue names it.
    gw = await startGateway(
      standardConfig(upstream.url, `
  - id: ${model}
    routes: [{ provider: anthropic }]
    pricing: { input: 5, output: 25 }
  - id: opus-alias
    routes: [{ provider: anthropic, model: ${model} }]
    pricing: { input: 5, output: 25 }
`),
    );
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });
  afterEach(() => upstream.reset());

  const send = (body: Buffer) => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(CAPTURED.headers)) {
      if (!['host', 'content-length', 'connection'].includes(name)) headers[name] = value;
    }
    headers['x-api-key'] = KEYS.alice;
    return fetch(`${gw.url}${CAPTURED.url}`, { method: 'POST', headers, body });
  };

  it('arrives upstream byte for byte, at /v1/messages?beta=true, with its betas and without the client key', async () => {
    const res = await send(BODY);
    expect(res.status).to.equal(200);
    await res.text();
    const seen = upstream.last();
    expect(seen.url).to.equal('/v1/messages?beta=true');
    expect(seen.body.length).to.equal(BODY.length);
    expect(seen.body.equals(BODY)).to.equal(true);
    expect(seen.headers['anthropic-beta']).to.equal(CAPTURED.headers['anthropic-beta']);
    expect(seen.headers['anthropic-version']).to.equal('2023-06-01');
    expect(seen.headers['x-stainless-package-version']).to.equal('0.94.0');
    expect(seen.headers['x-claude-code-session-id']).to.equal(CAPTURED.headers['x-claude-code-session-id']);
    expect(seen.headers['x-api-key']).to.equal(PROVIDER_KEYS.anthropic);
    expect(seen.rawHeaders.join('\n')).not.to.include(KEYS.alice);
  });

  it('changes only the model value when the catalogue id differs from the upstream name', async () => {
    const renamed = Buffer.from(BODY.toString('utf8').replace(`"model": "${model}"`, '"model": "opus-alias"'));
    expect(renamed.equals(BODY)).to.equal(false);
    const res = await send(renamed);
    expect(res.status).to.equal(200);
    await res.text();
    expect(upstream.last().body.equals(BODY)).to.equal(true);
  });

  it('streams the answer back as the SSE the upstream sent', async () => {
    const res = await send(BODY);
    expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
    const text = await res.text();
    expect(text.startsWith('event: message_start\n')).to.equal(true);
    expect(text.trim().endsWith('event: message_stop\ndata: {"type":"message_stop"}')).to.equal(true);
  });
});
