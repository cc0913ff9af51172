// Issue #13's media runs, side by side with the bare proxy: a 10 MB transcription upload streamed
// through (throughput as a ratio, RSS per concurrent upload) and a speech answer streamed back
// (added time to the first audio byte). `npm run bench -- --media` runs only these.
import http from 'node:http';
import { percentile, post } from './load.mjs';

const MB = 1024 * 1024;
const BOUNDARY = '----junction-bench-4d1c';
const AUDIO = Buffer.alloc(10 * MB, 0x5a);

/** A transcription form of the 10 MB file, `model` first (streamed through) or last (the openai SDK's order: spooled). */
export function transcriptionForm(model, modelFirst) {
  const field = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="model"\r\n\r\n${model}\r\n`);
  const file = [Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.mp3"\r\nContent-Type: audio/mpeg\r\n\r\n`), AUDIO, Buffer.from('\r\n')];
  const end = Buffer.from(`--${BOUNDARY}--\r\n`);
  return Buffer.concat(modelFirst ? [field, ...file, end] : [...file, field, end]);
}

export const formHeaders = (key) => ({ authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` });

/** MB/s of uploads through `url`, `concurrency` at a time, `count` in all, after two to warm up. */
export async function uploadThroughput(url, headers, body, concurrency, count) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  for (let i = 0; i < 2; i++) await post(agent, url, '/v1/audio/transcriptions', headers, body);
  let next = 0;
  let failed = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < count) if (!(await post(agent, url, '/v1/audio/transcriptions', headers, body)).ok) failed++;
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  agent.destroy();
  return { mbPerS: (count * body.length) / MB / seconds, failed };
}

/**
 * RSS growth per upload in flight: `count` uploads each send their first half and stop, so all are
 * open at once inside the proxy; RSS is read then, and the uploads are finished.
 */
export async function uploadRss(proc, ask, headers, body, count) {
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const before = (await ask(proc, 'rss')).rss;
  const half = body.length >> 1;
  const pending = [];
  const requests = [];
  for (let i = 0; i < count; i++) {
    const req = http.request(`${proc.url}/v1/audio/transcriptions`, { method: 'POST', agent, headers: { ...headers, 'content-length': body.length } });
    pending.push(new Promise((resolve) => {
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200));
      });
      req.on('error', () => resolve(false));
    }));
    requests.push(req);
  }
  // Every first half written and drained into the sockets, then time for the proxy to pass it on.
  await Promise.all(requests.map((req) => new Promise((resolve) => req.write(body.subarray(0, half), resolve))));
  await new Promise((r) => setTimeout(r, 1500));
  const during = (await ask(proc, 'rss')).rss;
  for (const req of requests) req.end(body.subarray(half));
  const ok = (await Promise.all(pending)).filter(Boolean).length;
  agent.destroy();
  return { uploads: count, ok, kbPerUpload: (during - before) / 1024 / count, rssBeforeMb: before / MB, rssDuringMb: during / MB };
}

/** Sequential speech requests: the first audio byte's p50 and p99, after a warm-up. */
export async function speechTtfb(url, headers, body, count) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  for (let i = 0; i < 50; i++) await post(agent, url, '/v1/audio/speech', headers, body);
  const ttfb = [];
  let failed = 0;
  for (let i = 0; i < count; i++) {
    const r = await post(agent, url, '/v1/audio/speech', headers, body);
    if (!r.ok) failed++;
    ttfb.push(r.ttfbMs);
  }
  agent.destroy();
  return { ttfbP50: percentile(ttfb, 50), ttfbP99: percentile(ttfb, 99), failed };
}

/**
 * The media rounds: arms interleaved, order rotated per round, ratios within a round; then RSS per
 * upload in fresh processes (RSS an earlier run freed is not returned to the OS).
 */
export async function mediaScenario({ bare, junction, startBare, startJunction, ask, key, rounds, quick }) {
  const headers = formHeaders(key);
  const streamed = transcriptionForm('whisper-sim', true);
  const spooled = transcriptionForm('whisper-sim', false);
  const speech = Buffer.from(JSON.stringify({ model: 'tts-sim', voice: 'alloy', input: 'Hello from the bench.', response_format: 'wav' }));
  const speechHeaders = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const count = quick ? 8 : 24;
  const out = { rounds: [], rss: [] };
  for (let round = 0; round < rounds; round++) {
    const arms = [
      ['bare', bare.url, streamed],
      ['streamed', junction.url, streamed],
      ['spooled', junction.url, spooled],
    ];
    const row = { upload: {}, speech: {} };
    for (const [arm, url, body] of arms.map((_, i) => arms[(i + round) % arms.length])) row.upload[arm] = await uploadThroughput(url, headers, body, 4, count);
    for (const [arm, url] of round % 2 === 0 ? [['bare', bare.url], ['junction', junction.url]] : [['junction', junction.url], ['bare', bare.url]]) {
      row.speech[arm] = await speechTtfb(url, speechHeaders, speech, quick ? 100 : 400);
    }
    out.rounds.push(row);
    process.stderr.write(`media round ${round + 1}/${rounds} ✓\n`);
  }
  for (const [arm, start, body] of [['bare', startBare, streamed], ['streamed', startJunction, streamed], ['spooled', startJunction, spooled]]) {
    const proc = await start();
    try {
      await uploadThroughput(proc.url, headers, body, 4, 8); // warm
      out.rss.push({ arm, ...(await uploadRss(proc, ask, headers, body, quick ? 8 : 16)) });
    } finally {
      proc.child.kill('SIGTERM');
    }
  }
  return out;
}
