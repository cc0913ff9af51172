import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import zlib from 'node:zlib';
import { CHAT_HEADERS, MESSAGES_HEADERS, PROVIDER_KEYS, standardConfig, useUpstreamAndGateway } from '../support/gateway.ts';
import { multipart, wav } from '../support/multipart.ts';
import { ZSTD_SUPPORTED } from '../../src/http/body-decoding.ts';

/**
 * Compressed request bodies on every endpoint (issue #14; responses-api.md §9): Codex CLI sends
 * zstd (read on Node 22.15+), others gzip or br. Junction decodes them, counts the body limit on the decoded bytes, and
 * sends the upstream the decoded body; an unknown coding is a 415, a corrupt one a 400.
 */

const bodies = (name: string): Buffer => readFileSync(new URL(`../fixtures/bodies/${name}`, import.meta.url));
// Made with `zstd -19` (one frame, content size in its header) and `zstd -3 --no-content-size` (a 512 KB window).
const CODEX = bodies('codex-request.json');
const CODEX_ZSTD = bodies('codex-request.json.zst');
const HISTORY_ZSTD = bodies('codex-history.json.zst');
const HISTORY = Buffer.from(
  JSON.stringify({
    model: 'gpt-5',
    input: Array.from({ length: 3000 }, (_, i) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text: `line ${i} of a long Codex history, with some repeated words words words` }] })),
    store: false,
  }),
);

const EXTRA = `  - id: gpt-5
    routes: [{ provider: openai-responses, model: gpt-5 }]
    pricing: { input: 1, output: 1 }
  - id: whisper
    routes: [{ provider: openai, model: whisper-1 }]
    pricing: { input: 0, output: 0, audio_minute: 0.006 }
    input_modalities: [audio]
    output_modalities: [text]
`;

function post(url: string, headers: Record<string, string>, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { ...headers, 'content-length': String(body.length) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('compressed request bodies', () => {
  const env = useUpstreamAndGateway((url) =>
    standardConfig(url, EXTRA)
      .replace('log: { level: info }', 'log: { level: info }\nserver: { max_body_mb: 1 }')
      .replace('  - { id: mock, plugin: mock }', `  - { id: mock, plugin: mock }\n  - { id: openai-responses, plugin: openai, base_url: "${url}/v1", api_key: "${PROVIDER_KEYS.openai}", options: { formats: [responses] } }`),
  );
  const responses = (encoding: string, body: Buffer) => post(`${env.gw.url}/v1/responses`, { ...CHAT_HEADERS, 'content-type': 'application/json', 'content-encoding': encoding }, body);

  for (const [encoding, encode] of [
    ['gzip', zlib.gzipSync],
    ['deflate', zlib.deflateSync],
    ['br', zlib.brotliCompressSync],
  ] as const) {
    it(`${encoding}: the upstream gets the decoded body, with its own length and no content-encoding`, async () => {
      env.upstream.script(() => ({ body: { id: 'resp_1', object: 'response', output: [], usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } }, headers: { 'content-type': 'application/json' } }));
      const res = await responses(encoding, encode(CODEX));
      expect(res.status, res.text).to.equal(200);
      const seen = env.upstream.last();
      expect(seen.body.equals(CODEX)).to.equal(true);
      expect(seen.headers['content-encoding']).to.equal(undefined);
      expect(seen.headers['content-length']).to.equal(String(CODEX.length));
    });
  }

  it(`zstd, as Codex CLI sends it${ZSTD_SUPPORTED ? '' : ' (Node 22.15+; here a 415 that says so)'}: one frame with its content size, and a long history with a window`, async () => {
    if (!ZSTD_SUPPORTED) {
      const res = await responses('zstd', CODEX_ZSTD);
      expect(res.status).to.equal(415);
      expect(JSON.parse(res.text)).to.have.nested.property('error.message').that.includes('Node 22.15');
      expect(env.upstream.requests).to.have.length(0);
      return;
    }
    env.upstream.script(() => ({ body: { id: 'resp_1', object: 'response', output: [] }, headers: { 'content-type': 'application/json' } }));
    expect((await responses('zstd', CODEX_ZSTD)).status).to.equal(200);
    expect(env.upstream.last().body.equals(CODEX)).to.equal(true);
    expect((await responses('zstd', HISTORY_ZSTD)).status).to.equal(200);
    expect(env.upstream.last().body.equals(HISTORY)).to.equal(true);
  });

  it('every endpoint decodes: Messages to the in-process demo, and a gzipped multipart upload', async () => {
    const messages = Buffer.from(JSON.stringify({ model: 'demo', max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] }));
    const res = await post(`${env.gw.url}/v1/messages`, { ...MESSAGES_HEADERS, 'content-type': 'application/json', 'content-encoding': 'br' }, zlib.brotliCompressSync(messages));
    expect(res.status, res.text).to.equal(200);
    env.upstream.script(() => ({ body: { text: 'ok', usage: { type: 'duration', seconds: 1 } }, headers: { 'content-type': 'application/json' } }));
    const form = multipart([{ name: 'model', value: 'whisper' }, { name: 'file', filename: 'a.wav', type: 'audio/wav', bytes: wav(1) }]);
    const upload = await post(`${env.gw.url}/v1/audio/transcriptions`, { ...CHAT_HEADERS, 'content-type': form.contentType, 'content-encoding': 'gzip' }, zlib.gzipSync(form.body));
    expect(upload.status, upload.text).to.equal(200);
    const seen = env.upstream.last();
    expect(seen.body.toString('latin1').replace('whisper-1', 'whisper')).to.equal(form.body.toString('latin1'));
    // Read whole before routing (it is small), so it goes with its decoded length, not the compressed one.
    expect(Number(seen.headers['content-length'])).to.equal(seen.body.length);
  });

  describe('refused, with nothing sent upstream', () => {
    afterEach(() => {
      expect(env.upstream.requests).to.have.length(0);
    });

    it('an unknown coding: 415 naming the ones accepted', async () => {
      const res = await responses('compress', CODEX);
      expect(res.status).to.equal(415);
      expect(JSON.parse(res.text)).to.have.nested.property('error.message').that.includes('gzip, deflate, br');
    });

    it('a body that is not what its coding says: 400 naming the coding', async () => {
      for (const encoding of ZSTD_SUPPORTED ? ['gzip', 'br', 'zstd'] : ['gzip', 'br']) {
        const res = await responses(encoding, CODEX);
        expect(res.status, encoding).to.equal(400);
        expect(JSON.parse(res.text)).to.have.nested.property('error.message').that.includes(`not valid ${encoding}`);
      }
    });

    it('the limit counts decoded bytes: 2 MB of JSON in a 3 KB gzip body is a 413', async () => {
      const big = Buffer.from(JSON.stringify({ model: 'gpt-5', input: ' '.repeat(2 * 1024 * 1024) }));
      const compressed = zlib.gzipSync(big);
      expect(compressed.length).to.be.below(4096);
      const res = await responses('gzip', compressed);
      expect(res.status).to.equal(413);
    });

    (ZSTD_SUPPORTED ? it : it.skip)('a zstd frame asking for a window over 8 MB is refused before anything is allocated for it', async () => {
      // Frame header: magic, descriptor (no single segment), window descriptor 2^30.
      const frame = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xa0, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]);
      const res = await responses('zstd', frame);
      expect(res.status).to.equal(400);
      expect(JSON.parse(res.text)).to.have.nested.property('error.message').that.includes('not valid zstd');
    });
  });
});
