import { expect } from 'chai';
import http from 'node:http';
import { FIXTURES, UPSTREAM_SECRET_HEADERS } from '../support/fake-upstream.ts';
import {
  call,
  CHAT_HEADERS,
  KEYS,
  MESSAGES_HEADERS,
  PROVIDER_KEYS,
  standardConfig,
  startGateway,
  useUpstreamAndGateway,
} from '../support/gateway.ts';
import { TestClock } from '../support/clock.ts';

describe('native passthrough', () => {
  // Retry waits on a test clock: a retry-after of 7 s is waited out at once, and asserted (issue #12).
  const clock = new TestClock();
  const env = useUpstreamAndGateway(undefined, { clock });

  describe('request bytes', () => {
    // Odd but valid JSON: spacing, key order, escapes, non-ASCII. None of it may change.
    const odd = (model: string) =>
      `{ "max_tokens" :16,\n  "model" :  "${model}" ,"messages":[{"role":"user","content":"caf\\u00e9 — ✓ \\"quoted\\" \\\\"}],` +
      `"metadata":{"user_id":"u1","model":"nested-not-rewritten"},"x_unknown":[1.50,2e3]}\n`;

    it('arrives byte for byte when the route keeps the model name', async () => {
      const sent = odd('claude-same');
      const res = await call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: sent });
      expect(res.status).to.equal(200);
      expect(env.upstream.last().body.equals(Buffer.from(sent))).to.equal(true);
      expect(env.upstream.last().headers['content-length']).to.equal(String(Buffer.byteLength(sent)));
    });

    it('changes only the top-level model value when the route names another upstream model', async () => {
      const sent = odd('claude-sonnet-4-6');
      await call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: sent });
      const expected = sent.replace('"model" :  "claude-sonnet-4-6"', '"model" :  "claude-sonnet-4-6-20260217"');
      expect(env.upstream.last().body.toString('utf8')).to.equal(expected);
      expect(env.upstream.last().headers['content-length']).to.equal(String(Buffer.byteLength(expected)));
    });

    it('uses the last of duplicate model keys, as JSON.parse does', async () => {
      const sent = '{"model":"nope","max_tokens":16,"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}';
      await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: sent });
      expect(env.upstream.last().body.toString()).to.equal(sent.replace('"model":"gpt-4o"', '"model":"gpt-4o-2024-08-06"'));
    });

    it('still routes correctly when the model key is written with escapes', async () => {
      const sent = '{"mod\\u0065l":"gpt-4o","messages":[{"role":"user","content":"hi"}]}';
      const res = await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: sent });
      expect(res.status).to.equal(200);
      expect(env.upstream.last().json()['model']).to.equal('gpt-4o-2024-08-06');
    });

    it('forwards the query string (Claude Code sends ?beta=true)', async () => {
      await call(`${env.gw.url}/v1/messages?beta=true`, { headers: MESSAGES_HEADERS, body: { model: 'claude-same', max_tokens: 1, messages: [{ role: 'user', content: 'x' }] } });
      expect(env.upstream.last().url).to.equal('/v1/messages?beta=true');
      await call(`${env.gw.url}/v1/messages/count_tokens?beta=true`, { headers: MESSAGES_HEADERS, body: { model: 'claude-same', messages: [{ role: 'user', content: 'x' }] } });
      expect(env.upstream.last().url).to.equal('/v1/messages/count_tokens?beta=true');
    });

    it('sends chat requests to base_url + /chat/completions (OpenAI SDK convention)', async () => {
      await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] } });
      expect(env.upstream.last().url).to.equal('/v1/chat/completions');
    });

    it('sends a base_url with a path of its own to that path, and the chain still sees the client\'s (issue #17)', async () => {
      // The upstream's path rides on the client request for the length of http-proxy-3's web()
      // (passthrough.ts): the request log, written after dispatch, must show the client's own.
      const prefixed = await startGateway(standardConfig(env.upstream.url).replace(`${env.upstream.url}/v1"`, `${env.upstream.url}/tenant%20a/v1"`), { clock });
      env.upstream.script(() => ({ body: FIXTURES.openaiText() }));
      try {
        prefixed.logs.lines.length = 0;
        const res = await call(`${prefixed.url}/v1/chat/completions?trace=on`, { headers: CHAT_HEADERS, body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] } });
        expect(res.status).to.equal(200);
        expect(env.upstream.last().url).to.equal('/tenant%20a/v1/chat/completions?trace=on');
        const [line] = await prefixed.requestLogs(1);
        expect(line).to.deep.include({ method: 'POST', path: '/v1/chat/completions', status: 200 });
      } finally {
        env.upstream.script(undefined);
        await prefixed.close();
      }
    });
  });

  describe('request headers', () => {
    const hostile = {
      cookie: 'session=abc',
      'proxy-authorization': 'Basic Zm9v',
      'x-forwarded-for': '6.6.6.6',
      'x-real-ip': '6.6.6.6',
      forwarded: 'for=6.6.6.6',
      'x-custom-header': 'not-allowlisted',
      'openai-organization': 'org-client-chosen',
    };

    it('forwards only allowlisted headers and swaps the client key for the provider key (Messages)', async () => {
      await call(`${env.gw.url}/v1/messages`, {
        headers: {
          ...MESSAGES_HEADERS,
          ...hostile,
          'anthropic-beta': 'interleaved-thinking-2025-05-14,context-1m-2025-08-07',
          'x-stainless-retry-count': '0',
          'x-app': 'cli',
          'x-claude-code-session-id': 's-1',
          'user-agent': 'claude-cli/2.1.197',
        },
        body: { model: 'claude-same', max_tokens: 1, messages: [{ role: 'user', content: 'x' }] },
      });
      const seen = env.upstream.last().headers;
      expect(seen['x-api-key']).to.equal(PROVIDER_KEYS.anthropic);
      expect(seen['authorization']).to.equal(undefined);
      expect(seen).to.include({
        'anthropic-version': '2023-06-01',
        'anthropic-beta': 'interleaved-thinking-2025-05-14,context-1m-2025-08-07',
        'x-stainless-retry-count': '0',
        'x-app': 'cli',
        'x-claude-code-session-id': 's-1',
        'user-agent': 'claude-cli/2.1.197',
        'content-type': 'application/json',
        'accept-encoding': 'identity',
        host: new URL(env.upstream.url).host,
      });
      for (const name of Object.keys(hostile)) expect(seen, name).not.to.have.property(name);
    });

    it('sends the provider key as Bearer for Chat upstreams and nothing of the client key', async () => {
      await call(`${env.gw.url}/v1/chat/completions`, {
        headers: { ...CHAT_HEADERS, ...hostile, 'x-stainless-lang': 'js' },
        body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] },
      });
      const seen = env.upstream.last();
      expect(seen.headers['authorization']).to.equal(`Bearer ${PROVIDER_KEYS.openai}`);
      expect(seen.headers['x-stainless-lang']).to.equal('js');
      expect(seen.headers['x-api-key']).to.equal(undefined);
      expect(seen.rawHeaders.join('\n')).not.to.include(KEYS.alice);
      for (const name of Object.keys(hostile)) expect(seen.headers, name).not.to.have.property(name);
    });
  });

  describe('responses', () => {
    it('relays a JSON answer byte for byte, without provider account headers', async () => {
      const res = await call(`${env.gw.url}/v1/messages`, {
        headers: MESSAGES_HEADERS,
        body: { model: 'claude-sonnet-4-6', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
      });
      expect(res.status).to.equal(200);
      expect(res.text).to.equal(FIXTURES.anthropicText());
      for (const name of Object.keys(UPSTREAM_SECRET_HEADERS)) expect(res.headers.has(name), name).to.equal(false);
      expect(res.headers.get('content-type')).to.equal('application/json');
      expect(res.headers.get('upstream-request-id')).to.equal('req_upstream_msg');
      const ours = res.headers.get('x-request-id');
      expect(ours).to.match(/^req_[0-9a-f]{32}$/);
      expect(res.headers.get('request-id')).to.equal(ours);
    });

    it('relays an SSE stream byte for byte', async () => {
      const res = await call(`${env.gw.url}/v1/messages`, {
        headers: MESSAGES_HEADERS,
        body: { model: 'claude-sonnet-4-6', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'hi' }] },
      });
      expect(res.headers.get('content-type')).to.equal('text/event-stream; charset=utf-8');
      expect(res.text).to.equal(FIXTURES.anthropicTextSse());
      const chat = await call(`${env.gw.url}/v1/chat/completions`, {
        headers: CHAT_HEADERS,
        body: { model: 'gpt-4o', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] },
      });
      // The one change on a native Chat stream: the usage chunk the client asked for carries the
      // cost at the model's prices (gpt-4o: 15×$2.50 + 4 cached×$1.25 + 7×$10 per million).
      expect(chat.text).to.equal(FIXTURES.openaiTextSse().replace('"rejected_prediction_tokens":0}}}', '"rejected_prediction_tokens":0},"cost":0.0001125}}'));
      expect(chat.headers.get('upstream-request-id')).to.equal('req_upstream_chat');
      expect(chat.headers.get('x-request-id')).to.match(/^req_/);
    });

    it('asks a Chat upstream for usage on every stream, and keeps the usage chunk from a client that did not ask', async () => {
      const logged = env.gw.logs.requests().length;
      const res = await call(`${env.gw.url}/v1/chat/completions`, {
        headers: CHAT_HEADERS,
        body: `{"model":"gpt-4o", "stream":true,"messages":[{"role":"user","content":"hi"}]}`,
      });
      expect(env.upstream.last().body.toString()).to.equal(
        '{"model":"gpt-4o-2024-08-06", "stream":true,"messages":[{"role":"user","content":"hi"}],"stream_options":{"include_usage":true}}',
      );
      const withoutUsageChunk = FIXTURES.openaiTextSse().split('\n\n').filter((e) => !e.includes('"choices":[]')).join('\n\n');
      expect(res.text.replace(/\n+/g, '\n')).to.equal(withoutUsageChunk.replace(/\n+/g, '\n'));
      const line = (await env.gw.requestLogs(logged + 1))[logged]!;
      expect(line['tokens']).to.deep.include({ input: 15, output: 7, cache_read: 4 });
      expect(line).to.include({ cost_usd: '0.0001125' });
      expect(line).not.to.have.property('estimated');
    });

    it('adds usage.cost to a whole Chat answer and changes no other byte', async () => {
      const res = await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] } });
      expect(res.text).to.equal(FIXTURES.openaiText().replace('"rejected_prediction_tokens":0}}', '"rejected_prediction_tokens":0},"cost":0.0001125}'));
      expect(res.headers.get('content-length')).to.equal(String(Buffer.byteLength(res.text)));
    });

    it('splices usage.cost into a usage written with whitespace, and replaces a cost the upstream sent', async () => {
      // The cost is spliced in before the usage's closing brace: the upstream's own bytes stay as
      // they came, spaces and key order included (issue #17). A usage with its own cost (OpenRouter)
      // gets ours in its place, as one object: a second "cost" key would be invalid for strict parsers.
      const pretty = JSON.stringify(JSON.parse(FIXTURES.openaiText()), null, 2);
      const usageClose = pretty.indexOf('\n  }', pretty.indexOf('"usage"')) + 3;
      const withCost = JSON.stringify({ ...JSON.parse(FIXTURES.openaiText()), usage: { prompt_tokens: 19, completion_tokens: 7, cost: 9.99 } });
      const empty = JSON.stringify({ ...JSON.parse(FIXTURES.openaiText()), usage: {} });
      const cases = [
        [pretty, `${pretty.slice(0, usageClose)},"cost":0.0001125${pretty.slice(usageClose)}`],
        [withCost, withCost.replace('"cost":9.99', '"cost":0.0001175')],
        [empty, empty.replace('"usage":{}', '"usage":{"cost":0}')],
      ] as const;
      for (const [answer, expected] of cases) {
        env.upstream.script(() => ({ headers: { 'content-type': 'application/json' }, body: answer }));
        const res = await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] } });
        expect(res.text).to.equal(expected);
        expect(res.headers.get('content-length')).to.equal(String(Buffer.byteLength(res.text)));
      }
    });

    it('adds usage.cost to a whole Chat answer that arrives in pieces, cut inside its usage', async () => {
      // The usage tap joins the pieces and finds the usage once; usage.cost is written from that.
      const answer = Buffer.from(FIXTURES.openaiText());
      const at = answer.indexOf('"prompt_tokens"') + 5;
      const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
      env.upstream.script(() => ({ binary: { chunks: [answer.subarray(0, at), answer.subarray(at, at + 9), answer.subarray(at + 9)], contentType: 'application/json', afterFirst: turn().then(turn) } }));
      const res = await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] } });
      expect(res.text).to.equal(FIXTURES.openaiText().replace('"rejected_prediction_tokens":0}}', '"rejected_prediction_tokens":0},"cost":0.0001125}'));
      expect(res.headers.get('content-length')).to.equal(String(Buffer.byteLength(res.text)));
    });

    for (const [status, type] of [
      [400, 'invalid_request_error'],
      [429, 'rate_limit_error'],
      [500, 'api_error'],
      [529, 'overloaded_error'],
    ] as const) {
      it(`relays an upstream ${status} with its body and retry-after`, async () => {
        const body = `{"type":"error","error":{"type":"${type}","message":"from upstream"},"request_id":"req_up"}`;
        env.upstream.script(() => ({ status, headers: { 'retry-after': '7', ...UPSTREAM_SECRET_HEADERS }, body }));
        const res = await call(`${env.gw.url}/v1/messages`, {
          headers: MESSAGES_HEADERS,
          body: { model: 'claude-sonnet-4-6', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
        });
        expect(res.status).to.equal(status);
        expect(res.text).to.equal(body);
        expect(res.headers.get('retry-after')).to.equal('7');
        expect(res.headers.has('set-cookie')).to.equal(false);
        // A 400 is never retried; the others are retried once (routing.retries), after the 7 s asked for.
        expect(env.upstream.requests).to.have.length(status === 400 ? 1 : 2);
        expect(clock.sleeps).to.deep.equal(status === 400 ? [] : [7000]);
      });
    }

    it('never relays an upstream 401: it could echo the provider key, and it is the operator’s fault', async () => {
      env.upstream.script(() => ({
        status: 401,
        body: { error: { message: `Incorrect API key provided: ${PROVIDER_KEYS.openai.slice(0, 8)}****ET-2`, type: 'invalid_request_error' } },
      }));
      const res = await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] } });
      expect(res.status).to.equal(502);
      expect(res.json()['error']).to.deep.include({ type: 'api_error' });
      expect(res.text).not.to.include(PROVIDER_KEYS.openai.slice(0, 8));
      expect(res.headers.get('x-should-retry')).to.equal('false');
    });
  });

  describe('connections', () => {
    it('reuses upstream connections (keep-alive agent)', async () => {
      const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] };
      for (let i = 0; i < 3; i++) await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body });
      const ports = new Set(env.upstream.requests.map((r) => r.remotePort));
      expect(env.upstream.requests).to.have.length(3);
      expect(ports.size).to.equal(1);
      expect(env.upstream.last().headers['connection']).not.to.equal('close');
    });

    it('aborts the upstream request when the client disconnects', async () => {
      env.upstream.script(() => ({ hang: true }));
      const controller = new AbortController();
      const pending = fetch(`${env.gw.url}/v1/messages`, {
        method: 'POST',
        headers: { ...MESSAGES_HEADERS, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] }),
        signal: controller.signal,
      }).catch((err: Error) => err);
      while (env.upstream.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
      const abortedAt = performance.now();
      controller.abort();
      expect(await pending).to.be.instanceOf(Error);
      const closedAt = await env.upstream.last().closed;
      expect(env.upstream.last().aborted()).to.equal(true);
      expect(closedAt - abortedAt).to.be.below(1000);
    });

    it('answers 502 in the caller format when the upstream cannot be reached', async () => {
      const closed = http.createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
      const port = (closed.address() as { port: number }).port;
      await new Promise<void>((r) => closed.close(() => r()));
      const dead = await startGateway(standardConfig(`http://127.0.0.1:${port}`), { clock });
      try {
        const m = await call(`${dead.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: { model: 'claude-same', max_tokens: 1, messages: [{ role: 'user', content: 'x' }] } });
        expect(m.status).to.equal(502);
        expect(m.json()).to.deep.include({ type: 'error', error: { type: 'api_error', message: 'upstream provider "anthropic" could not be reached' } });
        const c = await call(`${dead.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] } });
        expect(c.status).to.equal(502);
        expect(c.json()['error']).to.deep.include({ type: 'api_error', param: null });
      } finally {
        await dead.close();
      }
    });

    it('ends a stream cut by the upstream with an in-band error, never a clean end', async () => {
      env.upstream.script(() => ({ sse: FIXTURES.anthropicTextSse(), resetAfterEvents: 3 }));
      const res = await call(`${env.gw.url}/v1/messages`, {
        headers: MESSAGES_HEADERS,
        body: { model: 'claude-sonnet-4-6', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'hi' }] },
      });
      const events = res.text.trim().split('\n\n');
      expect(events.at(-1)).to.match(/^event: error\ndata: \{"type":"error","error":\{"type":"api_error"/);
      expect(res.text).not.to.include('message_stop');

      env.upstream.script(() => ({ sse: FIXTURES.openaiTextSse(), resetAfterEvents: 2 }));
      const chat = await call(`${env.gw.url}/v1/chat/completions`, {
        headers: CHAT_HEADERS,
        body: { model: 'gpt-4o', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] },
      });
      expect(chat.text.trim().split('\n\n').at(-1)).to.match(/^data: \{"error":\{"message":"upstream provider \\"openai\\" ended the response early"/);
      expect(chat.text).not.to.include('[DONE]');
    });
  });

  describe('usage', () => {
    const usageOf = async (n: number) => (await env.gw.requestLogs(n))[n - 1]?.['tokens'];

    it('reads usage from JSON and SSE answers in both formats without changing them', async () => {
      env.gw.logs.lines.length = 0;
      const ask = (path: string, headers: Record<string, string>, body: object) => call(`${env.gw.url}${path}`, { headers, body });
      await ask('/v1/messages', MESSAGES_HEADERS, { model: 'claude-sonnet-4-6', max_tokens: 9, tools: [{ name: 'weather', input_schema: { type: 'object' } }], messages: [{ role: 'user', content: 'x' }] });
      expect(await usageOf(1)).to.deep.equal({ input: 472, output: 89, cache_read: 100, cache_write: 30, reasoning: 0 });
      await ask('/v1/messages', MESSAGES_HEADERS, { model: 'claude-sonnet-4-6', max_tokens: 9, stream: true, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'x' }] });
      expect(await usageOf(2)).to.deep.equal({ input: 424, output: 89, cache_read: 200, cache_write: 0, reasoning: 0 });
      await ask('/v1/chat/completions', CHAT_HEADERS, { model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] });
      expect(await usageOf(3)).to.deep.equal({ input: 15, output: 7, cache_read: 4, cache_write: 0, reasoning: 0 });
      await ask('/v1/chat/completions', CHAT_HEADERS, { model: 'gpt-4o', stream: true, stream_options: { include_usage: true }, tools: [{ type: 'function', function: { name: 'weather' } }], messages: [{ role: 'user', content: 'x' }] });
      expect(await usageOf(4)).to.deep.equal({ input: 61, output: 16, cache_read: 0, cache_write: 0, reasoning: 0 });
    });
  });
});
