import { expect } from 'chai';
import net from 'node:net';
import { standardConfig, useUpstreamAndGateway, KEYS } from '../support/gateway.ts';

/** Drips `text` onto a raw connection, one byte every `gapMs`; resolves with what came back and when the socket closed. */
function drip(url: string, head: string, text: string, gapMs: number): Promise<{ reply: string; closedAfterMs: number }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    const start = performance.now();
    let reply = '';
    let timer: NodeJS.Timeout | undefined;
    socket.on('data', (d: Buffer) => (reply += d.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ reply, closedAfterMs: performance.now() - start });
    });
    socket.write(head);
    let at = 0;
    const next = (): void => {
      if (socket.destroyed || at >= text.length) return;
      socket.write(text[at++] ?? '');
      timer = setTimeout(next, gapMs);
    };
    next();
  });
}

/** Slowloris defences (issue #5; reliability.md §5.7): headers and bodies must arrive in bounded time. */
describe('slow clients', () => {
  // Short timeouts, so the suite is quick; the gateway sweeps every quarter of the shorter one (100 ms here).
  const env = useUpstreamAndGateway((url) => `${standardConfig(url)}server: { headers_timeout_s: 0.4, request_timeout_s: 0.8 }\n`);

  it('a client dripping its headers is cut off after headers_timeout_s', async () => {
    const { reply, closedAfterMs } = await drip(env.gw.url, 'POST /v1/messages HTTP/1.1\r\nHost: x\r\n', 'x-slow: '.padEnd(200, 'a'), 50);
    expect(reply).to.match(/^HTTP\/1\.1 408/);
    // Cut within the timeout plus one sweep (and slack for a loaded machine).
    expect(closedAfterMs).to.be.within(350, 1200);
    expect(env.upstream.requests.length).to.equal(0);
  });

  it('a client dripping its body is cut off after request_timeout_s, and nothing goes upstream', async () => {
    const body = JSON.stringify({ model: 'claude-same', max_tokens: 5, messages: [{ role: 'user', content: 'hi'.repeat(100) }] });
    const head = `POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: ${KEYS.alice}\r\nanthropic-version: 2023-06-01\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`;
    const { reply, closedAfterMs } = await drip(env.gw.url, head, body, 50);
    expect(reply).to.match(/^HTTP\/1\.1 408/);
    expect(closedAfterMs).to.be.within(750, 1600);
    expect(env.upstream.requests.length).to.equal(0);
  });

  it('healthy requests are served meanwhile', async () => {
    const slow = drip(env.gw.url, 'POST /v1/messages HTTP/1.1\r\nHost: x\r\n', 'x-slow: '.padEnd(100, 'a'), 50);
    const res = await fetch(`${env.gw.url}/healthz`);
    expect(res.status).to.equal(200);
    await slow;
  });
});
