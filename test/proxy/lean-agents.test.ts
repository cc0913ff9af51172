import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createProxyServer, type ProxyServer } from 'http-proxy-3';
import { LeanHttpAgent, LeanHttpsAgent } from '../../src/proxy/lean-agents.ts';

/**
 * Issue #17: the pools hand Agent#addRequest only the request options that are set. Through
 * http-proxy-3, which sets ten TLS and socket options on every request (undefined unless
 * configured), requests must still reach the upstream on kept-alive connections, a configured CA
 * must still be used, and an upstream certificate nobody vouches for must still be refused.
 * The certificate in test/fixtures/tls is self-signed, for 127.0.0.1 and localhost, valid to
 * 2126, made for these tests with `openssl req -x509 -newkey ec -pkeyopt
 * ec_paramgen_curve:P-256 -days 36500 -nodes -subj /CN=localhost -addext
 * "subjectAltName=IP:127.0.0.1,DNS:localhost"`.
 */
const TLS = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/tls');
const cert = readFileSync(path.join(TLS, 'localhost.crt'));
const key = readFileSync(path.join(TLS, 'localhost.key'));

/** An upstream that answers with the port its client connected from: one port, one connection. */
const answer = (req: http.IncomingMessage, res: http.ServerResponse): void => {
  req.resume();
  req.on('end', () => res.end(`${req.method} ${req.url} ${req.socket.remotePort}`));
};

async function listen(server: http.Server | https.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return String((server.address() as AddressInfo).port);
}

/** One request through the proxy: its status and body, or the proxy's error. */
async function through(proxy: ProxyServer, target: string, agent: http.Agent, path: string): Promise<{ status: number; body: string } | { error: string }> {
  const front = http.createServer((req, res) => {
    proxy.web(req, res, { target, agent }, (err) => {
      res.statusCode = 502;
      res.end(`proxy error: ${err.message}`);
    });
  });
  const port = await listen(front);
  try {
    return await new Promise((resolve) => {
      // Kept alive end to end: http-proxy-3 forwards the client's `connection` header upstream.
      const request = http.request({ hostname: '127.0.0.1', port, path, method: 'POST', agent: false, headers: { connection: 'keep-alive' } }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve(res.statusCode === 502 ? { error: body } : { status: res.statusCode ?? 0, body }));
      });
      request.end('{}');
    });
  } finally {
    front.close();
  }
}

/** Runs `body` against an upstream on a free port, then closes both the upstream and the agent. */
async function withUpstream(upstream: http.Server | https.Server, agent: http.Agent, body: (port: string) => Promise<void>): Promise<void> {
  const port = await listen(upstream);
  try {
    await body(port);
  } finally {
    agent.destroy();
    upstream.close();
  }
}

describe('LeanHttpAgent and LeanHttpsAgent', () => {
  it('serve http-proxy-3 over kept-alive connections', async () => {
    const agent = new LeanHttpAgent({ keepAlive: true });
    const proxy = createProxyServer({});
    await withUpstream(http.createServer(answer), agent, async (port) => {
      const first = await through(proxy, `http://127.0.0.1:${port}`, agent, '/v1/chat/completions?x=1');
      const second = await through(proxy, `http://127.0.0.1:${port}`, agent, '/v1/messages');
      expect(first).to.have.property('status', 200);
      const [method, url, clientPort] = (first as { body: string }).body.split(' ');
      expect([method, url]).to.deep.equal(['POST', '/v1/chat/completions?x=1']);
      // The same connection: the pool's name for it did not change with the options left out.
      expect((second as { body: string }).body).to.equal(`POST /v1/messages ${clientPort}`);
    });
  });

  it('use a configured CA over TLS, and keep the connection', async () => {
    const agent = new LeanHttpsAgent({ keepAlive: true });
    const proxy = createProxyServer({ ca: cert.toString(), secure: true });
    await withUpstream(https.createServer({ cert, key }, answer), agent, async (port) => {
      const first = await through(proxy, `https://127.0.0.1:${port}`, agent, '/v1/messages');
      const second = await through(proxy, `https://localhost:${port}`, agent, '/v1/messages');
      const third = await through(proxy, `https://127.0.0.1:${port}`, agent, '/v1/messages');
      expect(first).to.have.property('status', 200);
      expect(second).to.have.property('status', 200);
      const portOf = (result: unknown): string | undefined => (result as { body: string }).body.split(' ')[2];
      expect(portOf(third)).to.equal(portOf(first));
      // Another host name is another pool entry (and another certificate check, by that name).
      expect(portOf(second)).to.not.equal(portOf(first));
    });
  });

  it('refuse an upstream certificate nobody vouches for', async () => {
    const agent = new LeanHttpsAgent({ keepAlive: true });
    const proxy = createProxyServer({ secure: true });
    await withUpstream(https.createServer({ cert, key }, answer), agent, async (port) => {
      const result = await through(proxy, `https://127.0.0.1:${port}`, agent, '/v1/messages');
      expect(result).to.have.property('error').that.matches(/self[- ]signed/i);
    });
  });
});
