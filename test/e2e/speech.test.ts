import { createOpenAI } from '@ai-sdk/openai';
import { experimental_generateSpeech as generateSpeech } from 'ai';
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import type { Reply } from '../support/fake-upstream.ts';
import { call, CHAT_HEADERS, expectNothingSentOrCharged, KEYS, PROVIDER_KEYS, standardConfig, useUpstreamAndGateway } from '../support/gateway.ts';

/**
 * POST /v1/audio/speech (issue #13; media.md §2): audio streamed through as the upstream makes it
 * (native) or as the plugin yields it (in-process), charged per character of input, with the cost
 * in `x-junction-cost-usd` since binary audio has no room for it.
 */

const SSE = readFileSync(new URL('../fixtures/openai/speech.sse', import.meta.url), 'utf8');
const RIFF = Buffer.from('RIFF');

const EXTRA = `  - id: tts-native
    routes: [{ provider: openai, model: tts-1 }]
    pricing: { input: 0, characters: 15 }
    output_modalities: [audio]
  - id: tts-demo
    routes: [{ provider: mock }]
    pricing: { input: 0, characters: 30, request: 0.001 }
    output_modalities: [audio]
  - id: tts-pricey
    routes: [{ provider: mock }]
    pricing: { input: 0, characters: 100000000 }
    output_modalities: [audio]
`;

