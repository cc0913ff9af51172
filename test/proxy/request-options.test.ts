import { expect } from 'chai';
import http from 'node:http';
import { urlToHttpOptions } from 'node:url';
import { requestOptions } from '../../src/proxy/request-options.ts';

/**
 * Issue #17: postJson passes node:http only the options a request reads. Where it goes must be
 * exactly where `http.request(url, …)` would have gone: the same protocol, host, port, path and
 * credentials as Node's own urlToHttpOptions gives for the URL.
 */
describe('requestOptions', () => {
  const agent = new http.Agent();
  after(() => agent.destroy());

  for (const address of [
    'http://127.0.0.1:8080/v1/chat/completions',
    'https://api.example.com/v1/messages?beta=true',
    'http://[::1]:9000/v1/chat/completions',
    'https://[2001:db8::1]/openai/deployments/x/chat/completions?api-version=2024-10-21',
    'http://user:p%40ss@proxy.internal:3128/v1/messages',
    'http://only-user@host/v1',
    'https://host/v1/models/gemini:streamGenerateContent?alt=sse',
  ]) {
    it(`goes where http.request(url) goes: ${address}`, () => {
      const url = new URL(address);
      const node = urlToHttpOptions(url);
      const ours = requestOptions(url, 'POST', agent, { a: '1' });
      expect({ protocol: ours.protocol, hostname: ours.hostname, port: ours.port, path: ours.path, auth: ours.auth }).to.deep.equal({
        protocol: node.protocol,
        hostname: node.hostname,
        port: node.port,
        path: node.path,
        auth: node.auth,
      });
      expect(ours).to.deep.include({ method: 'POST', agent, headers: { a: '1' } });
      // Only what a request reads: none of the URL's href, hash, search or pathname.
      const keys = ['protocol', 'hostname', 'port', 'path', 'method', 'agent', 'headers', ...(node.auth === undefined ? [] : ['auth'])];
      expect(Object.keys(ours)).to.have.members(keys);
    });
  }

  it('reaches a server through the agent', async () => {
    const server = http.createServer((req, res) => res.end(`${req.method} ${req.url} ${req.headers['x-test']}`));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      const text = await new Promise<string>((resolve, reject) => {
        const request = http.request(requestOptions(new URL(`http://127.0.0.1:${port}/v1/x?y=1`), 'POST', agent, { 'x-test': 'here' }));
        request.once('error', reject);
        request.once('response', (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve(body));
        });
        request.end();
      });
      expect(text).to.equal('POST /v1/x?y=1 here');
    } finally {
      server.close();
    }
  });
});
