import { expect } from 'chai';
import http from 'node:http';
import { inTurn } from '../support/fake-upstream.ts';
import { useUpstreamAndGateway } from '../support/gateway.ts';
import { TestClock } from '../support/clock.ts';
import {
  COMBOS,
  TIMERS,
  endsInBandError,
  errorReply,
  headersOf,
  inBandErrorStream,
  malformedStream,
  pathOf,
  rawCall,
  requestBody,
  resilienceConfig,
  sdkStream,
  streamOf,
} from '../support/resilience.ts';

/**
 * Issue #5, scenario by scenario, in both client formats on native and translated routes, with
 * the official SDKs where a client would notice: a failure is never passed off as success, a
 * stall is caught within its timer, and retries happen only before the client got anything.
 */
describe('resilience: upstream faults in both formats, native and translated', () => {
  // Retry waits on a test clock: asserted exactly, and not waited out in real time (issue #12).
  const clock = new TestClock();
  const env = useUpstreamAndGateway((url) => resilienceConfig(url), { clock });

  for (const combo of COMBOS) {
    describe(combo.name, () => {
      it('a reset mid-stream ends in an in-band error the SDK raises, never a clean end', async () => {
        env.upstream.script(() => ({ sse: streamOf(combo.upstream), resetAfterEvents: 3 }));
        const raw = await rawCall(env.gw.url, combo, true);
        expect(raw.status).to.equal(200);
        expect(endsInBandError(combo, raw.text), raw.text).to.equal(true);
        const sdk = await sdkStream(env.gw.url, combo);
        expect(sdk.ok).to.equal(false);
        expect(env.upstream.requests.length).to.equal(2); // no retry after the first byte
      });

      it('a stall before the first byte: keepalives, then an in-band timeout within first_byte_ms + 1 s; 504 for a whole answer', async () => {
        env.upstream.script(() => ({ hang: true }));
        const raw = await rawCall(env.gw.url, combo, true);
        expect(raw.status).to.equal(200);
        expect(raw.text).to.include(combo.surface === 'messages' ? 'event: ping\ndata: {"type":"ping"}\n\n' : ': keepalive\n\n');
        expect(endsInBandError(combo, raw.text), raw.text).to.equal(true);
        expect(raw.text).to.include('timed out');
        expect(raw.ms).to.be.within(TIMERS.firstByteMs - 50, TIMERS.firstByteMs + 1000);
        const whole = await rawCall(env.gw.url, combo, false);
        expect(whole.status).to.equal(504);
        expect(whole.ms).to.be.below(TIMERS.firstByteMs + 1000);
        // A silent route is not retried (failoverbench S06).
        expect(env.upstream.requests.length).to.equal(2);
      });

      it('a stall mid-stream is detected within idle_ms + 1 s and ends in an in-band error', async () => {
        env.upstream.script(() => ({ sse: streamOf(combo.upstream), stallAfterEvents: 3 }));
        const raw = await rawCall(env.gw.url, combo, true);
        expect(endsInBandError(combo, raw.text), raw.text).to.equal(true);
        expect(raw.text).to.include('stalled');
        expect(raw.ms).to.be.within(TIMERS.idleMs - 50, TIMERS.idleMs + 1000);
        if (combo.surface === 'responses') {
          // The silence got keepalives the clients accept: response.in_progress again, numbered
          // in turn, never a comment Codex's idle timer ignores; the error continues the numbering.
          const events = raw.text.trimEnd().split('\n\n').filter((f) => f.startsWith('event: '));
          const data = events.map((f) => JSON.parse(f.slice(f.indexOf('data: ') + 6)) as { type: string; sequence_number: number });
          expect(data.filter((e) => e.type === 'response.in_progress').length).to.be.above(1);
          expect(data.map((e) => e.sequence_number)).to.deep.equal(data.map((_, i) => i));
          expect(raw.text).to.not.include(': keepalive');
        }
        const sdk = await sdkStream(env.gw.url, combo);
        expect(sdk.ok).to.equal(false);
      });

      it('429 with retry-after: waits it out and retries, then succeeds', async () => {
        env.upstream.script(inTurn(errorReply(combo.upstream, 429, { 'retry-after': '1' }), { sse: streamOf(combo.upstream) }));
        const sdk = await sdkStream(env.gw.url, combo);
        expect(sdk.ok, String(!sdk.ok && sdk.error)).to.equal(true);
        expect(clock.sleeps).to.deep.equal([1000]);
        expect(env.upstream.requests.length).to.equal(2);
      });

      it('persistent 429: the client gets 429 in its format with retry-after', async () => {
        env.upstream.script(() => errorReply(combo.upstream, 429, { 'retry-after': '1' }));
        const raw = await rawCall(env.gw.url, combo, false);
        expect(raw.status).to.equal(429);
        expect(raw.headers.get('retry-after')).to.equal('1');
        const body = JSON.parse(raw.text) as Record<string, { type: string }>;
        if (combo.surface === 'messages') expect(body['error']?.type).to.equal('rate_limit_error');
        else expect(body['error']).to.be.an('object');
        expect(env.upstream.requests.length).to.equal(2);
        expect(clock.sleeps).to.deep.equal([1000]);
      });

      it('persistent 529: retried, then the overloaded status reaches the SDK', async () => {
        env.upstream.script(() => errorReply(combo.upstream, 529));
        const sdk = await sdkStream(env.gw.url, combo);
        expect(sdk.ok).to.equal(false);
        expect((sdk as { error: { status?: number } }).error.status).to.equal(529);
        expect(env.upstream.requests.length).to.equal(2);
        // No retry-after: the configured back-off (20 ms, jittered ±20%).
        expect(clock.sleeps).to.have.length(1);
        expect(clock.sleeps[0]).to.be.within(16, 24);
      });

      it('500 then success on the fallback route', async () => {
        // The primary route is native for Messages and Chat clients; a Responses client's is translated.
        const primary = combo.surface === 'responses' ? combo.upstream : combo.surface;
        const model = primary === 'messages' ? 'claude-fb' : 'gpt-fb';
        env.gw.logs.lines.length = 0; // earlier tests' lines would satisfy requestLogs() before this one's is written
        env.upstream.script((req) => (req.json()['model'] === 'primary' ? errorReply(primary, 500) : undefined));
        const sdk = await sdkStream(env.gw.url, combo, model);
        expect(sdk.ok, String(!sdk.ok && sdk.error)).to.equal(true);
        expect(env.upstream.requests.map((r) => r.json()['model'])).to.deep.equal(['primary', 'primary', 'backup']);
        const line = (await env.gw.requestLogs()).find((l) => l['model'] === model);
        expect(line).to.deep.include({ status: 200, attempts: 3 });
        env.gw.logs.lines.length = 0;
      });

      it('a malformed event ends the stream with an in-band error, and none of it reaches the client', async () => {
        env.upstream.script(() => ({ sse: malformedStream(combo.upstream) }));
        const raw = await rawCall(env.gw.url, combo, true);
        expect(endsInBandError(combo, raw.text), raw.text).to.equal(true);
        expect(raw.text).to.not.include('{"ty\n').and.not.include('"cont\n');
        expect((await sdkStream(env.gw.url, combo)).ok).to.equal(false);
      });

      it("an upstream in-band error reaches the client as an error in the client's format", async () => {
        env.upstream.script(() => ({ sse: inBandErrorStream(combo.upstream) }));
        const raw = await rawCall(env.gw.url, combo, true);
        expect(endsInBandError(combo, raw.text), raw.text).to.equal(true);
        expect(raw.text).to.include('Overloaded');
        const sdk = await sdkStream(env.gw.url, combo);
        expect(sdk.ok).to.equal(false);
        expect(String((sdk as { error: Error }).error)).to.include('Overloaded');
      });

      it('a slow reader gets backpressure: the upstream is paused, not buffered without bound', async function () {
        // A Responses client's 80 MB is also written whole in its closing events (the text done,
        // the completed response): about 7 s on a 2-core machine, so the default 15 s is too
        // close under a loaded CI run. What is checked is the pause, not the speed.
        this.timeout(60_000);
        // 80 MB in 4,000 events of 20 KB. The kernel's socket buffers on the two loopback hops can
        // hold up to about 72 MB here (tcp_rmem max 32 MB a socket, wmem 4 MB; 30 MB was seen
        // held), so only more than that tells a paused upstream from one read without bound. A
        // gateway that buffered would have taken all of it within the second; one that applies
        // backpressure leaves the upstream waiting to write (issue #12: a bound of half of 60 MB
        // failed at 1,512 of 3,000).
        const spec = { events: 4000, bytes: 20000, format: combo.upstream } as { events: number; bytes: number; format: 'messages' | 'chat'; written?: number; waiting?: boolean };
        env.upstream.script(() => ({ flood: spec }));
        const { res, done } = await openPaused(env.gw.url, combo);
        await new Promise((r) => setTimeout(r, 1000));
        expect(spec.waiting, 'the upstream is waiting for the gateway to read').to.equal(true);
        expect(spec.written).to.be.below(spec.events);
        res.resume();
        const bytes = await done;
        expect(spec.written).to.equal(spec.events);
        expect(bytes).to.be.above(spec.events * spec.bytes);
      });

      // What shows the abort reached the upstream is that its stream was cut (aborted) at all: left
      // alone it would have run a second more (five events or more, 200 ms apart). The bound says
      // "promptly" with room for a loaded machine: it was 100 ms, and one full run under the
      // suite's own parallel load took 220 ms.
      it('a client abort closes the upstream request promptly (within 500 ms), before its stream ends', async () => {
        env.upstream.script(() => ({ sse: streamOf(combo.upstream), eventDelayMs: 200 }));
        const controller = new AbortController();
        const res = await fetch(`${env.gw.url}${pathOf(combo)}`, {
          method: 'POST',
          headers: headersOf(combo),
          body: JSON.stringify(requestBody(combo, true)),
          signal: controller.signal,
        });
        const reader = res.body?.getReader();
        await reader?.read();
        const abortedAt = performance.now();
        controller.abort();
        const closedAt = await env.upstream.last().closed;
        expect(closedAt - abortedAt).to.be.below(500);
        expect(env.upstream.last().aborted()).to.equal(true);
      });
    });
  }
});

/** Opens a stream and leaves it unread until the caller resumes it; `done` resolves with the bytes read. */
function openPaused(base: string, combo: (typeof COMBOS)[number]): Promise<{ res: http.IncomingMessage; done: Promise<number> }> {
  return new Promise((resolve, reject) => {
    const url = new URL(`${base}${pathOf(combo)}`);
    const req = http.request(url, { method: 'POST', headers: headersOf(combo) }, (res) => {
      res.pause();
      const done = new Promise<number>((finish) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => (bytes += chunk.length));
        res.on('end', () => finish(bytes));
      });
      res.pause();
      resolve({ res, done });
    });
    req.on('error', reject);
    req.end(JSON.stringify(requestBody(combo, true)));
  });
}
