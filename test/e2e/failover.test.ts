import { expect } from 'chai';
import { inTurn } from '../support/fake-upstream.ts';
import { useUpstreamAndGateway } from '../support/gateway.ts';
import { TestClock } from '../support/clock.ts';
import { COMBOS, TIMERS, endsInBandError, errorReply, rawCall, resilienceConfig, sdkStream, streamOf, cleanEndOf } from '../support/resilience.ts';

const messagesNative = COMBOS[0]!;
const chatNative = COMBOS[2]!;

/**
 * Fallback routes, keepalives and circuit breakers (issue #5). Keepalives and fallback meet like
 * this: nothing is sent for the first keepalive interval, so a quick failure keeps its HTTP status;
 * once keepalives went out the status is 200, fallback goes on behind them, and a final failure is
 * reported in-band.
 */
describe('failover: fallbacks, keepalives, circuit breakers', () => {
  describe('keepalives while waiting for the first upstream byte', () => {
    const env = useUpstreamAndGateway((url) => resilienceConfig(url));

    for (const combo of [messagesNative, chatNative]) {
      it(`${combo.name}: a slow first byte gets keepalives, then the stream, which the SDK accumulates`, async () => {
        env.upstream.script(() => ({ delayMs: TIMERS.keepaliveMs * 3, sse: streamOf(combo.upstream) }));
        const raw = await rawCall(env.gw.url, combo, true);
        const frame = combo.surface === 'messages' ? 'event: ping\ndata: {"type":"ping"}\n\n' : ': keepalive\n\n';
        expect(raw.text.startsWith(frame), raw.text.slice(0, 80)).to.equal(true);
        expect(raw.text.split(frame).length - 1).to.be.at.least(2);
        expect(raw.text).to.include(cleanEndOf(combo));
        const sdk = await sdkStream(env.gw.url, combo);
        expect(sdk).to.deep.include({ ok: true });
      });

      it(`${combo.name}: a silent primary times out behind keepalives and the fallback route answers`, async () => {
        const model = combo.surface === 'messages' ? 'claude-fb' : 'gpt-fb';
        env.upstream.script((req) => (req.json()['model'] === 'primary' ? { hang: true } : undefined));
        const start = performance.now();
        const sdk = await sdkStream(env.gw.url, combo, model);
        expect(sdk, String(!sdk.ok && sdk.error)).to.deep.include({ ok: true });
        expect(performance.now() - start).to.be.within(TIMERS.firstByteMs - 50, TIMERS.firstByteMs + 1000);
        expect(env.upstream.requests.map((r) => r.json()['model'])).to.deep.equal(['primary', 'backup']);
      });

      it(`${combo.name}: when every route fails after keepalives, the failure comes in-band with its type`, async () => {
        const model = combo.surface === 'messages' ? 'claude-fb' : 'gpt-fb';
        env.upstream.script((req) => (req.json()['model'] === 'primary' ? { hang: true } : errorReply(combo.surface === 'messages' ? 'chat' : 'messages', 529)));
        const raw = await rawCall(env.gw.url, combo, true, model);
        expect(raw.status).to.equal(200);
        expect(endsInBandError(combo, raw.text), raw.text).to.equal(true);
        expect(raw.text).to.include('overloaded_error');
      });
    }

    it('a quick failure keeps its HTTP status: nothing is sent before the first keepalive interval', async () => {
      env.upstream.script(() => errorReply('messages', 400));
      const raw = await rawCall(env.gw.url, messagesNative, true);
      expect(raw.status).to.equal(400);
      expect(JSON.parse(raw.text)).to.deep.include({ type: 'error' });
      expect(env.upstream.requests.length).to.equal(1); // a request error is never retried
    });

    it('a fallback serves the same request on a route of another kind, native to translated, whole answers too', async () => {
      env.upstream.script((req) => (req.json()['model'] === 'primary' ? errorReply('messages', 503) : undefined));
      const raw = await rawCall(env.gw.url, messagesNative, false, 'claude-fb');
      expect(raw.status).to.equal(200);
      const body = JSON.parse(raw.text) as { type: string; content: unknown[] };
      expect(body.type).to.equal('message');
      expect(env.upstream.requests.map((r) => r.url)).to.deep.equal(['/v1/messages', '/v1/messages', '/v1/chat/completions']);
    });

    it('retry-after above the cap is not waited out: the client gets it', async () => {
      env.upstream.script(() => errorReply('messages', 429, { 'retry-after': '30' }));
      const raw = await rawCall(env.gw.url, messagesNative, false);
      expect(raw.status).to.equal(429);
      expect(raw.headers.get('retry-after')).to.equal('30');
      expect(raw.ms).to.be.below(1000);
      expect(env.upstream.requests.length).to.equal(1);
    });

    it('a 429 on the primary moves to the fallback at once, without waiting', async () => {
      env.upstream.script((req) => (req.json()['model'] === 'primary' ? errorReply('messages', 429, { 'retry-after': '2' }) : undefined));
      const raw = await rawCall(env.gw.url, messagesNative, false, 'claude-fb');
      expect(raw.status).to.equal(200);
      expect(raw.ms).to.be.below(1000);
      expect(env.upstream.requests.map((r) => r.json()['model'])).to.deep.equal(['primary', 'backup']);
    });

    it('a reset before headers is retried on the same route', async () => {
      env.upstream.script(inTurn({ resetBeforeHeaders: true }, { sse: streamOf('messages') }));
      const sdk = await sdkStream(env.gw.url, messagesNative);
      expect(sdk).to.deep.include({ ok: true });
      expect(env.upstream.requests.length).to.equal(2);
    });

    it('a request served by a fallback: its ledger row names the route that answered', async () => {
      env.upstream.script((req) => (req.json()['model'] === 'primary' ? errorReply('messages', 500) : undefined));
      const res = await fetch(`${env.gw.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'sk-jct-alice-0123456789abcdef', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'claude-fb', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
      });
      await res.arrayBuffer();
      const id = res.headers.get('x-request-id') ?? '';
      const gen = await fetch(`${env.gw.url}/v1/generations/${id}`, { headers: { authorization: 'Bearer sk-jct-alice-0123456789abcdef' } });
      const row = (await gen.json()) as Record<string, unknown>;
      expect(row).to.deep.include({ provider: 'openai', upstream_model: 'backup' });
    });
  });

  describe('circuit breaker', () => {
    // Cool-downs on a test clock: moved on exactly, not slept through (issue #12).
    const clock = new TestClock();
    const env = useUpstreamAndGateway((url) => resilienceConfig(url, 'retries: 0, backoff_ms: 10, circuit_breaker: { failures: 2, cooldown_s: 0.5 }'), { clock });

    it('skips a failing primary for the cooldown, then probes it again and returns to it', async () => {
      let primaryUp = false;
      env.upstream.script((req) => (req.json()['model'] === 'primary' && !primaryUp ? errorReply('messages', 500) : undefined));
      for (let i = 0; i < 2; i++) expect((await rawCall(env.gw.url, messagesNative, false, 'claude-fb')).status).to.equal(200);
      expect(env.upstream.requests.filter((r) => r.json()['model'] === 'primary').length).to.equal(2);
      // Open: the primary is not even tried.
      env.upstream.reset();
      env.upstream.script((req) => (req.json()['model'] === 'primary' && !primaryUp ? errorReply('messages', 500) : undefined));
      expect((await rawCall(env.gw.url, messagesNative, false, 'claude-fb')).status).to.equal(200);
      expect(env.upstream.requests.map((r) => r.json()['model'])).to.deep.equal(['backup']);
      // Still open 1 ms before the cooldown ends.
      primaryUp = true;
      clock.advance(499);
      env.upstream.reset();
      expect((await rawCall(env.gw.url, messagesNative, false, 'claude-fb')).status).to.equal(200);
      expect(env.upstream.requests.map((r) => r.json()['model'])).to.deep.equal(['backup']);
      // After the cooldown a probe goes to the recovered primary, which closes the breaker.
      clock.advance(1);
      env.upstream.reset();
      expect((await rawCall(env.gw.url, messagesNative, false, 'claude-fb')).status).to.equal(200);
      expect((await rawCall(env.gw.url, messagesNative, false, 'claude-fb')).status).to.equal(200);
      expect(env.upstream.requests.map((r) => r.json()['model'])).to.deep.equal(['primary', 'primary']);
    });

    it('a model whose every route is open gets 503 with retry-after, and nothing goes upstream', async () => {
      env.upstream.script(() => errorReply('messages', 500));
      for (let i = 0; i < 2; i++) await rawCall(env.gw.url, messagesNative, false);
      env.upstream.reset();
      const raw = await rawCall(env.gw.url, messagesNative, false);
      expect(raw.status).to.equal(503);
      expect(raw.headers.get('retry-after')).to.equal('1');
      expect(JSON.parse(raw.text)).to.deep.include({ error: { type: 'overloaded_error', message: 'every route of model "claude-x" is failing and paused; retry in 1 s' } });
      expect(env.upstream.requests.length).to.equal(0);
    });
  });
});
