// Peer arm: Portkey's open-source gateway (@portkey-ai/gateway), run as shipped by its own Node
// entry, build/start-server.js (what `npx @portkey-ai/gateway` runs). Installed bench-only:
// `npm --prefix bench/peers ci`. Portkey takes no upstream here: each request names its provider
// and simulator in x-portkey-provider and x-portkey-custom-host (see run.mjs).
// Usage: node bench/peers/portkey-server.mjs   → prints `PORT <n>`, answers the `rss` IPC message.
import http from 'node:http';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { answerMemory } from '../memory.mjs';

// start-server.js is a script, not a module with exports: it reads `--port=` (default 8787) and
// calls @hono/node-server's serve(), which listens on every interface. We run it in this process
// (so we can answer `rss`) and catch its one listen() call to bind loopback on a free port instead.
const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function (...args) {
  http.Server.prototype.listen = listen;
  const done = args.find((a) => typeof a === 'function');
  // The same keep-alive window as the simulator and the other arms, so no arm loses idle sockets.
  this.keepAliveTimeout = 120_000;
  return listen.call(this, 0, '127.0.0.1', () => {
    stdout(`PORT ${this.address().port}\n`);
    done?.();
  });
};

// Its startup banner (a spinner, then "running at http://localhost:8787") goes to stdout, where
// the runner looks for PORT; keep stdout for that line only. Errors still go to stderr.
const stdout = process.stdout.write.bind(process.stdout);
process.stdout.write = () => true;
console.clear = () => undefined;

// Portkey doesn't cancel the upstream stream when its client goes away; the upstream Response is
// cancelled later by GC, and Portkey logs 9 lines of stack for each. Scenario 7 abandons its held
// streams on purpose (1000 in a full run), so drop that pair; any other error still shows.
const error = console.error;
console.error = (...args) => {
  const text = args.map(String).join(' ');
  if (/^Error during stream processing:.*garbage collected/.test(text)) return;
  if (text.startsWith('Failed to close the writer:') && args.some((a) => a?.code === 'ERR_INVALID_STATE')) return;
  error(...args);
};

// --headless: no console UI routes (the logs page and its /log/stream), as in a deployment.
process.argv.push('--headless');
const entry = createRequire(import.meta.url).resolve('@portkey-ai/gateway/build/start-server.js');
process.on('message', answerMemory);
await import(pathToFileURL(entry).href);