/** A release the test pulls to let the upstream send the rest of its audio. */
function gate(): { readonly opened: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('speech', () => {
  const env = useUpstreamAndGateway((url) => standardConfig(url, EXTRA));
  let openai: OpenAI;
  before(() => {
    openai = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: KEYS.alice, maxRetries: 0 });
  });
  const generation = async (id: string | null) =>
    (await call(`${env.gw.url}/v1/generations/${id}`, { headers: CHAT_HEADERS })).json() as { endpoint: string; route: string; tokens: Record<string, number>; cost_usd: number };
  const balance = async () => (await call(`${env.gw.url}/v1/balance`, { headers: CHAT_HEADERS })).json() as { spent_usd: number; held_usd: number };

  describe('native route', () => {
    it('streams the audio as it arrives: the first bytes reach the client before the upstream has finished', async () => {
      const release = gate();
      const audio = [Buffer.from('ID3\u0003first-frames'), Buffer.from('-the-rest')];
      env.upstream.script((): Reply => ({ binary: { chunks: audio, contentType: 'audio/mpeg', afterFirst: release.opened } }));
      const response = await openai.audio.speech.create({ model: 'tts-native', voice: 'alloy', input: 'Hello, Junction!' });
      expect(response.headers.get('content-type')).to.equal('audio/mpeg');
      // 16 characters at $15 per million.
      expect(response.headers.get('x-junction-cost-usd')).to.equal('0.00024');
      const reader = response.body!.getReader();
      const first = await reader.read();
      expect(Buffer.from(first.value ?? [])).to.deep.equal(audio[0]);
      release.open();
      const rest: Buffer[] = [];
      for (let next = await reader.read(); !next.done; next = await reader.read()) rest.push(Buffer.from(next.value));
      expect(Buffer.concat(rest)).to.deep.equal(audio[1]);
      const seen = env.upstream.last();
      expect(seen.url).to.equal('/v1/audio/speech');
      expect(seen.json()).to.deep.equal({ model: 'tts-1', voice: 'alloy', input: 'Hello, Junction!' });
      expect(seen.headers['authorization']).to.equal(`Bearer ${PROVIDER_KEYS.openai}`);
      const row = await generation(response.headers.get('x-request-id'));
      expect(row).to.deep.include({ endpoint: 'audio_speech', route: 'native', cost_usd: 0.00024 });
      expect(row.tokens).to.deep.include({ characters: 16 });
    });

    it('stream_format sse: the audio deltas pass through untouched, and the stream is known complete at speech.audio.done', async () => {
      env.upstream.script(() => ({ sse: SSE }));
      const res = await call(`${env.gw.url}/v1/audio/speech`, { headers: CHAT_HEADERS, body: { model: 'tts-native', voice: 'alloy', input: 'Hi', stream_format: 'sse' } });
      expect(res.status).to.equal(200);
      expect(res.text).to.equal(SSE);
    });

    it('a stream cut before speech.audio.done ends with an in-band error, not a clean end', async () => {
      env.upstream.script(() => ({ sse: SSE.split('\n\n').slice(0, 2).join('\n\n') + '\n\n' }));
      const res = await call(`${env.gw.url}/v1/audio/speech`, { headers: CHAT_HEADERS, body: { model: 'tts-native', voice: 'alloy', input: 'Hi', stream_format: 'sse' } });
      expect(res.text.startsWith(SSE.split('\n\n').slice(0, 2).join('\n\n'))).to.equal(true);
      expect(res.text).to.match(/data: \{"error":/);
    });

    it("an unknown voice goes upstream, and the upstream's error comes back in OpenAI's envelope, uncharged", async () => {
      const error = { error: { message: "Invalid value: 'robot'. Supported values are: 'alloy', 'ash'…", type: 'invalid_request_error', param: 'voice', code: 'invalid_value' } };
      env.upstream.script(() => ({ status: 400, body: error }));
      const before = await balance();
      const res = await call(`${env.gw.url}/v1/audio/speech`, { headers: CHAT_HEADERS, body: { model: 'tts-native', voice: 'robot', input: 'Hi' } });
      expect(res.status).to.equal(400);
      expect(res.json()['error']).to.deep.include({ message: error.error.message, param: 'voice' });
      expect(env.upstream.last().json()['voice']).to.equal('robot');
      expect((await balance()).spent_usd).to.equal(before.spent_usd);
    });
  });

  describe('in-process (the mock)', () => {
    it('openai SDK: a real WAV, streamed to the client; charged per character and request', async () => {
      const response = await openai.audio.speech.create({ model: 'tts-demo', voice: 'alloy', input: 'Héllo 👋', response_format: 'wav' });
      expect(response.headers.get('content-type')).to.equal('audio/wav');
      const wav = Buffer.from(await response.arrayBuffer());
      expect(wav.subarray(0, 4)).to.deep.equal(RIFF);
      expect(wav.subarray(8, 12).toString('latin1')).to.equal('WAVE');
      expect(wav.readUInt32LE(40)).to.equal(wav.length - 44); // the data chunk holds the rest
      // 7 characters (code points, the emoji one) at $30 per million, and $0.001 a request.
      const cost = 7 * 30e-6 + 0.001;
      expect(Number(response.headers.get('x-junction-cost-usd'))).to.be.closeTo(cost, 1e-12);
      const row = await generation(response.headers.get('x-request-id'));
      expect(row.tokens).to.deep.include({ characters: 7 });
      expect(row.cost_usd).to.be.closeTo(cost, 1e-12);
    });

    it('Vercel AI SDK: experimental_generateSpeech', async () => {
      const result = await generateSpeech({ model: createOpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: KEYS.alice }).speech('tts-demo'), text: 'Hello', outputFormat: 'wav', maxRetries: 0 });
      expect(Buffer.from(result.audio.uint8Array).subarray(0, 4)).to.deep.equal(RIFF);
    });

    it('a format the demo cannot write: 400 naming response_format, uncharged', async () => {
      const before = await balance();
      const res = await call(`${env.gw.url}/v1/audio/speech`, { headers: CHAT_HEADERS, body: { model: 'tts-demo', voice: 'alloy', input: 'Hi', response_format: 'mp3' } });
      expect(res.status).to.equal(400);
      expect(res.json()['error']).to.deep.include({ param: 'response_format', message: 'response_format: the demo speech model writes wav or pcm, not mp3' });
      expect((await balance()).spent_usd).to.equal(before.spent_usd);
    });
  });

  describe('refused before anything goes upstream, and never charged', () => {
    expectNothingSentOrCharged(env);
    const refused = async (body: Record<string, unknown>) => {
      const res = await call(`${env.gw.url}/v1/audio/speech`, { headers: CHAT_HEADERS, body });
      return { status: res.status, error: res.json()['error'] as Record<string, unknown> };
    };

    it('no input, an empty one, or no voice: 400 naming the field', async () => {
      expect(await refused({ model: 'tts-native', voice: 'alloy' })).to.deep.nested.include({ status: 400, 'error.param': 'input' });
      expect(await refused({ model: 'tts-native', voice: 'alloy', input: '' })).to.deep.nested.include({ status: 400, 'error.param': 'input' });
      expect(await refused({ model: 'tts-native', input: 'x' })).to.deep.nested.include({ status: 400, 'error.param': 'voice' });
    });

    it('a text model on the speech endpoint', async () => {
      const { status, error } = await refused({ model: 'gpt-4o', voice: 'alloy', input: 'x' });
      expect(status).to.equal(400);
      expect(error['message']).to.equal('model "gpt-4o" does not serve /v1/audio/speech; it serves /v1/messages, /v1/messages/count_tokens, /v1/chat/completions, /v1/responses, /v1/responses/input_tokens');
    });

    it('a key that cannot cover the characters: 402', async () => {
      expect((await refused({ model: 'tts-pricey', voice: 'alloy', input: 'two thousand characters '.repeat(100) })).status).to.equal(402);
    });
  });
});
