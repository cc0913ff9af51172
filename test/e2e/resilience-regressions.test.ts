import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { inTurn } from '../support/fake-upstream.ts';
import { KEYS, startGateway, TEST_DIR, useUpstreamAndGateway, type TestGateway } from '../support/gateway.ts';
import { TestClock } from '../support/clock.ts';
import { COMBOS, errorReply, headersOf, pathOf, rawCall, requestBody, resilienceConfig, sdkStream, streamOf, TIMERS, cleanEndOf } from '../support/resilience.ts';
import path from 'node:path';

/**
 * Regressions from an independent review of issue #5: each of these failed before its fix.
 */

const messagesNative = COMBOS[0]!;
const chatNative = COMBOS[2]!;

async function ledgerRow(base: string, id: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 100; i++) {
    const res = await fetch(`${base}/v1/generations/${id}`, { headers: { authorization: `Bearer ${KEYS.alice}` } });
    if (res.status === 200) return (await res.json()) as Record<string, unknown>;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no ledger row for ${id}`);
}

const MSG_ERROR_FIRST = { sse: 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n' };
const CHAT_ERROR_FIRST = { sse: 'data: {"error":{"message":"Overloaded","type":"overloaded_error","code":529}}\n\n' };

describe('resilience regressions', () => {
  describe('failed attempts are not billed', () => {
    // A backoff longer than the keepalive interval, so keepalives start during it.
    const env = useUpstreamAndGateway((url) => resilienceConfig(url, 'retries: 1, backoff_ms: 1000, max_retry_after_s: 3, circuit_breaker: { failures: 1000 }'));
    const ask = (stream: boolean, signal?: AbortSignal) =>
      fetch(`${env.gw.url}/v1/messages`, {
        method: 'POST',
        ...(signal && { signal }),
        headers: headersOf(messagesNative),
        body: JSON.stringify({ model: 'claude-x', max_tokens: 16, stream, messages: [{ role: 'user', content: 'hello there '.repeat(200) }] }),
      });

    it('a client that leaves during the backoff after a 500 is charged nothing', async () => {
      env.upstream.script(() => errorReply('messages', 500));
      const controller = new AbortController();
      const pending = ask(false, controller.signal).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 400));
      controller.abort();
      await pending;
      const line = (await env.gw.requestLogs(1)).at(-1)!;
      const row = await ledgerRow(env.gw.url, String(line['req_id']));
      expect(env.upstream.requests.length).to.equal(1);
      expect(row['cost_usd']).to.equal(0);
    });

    it('a request error relayed in-band behind keepalives is charged nothing', async () => {
      env.upstream.script(inTurn(errorReply('messages', 500), errorReply('messages', 400)));
      const res = await ask(true);
      const text = await res.text();
      expect(res.status).to.equal(200);
      expect(text).to.include('event: error');
      expect((await ledgerRow(env.gw.url, res.headers.get('x-request-id') ?? ''))['cost_usd']).to.equal(0);
    });

    it('so is a slow 400 that arrives after the first keepalive', async () => {
      env.upstream.script(() => ({ ...errorReply('messages', 400), delayMs: TIMERS.keepaliveMs * 3 }));
      const res = await ask(true);
      await res.text();
      expect((await ledgerRow(env.gw.url, res.headers.get('x-request-id') ?? ''))['cost_usd']).to.equal(0);
    });
  });

  describe('a 200 stream that opens with an error fails over like the status it names', () => {
    const env = useUpstreamAndGateway((url) => resilienceConfig(url));
    const cases = [
      { name: 'Messages client, native primary', combo: messagesNative, model: 'claude-fb', primary: MSG_ERROR_FIRST },
      { name: 'Chat client, native primary', combo: chatNative, model: 'gpt-fb', primary: CHAT_ERROR_FIRST },
      { name: 'Messages client, translated Chat primary', combo: messagesNative, model: 'gpt-fb', primary: CHAT_ERROR_FIRST },
      { name: 'Chat client, translated Messages primary', combo: chatNative, model: 'claude-fb', primary: MSG_ERROR_FIRST },
    ];
    for (const c of cases) {
      it(`${c.name}: the fallback answers`, async () => {
        env.upstream.script((req) => (req.json()['model'] === 'primary' ? c.primary : undefined));
        const sdk = await sdkStream(env.gw.url, c.combo, c.model);
        expect(sdk, String(!sdk.ok && sdk.error)).to.deep.include({ ok: true });
        expect(env.upstream.requests.map((r) => r.json()['model'])).to.deep.equal(['primary', 'backup']);
      });
    }

    it('a translated primary that resets before its first event is retried, then left for the fallback', async () => {
      env.upstream.script((req) => (req.json()['model'] === 'primary' ? { sse: 'data: {"id":"x"', resetAfterEvents: 1 } : undefined));
      const sdk = await sdkStream(env.gw.url, messagesNative, 'gpt-fb');
      expect(sdk).to.deep.include({ ok: true });
      expect(env.upstream.requests.map((r) => r.json()['model'])).to.deep.equal(['primary', 'primary', 'backup']);
    });
  });

  describe('many attempts on one request', () => {
    // Ten back-offs per route, doubling from 1 ms: on a test clock they cost nothing (issue #12).
    const clock = new TestClock();
    const env = useUpstreamAndGateway((url) => resilienceConfig(url, 'retries: 10, backoff_ms: 1, circuit_breaker: { failures: 1000 }'), { clock });

    it('many native attempts on one request leave no listeners behind (no MaxListenersExceededWarning)', async () => {
      const warnings: string[] = [];
      const onWarning = (w: Error): void => void warnings.push(w.name);
      process.on('warning', onWarning);
      env.upstream.script(() => errorReply('messages', 500));
      await rawCall(env.gw.url, messagesNative, false, 'claude-fb'); // 22 attempts on one client request
      expect(env.upstream.requests.length).to.equal(22);
      expect(clock.sleeps).to.have.length(20);
      await new Promise((r) => setTimeout(r, 100));
      process.off('warning', onWarning);
      expect(warnings).to.deep.equal([]);
    });
  });

  describe('a whole stream in one chunk (found by the benchmark, issue #6)', () => {
    const env = useUpstreamAndGateway((url) => resilienceConfig(url));
    for (const combo of COMBOS) {
      it(`${combo.name}: ends, complete`, async () => {
        env.upstream.script(() => ({ sse: streamOf(combo.upstream), oneChunk: true }));
        const raw = await rawCall(env.gw.url, combo, true);
        expect(raw.text).to.include(cleanEndOf(combo));
        expect((await sdkStream(env.gw.url, combo)).ok).to.equal(true);
      });
    }
  });

  describe('half-open probes', () => {
    // The cool-down on a test clock, moved on exactly (issue #12).
    const clock = new TestClock();
    const env = useUpstreamAndGateway((url) => resilienceConfig(url, 'retries: 0, backoff_ms: 10, circuit_breaker: { failures: 1, cooldown_s: 0.3 }'), { clock });

    it('a probe that got a healthy stream reopens the route at once, not when its stream ends', async () => {
      env.upstream.script(() => errorReply('messages', 500));
      await rawCall(env.gw.url, messagesNative, false);
      clock.advance(300);
      env.upstream.script((req) => (req.json()['stream'] === true ? { sse: streamOf('messages'), eventDelayMs: 200 } : undefined));
      const probe = await fetch(`${env.gw.url}${pathOf(messagesNative)}`, { method: 'POST', headers: headersOf(messagesNative), body: JSON.stringify(requestBody(messagesNative, true)) });
      // The probe's stream has begun (its first bytes are here), and goes on for 1.6 s more.
      const reader = probe.body?.getReader();
      expect((await reader?.read())?.done).to.equal(false);
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await rawCall(env.gw.url, messagesNative, false)).status);
      expect(probe.status).to.equal(200);
      expect(statuses).to.deep.equal([200, 200, 200]);
      await reader?.cancel();
    });
  });

  describe('an in-process plugin answering a stream request with a whole body', () => {
    const env = useUpstreamAndGateway(
      (url) =>
        resilienceConfig(url)
          .replace('providers:\n', 'providers:\n  - { id: slow, plugin: ./whole-answer.js, options: { delay_ms: 600 } }\n')
          .replace('models:\n', 'models:\n  - { id: slow-m, routes: [{ provider: slow }], pricing: { input: 1, output: 1 } }\n'),
      { dir: path.join(TEST_DIR, 'fixtures/plugins') },
    );

    it('after keepalives began the stream, ends it with an in-band error rather than hanging', async () => {
      const res = await fetch(`${env.gw.url}/v1/messages`, {
        method: 'POST',
        signal: AbortSignal.timeout(4000),
        headers: headersOf(messagesNative),
        body: JSON.stringify({ model: 'slow-m', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      });
      const text = await res.text();
      expect(text).to.include('event: ping');
      expect(text).to.match(/event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"provider \\"slow\\" returned an invalid result: a whole answer to a stream request"/);
    });
  });

  describe('huge upstream error bodies', () => {
    let server: http.Server;
    let gw: TestGateway;
    let size = 0;
    const chunk = Buffer.alloc(64 * 1024, 'x');
    before(async () => {
      server = http.createServer((req, res) => {
        req.resume();
        req.on('end', async () => {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.write('{"error":{"message":"');
          for (let sent = 0; sent < size && !res.destroyed; sent += chunk.length) {
            if (!res.write(chunk)) await new Promise((r) => res.once('drain', r));
          }
          res.end('"}}');
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      gw = await startGateway(resilienceConfig(url, 'retries: 0, circuit_breaker: { failures: 1000 }'));
    });
    after(async () => {
      await gw.close();
      server.closeAllConnections();
      server.close();
    });

    it('native: one too big to pass on whole is replaced by our own error, valid JSON', async () => {
      size = 100 * 1024;
      const raw = await rawCall(gw.url, messagesNative, false);
      expect(raw.status).to.equal(500);
      expect(JSON.parse(raw.text)).to.deep.include({ type: 'error' });
    });

    it('translated: reading it costs bounded memory', async function () {
      this.timeout(60_000);
      size = 200 * 1024 * 1024;
      const base = process.memoryUsage().rss;
      let peak = base;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
      const res = await fetch(`${gw.url}${pathOf(chatNative)}`, { method: 'POST', headers: headersOf(chatNative), body: JSON.stringify(requestBody(chatNative, false, 'claude-x')) });
      await res.text();
      clearInterval(sampler);
      expect(res.status).to.equal(500);
      expect(peak - base).to.be.below(100 * 1024 * 1024);
    });
  });
});
