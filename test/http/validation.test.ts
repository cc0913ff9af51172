import { expect } from 'chai';
import net from 'node:net';
import { call, CHAT_HEADERS, MESSAGES_HEADERS, standardConfig, useUpstreamAndGateway } from '../support/gateway.ts';

const user = { role: 'user', content: 'hi' };
const messagesBody = (extra: Record<string, unknown> = {}) => ({ model: 'claude-sonnet-4-6', max_tokens: 16, messages: [user], ...extra });
const chatBody = (extra: Record<string, unknown> = {}) => ({ model: 'gpt-4o', messages: [user], ...extra });

describe('request validation', () => {
  const env = useUpstreamAndGateway((url) => standardConfig(url).replace('log: { level: info }', 'log: { level: info }\nserver: { max_body_mb: 0.01 }'));

  const messagesError = async (body: unknown) => {
    const res = await call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body });
    expect(env.upstream.requests, 'nothing may reach the upstream').to.have.length(0);
    return { status: res.status, error: res.json()['error'] as { type: string; message: string } };
  };
  const chatError = async (body: unknown) => {
    const res = await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body });
    expect(env.upstream.requests, 'nothing may reach the upstream').to.have.length(0);
    return { status: res.status, error: res.json()['error'] as { type: string; message: string; param: string | null; code: string | null } };
  };

  describe('Messages', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['a missing model', { max_tokens: 16, messages: [user] }, 'model: is required'],
      ['a missing max_tokens', { model: 'claude-sonnet-4-6', messages: [user] }, 'max_tokens: is required'],
      ['max_tokens of 0', messagesBody({ max_tokens: 0 }), 'max_tokens: must be >= 1'],
      ['a fractional max_tokens', messagesBody({ max_tokens: 1.5 }), 'max_tokens: must be an integer, got 1.5'],
      ['a string max_tokens', messagesBody({ max_tokens: '16' }), 'max_tokens: must be number, got string'],
      ['missing messages', { model: 'claude-sonnet-4-6', max_tokens: 16 }, 'messages: is required'],
      ['empty messages', messagesBody({ messages: [] }), 'messages: must have at least 1 item'],
      ['an unknown role', messagesBody({ messages: [user, { role: 'bot', content: 'x' }] }), 'messages.1.role: must be one of "user", "assistant", "system", got "bot"'],
      ['content of the wrong type', messagesBody({ messages: [{ role: 'user', content: 5 }] }), 'messages.0.content: must be string or array, got number'],
      ['a content block without type', messagesBody({ messages: [{ role: 'user', content: [{ text: 'x' }] }] }), 'messages.0.content.0.type: is required'],
      ['temperature above 1', messagesBody({ temperature: 1.5 }), 'temperature: must be <= 1'],
      ['stream that is not a boolean', messagesBody({ stream: 'yes' }), 'stream: must be boolean, got string'],
    ];
    for (const [what, body, message] of cases) {
      it(`answers 400 naming the field for ${what}`, async () => {
        const { status, error } = await messagesError(body);
        expect(status).to.equal(400);
        expect(error).to.deep.equal({ type: 'invalid_request_error', message });
      });
    }

    it('accepts a system message mid-conversation (Claude Code) and fields it does not know', async () => {
      const body = messagesBody({
        messages: [user, { role: 'system', content: 'be brief' }, { role: 'assistant', content: 'ok' }, user],
        brand_new_field: { nested: [1, 2] },
        context_management: { edits: [] },
      });
      const res = await call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body });
      expect(res.status).to.equal(200);
      expect(env.upstream.last().json()).to.deep.include({ brand_new_field: { nested: [1, 2] }, context_management: { edits: [] } });
    });

    it('validates count_tokens without max_tokens', async () => {
      const res = await call(`${env.gw.url}/v1/messages/count_tokens`, {
        headers: MESSAGES_HEADERS,
        body: { model: 'claude-sonnet-4-6', messages: [user] },
      });
      expect(res.status).to.equal(200);
      const bad = await call(`${env.gw.url}/v1/messages/count_tokens`, { headers: MESSAGES_HEADERS, body: { model: 'claude-sonnet-4-6' } });
      expect(bad.status).to.equal(400);
      expect(bad.text).to.include('messages: is required');
    });
  });

  describe('Chat Completions', () => {
    const cases: [string, Record<string, unknown>, string, string][] = [
      ['a missing model', { messages: [user] }, 'model', 'is required'],
      ['missing messages', { model: 'gpt-4o' }, 'messages', 'is required'],
      ['empty messages', chatBody({ messages: [] }), 'messages', 'must have at least 1 item'],
      ['an unknown role', chatBody({ messages: [{ role: 'robot', content: 'x' }] }), 'messages[0].role', 'must be one of "system", "developer", "user", "assistant", "tool", "function", got "robot"'],
      ['a tool message without tool_call_id', chatBody({ messages: [{ role: 'tool', content: 'x' }] }), 'messages[0].tool_call_id', 'is required'],
      ['temperature above 2', chatBody({ temperature: 2.5 }), 'temperature', 'must be <= 2'],
      ['top_p above 1', chatBody({ top_p: 1.01 }), 'top_p', 'must be <= 1'],
      ['frequency_penalty below -2', chatBody({ frequency_penalty: -2.1 }), 'frequency_penalty', 'must be >= -2'],
      ['presence_penalty above 2', chatBody({ presence_penalty: 3 }), 'presence_penalty', 'must be <= 2'],
      ['five stop strings', chatBody({ stop: ['a', 'b', 'c', 'd', 'e'] }), 'stop', 'must have at most 4 items'],
      ['a numeric stop', chatBody({ stop: 7 }), 'stop', 'must be string or array, got number'],
      ['n of 0', chatBody({ n: 0 }), 'n', 'must be >= 1'],
      ['max_completion_tokens of 0', chatBody({ max_completion_tokens: 0 }), 'max_completion_tokens', 'must be >= 1'],
    ];
    for (const [what, body, param, message] of cases) {
      it(`answers 400 with param "${param}" for ${what}`, async () => {
        const { status, error } = await chatError(body);
        expect(status).to.equal(400);
        expect(error).to.deep.equal({ message: `${param}: ${message}`, type: 'invalid_request_error', param, code: 'invalid_value' });
      });
    }

    it('accepts stop as one string or up to 4, null limits, and unknown fields', async () => {
      for (const extra of [{ stop: 'END' }, { stop: ['a', 'b', 'c', 'd'] }, { temperature: null, top_p: 0 }, { brand_new: true }]) {
        const res = await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: chatBody(extra) });
        expect(res.status, JSON.stringify(extra)).to.equal(200);
      }
    });
  });

  describe('bodies', () => {
    it('answers 400 for invalid JSON in the caller format', async () => {
      const m = await messagesError('{"model": "claude-sonnet-4-6",');
      expect(m.status).to.equal(400);
      expect(m.error.message).to.match(/^request body is not valid JSON: /);
      const c = await chatError('not json');
      expect(c.status).to.equal(400);
      expect(c.error.type).to.equal('invalid_request_error');
    });

    it('answers 400 for a body that is not an object', async () => {
      const { status, error } = await chatError('[1,2]');
      expect(status).to.equal(400);
      expect(error.message).to.equal('request body must be a JSON object');
    });

    it('answers 400 for nesting deeper than 128 levels, before parsing it', async () => {
      const deep = `{"model":"gpt-4o","messages":[{"role":"user","content":"x"}],"x":${'['.repeat(200)}${']'.repeat(200)}}`;
      const { status, error } = await chatError(deep);
      expect(status).to.equal(400);
      expect(error.message).to.equal('request body nests deeper than 128 levels');
      const fine = `{"model":"gpt-4o","messages":[{"role":"user","content":"x"}],"x":${'['.repeat(100)}${']'.repeat(100)}}`;
      const res = await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: fine });
      expect(res.status).to.equal(200);
      env.upstream.reset();
    });

    it('answers 413 request_too_large for a body over max_body_mb, declared or streamed', async () => {
      const big = JSON.stringify(messagesBody({ pad: 'x'.repeat(20_000) }));
      const { status, error } = await messagesError(big);
      expect(status).to.equal(413);
      expect(error.type).to.equal('request_too_large');
      // Chunked upload with no content-length: the limit applies while reading.
      const res = await fetch(`${env.gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: CHAT_HEADERS,
        body: new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(JSON.stringify(chatBody({ pad: 'y'.repeat(20_000) }))));
            controller.close();
          },
        }),
        duplex: 'half',
      } as RequestInit);
      expect(res.status).to.equal(413);
      expect(((await res.json()) as { error: { type: string } }).error.type).to.equal('request_too_large');
      expect(env.upstream.requests).to.have.length(0);
    });

    it('records a client that hangs up mid-upload as 499, not as a gateway fault', async () => {
      const logged = env.gw.logs.requests().length;
      const url = new URL(env.gw.url);
      const socket = net.connect(Number(url.port), url.hostname);
      await new Promise((r) => socket.once('connect', r));
      socket.write(
        `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: ${CHAT_HEADERS.authorization}\r\n` +
          'content-type: application/json\r\ncontent-length: 5000\r\n\r\n{"model":"gpt-4o",',
      );
      await new Promise((r) => setTimeout(r, 50));
      socket.destroy();
      const line = (await env.gw.requestLogs(logged + 1))[logged];
      expect(line).to.deep.include({ path: '/v1/chat/completions', status: 499, error: 'GW_ERR_CLIENT_CLOSED', key_name: 'alice' });
      expect(env.gw.logs.lines.filter((l) => l['msg'] === 'unhandled error')).to.deep.equal([]);
      expect(env.upstream.requests).to.have.length(0);
    });

    it('answers 415 for a content coding it does not read, and 400 for a body its coding does not describe', async () => {
      const unknown = await call(`${env.gw.url}/v1/messages`, {
        headers: { ...MESSAGES_HEADERS, 'content-encoding': 'compress' },
        body: messagesBody(),
      });
      expect(unknown.status).to.equal(415);
      const notGzip = await call(`${env.gw.url}/v1/messages`, {
        headers: { ...MESSAGES_HEADERS, 'content-encoding': 'gzip' },
        body: messagesBody(),
      });
      expect(notGzip.status).to.equal(400);
      expect(env.upstream.requests).to.have.length(0);
    });
  });
});
