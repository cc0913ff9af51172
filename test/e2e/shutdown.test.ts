import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { serveProcess } from '../support/serve-process.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { FakeUpstream } from '../support/fake-upstream.ts';
import { COMBOS, endsInBandError, headersOf, pathOf, requestBody, streamOf, type Combo, cleanEndOf } from '../support/resilience.ts';
import { KEYS } from '../support/gateway.ts';



function config(dir: string, upstream: string, graceS: number): string {
  const file = path.join(dir, 'gateway.yaml');
  writeFileSync(
    file,
    `storage: { url: "sqlite://ledger.db" }
log: { level: silent }
server: { shutdown_grace_s: ${graceS} }
auth: { keys: [{ name: alice, key: "${KEYS.alice}", balance_usd: 10 }] }
providers:
  - { id: anthropic, plugin: anthropic, base_url: "${upstream}", api_key: x }
  - { id: openai, plugin: openai, base_url: "${upstream}/v1", api_key: y }
models:
  - { id: claude-x, routes: [{ provider: anthropic }], pricing: { input: 3, output: 15 } }
  - { id: gpt-x, routes: [{ provider: openai }], pricing: { input: 2.5, output: 10 } }
`,
  );
  return file;
}

/** Starts a stream, waits for its first bytes, and returns its id and a promise of the rest. */
async function openStream(url: string, combo: Combo): Promise<{ id: string; rest: Promise<string> }> {
  const res = await fetch(`${url}${pathOf(combo)}`, { method: 'POST', headers: headersOf(combo), body: JSON.stringify(requestBody(combo, true)) });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const first = await reader.read();
  const rest = (async () => {
    let text = decoder.decode(first.value, { stream: true });
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value, { stream: true });
    return text;
  })();
  return { id: res.headers.get('x-request-id')!, rest };
}

const exitOf = (child: ChildProcess): Promise<number | null> =>
  new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.once('exit', (code) => resolve(code));
  });

/** Issue #5: SIGTERM drains. Streams in both formats, native and translated, run through it. */
describe('graceful shutdown on SIGTERM', () => {
  let upstream: FakeUpstream;
  before(async () => {
    upstream = await new FakeUpstream().start();
  });
  after(() => upstream.close());
  afterEach(() => upstream.reset());

  it('lets streams that finish within the grace finish cleanly, refuses new connections, exits 0', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'junction-drain-'));
    const gw = await serveProcess(config(dir, upstream.url, 10));
    upstream.script((req) => ({ sse: streamOf(req.url.startsWith('/v1/chat') ? 'chat' : 'messages'), eventDelayMs: 60 }));
    const streams = await Promise.all(COMBOS.map((combo) => openStream(gw.url, combo)));
    const exited = exitOf(gw.child);
    const signalledAt = performance.now();
    gw.child.kill('SIGTERM');
    // It says so just before it stops listening, in the same turn of its event loop.
    await gw.saidOnStderr(/SIGTERM received, draining/);
    const refused = await fetch(`${gw.url}/healthz`).then(
      (res) => res.status,
      () => 'refused',
    );
    expect(refused).to.equal('refused');
    const texts = await Promise.all(streams.map((s) => s.rest));
    texts.forEach((text, i) => {
      const combo = COMBOS[i]!;
      expect(text, combo.name).to.include(cleanEndOf(combo));
    });
    expect(await exited).to.equal(0);
    expect(performance.now() - signalledAt).to.be.below(5000);
    const store = new SqliteStore(path.join(dir, 'ledger.db'));
    const key = (await store.listKeys())[0]!;
    expect(key.held).to.equal(0n);
    for (const s of streams) expect((await store.generation(s.id, key.id))?.outcome).to.equal('ok');
    await store.close();
  });

  it('past the grace, ends the remaining streams with an in-band error, settles them, exits 0', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'junction-drain-'));
    const gw = await serveProcess(config(dir, upstream.url, 0.4));
    upstream.script((req) => ({ sse: streamOf(req.url.startsWith('/v1/chat') ? 'chat' : 'messages'), eventDelayMs: 3000 }));
    const streams = await Promise.all(COMBOS.map((combo) => openStream(gw.url, combo)));
    const exited = exitOf(gw.child);
    const signalledAt = performance.now();
    gw.child.kill('SIGTERM');
    const texts = await Promise.all(streams.map((s) => s.rest));
    const endedAfter = performance.now() - signalledAt;
    texts.forEach((text, i) => {
      const combo = COMBOS[i]!;
      expect(endsInBandError(combo, text), `${combo.name}: ${text}`).to.equal(true);
      expect(text, combo.name).to.include('shutting down');
    });
    expect(endedAfter).to.be.within(350, 1900);
    expect(await exited).to.equal(0);
    expect(performance.now() - signalledAt).to.be.below(400 + 5000);
    // Every cut stream was charged what passed, and no hold is left behind.
    const store = new SqliteStore(path.join(dir, 'ledger.db'));
    const key = (await store.listKeys())[0]!;
    expect(key.held).to.equal(0n);
    for (const s of streams) {
      const row = await store.generation(s.id, key.id);
      expect(row?.outcome).to.equal('GW_ERR_SHUTTING_DOWN');
      expect(row?.estimated).to.equal(true);
      expect(row!.charged > 0n).to.equal(true);
    }
    await store.close();
  });

  for (const second of ['SIGTERM', 'SIGINT'] as const) {
    it(`a second signal (SIGTERM then ${second}) does not cut the drain short`, async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'junction-drain-'));
      const gw = await serveProcess(config(dir, upstream.url, 10));
      upstream.script(() => ({ sse: streamOf('messages'), eventDelayMs: 100 }));
      const stream = await openStream(gw.url, COMBOS[0]!);
      const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
        gw.child.removeAllListeners('exit');
        gw.child.once('exit', (code, signal) => resolve({ code, signal }));
      });
      gw.child.kill('SIGTERM');
      await gw.saidOnStderr(/SIGTERM received, draining/);
      gw.child.kill(second);
      expect(await exited).to.deep.equal({ code: 0, signal: null });
      expect(await stream.rest).to.include('event: message_stop');
    });
  }
});
