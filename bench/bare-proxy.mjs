// Arm (b): the floor. A bare keep-alive http-proxy-3 passthrough, the same stack as Junction's
// native path with nothing on top (issue #6). Usage: node bare-proxy.mjs <upstreamUrl>
import http from 'node:http';
import { createProxyServer } from 'http-proxy-3';
import { answerMemory } from './memory.mjs';

const target = process.argv[2];
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 256, scheduling: 'lifo' });
const proxy = createProxyServer({ target, agent, changeOrigin: true, xfwd: false });
proxy.on('error', (_err, _req, res) => {
  if (res && 'writeHead' in res && !res.headersSent) res.writeHead(502);
  res?.end();
});
const server = http.createServer((req, res) => proxy.web(req, res));
server.keepAliveTimeout = 120_000;
server.listen(0, '127.0.0.1', () => console.log(`PORT ${server.address().port}`));
process.on('message', answerMemory);
