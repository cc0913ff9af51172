import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import type { RecordedRequest, Reply } from '../support/fake-upstream.ts';
import { call, CHAT_HEADERS, KEYS, standardConfig, useUpstreamAndGateway } from '../support/gateway.ts';

/**
 * Chat output modalities (issue #13; media.md §5): `modalities` and `audio` reach the upstream
 * intact, `message.audio`, streamed `delta.audio` and OpenRouter's `message.images` reach the
 * client intact, and audio and image tokens are charged at their own prices.
 */

const fixture = (name: string): string => readFileSync(new URL(`../fixtures/openai/${name}`, import.meta.url), 'utf8');
const AUDIO = fixture('chat-audio.json');
const AUDIO_SSE = fixture('chat-audio.sse');
const IMAGES = fixture('chat-images.json');

// Text $2.50 in and $10 out, audio $40 in and $80 out, image output $30, per million tokens.
const EXTRA = `  - id: gpt-audio
    routes: [{ provider: openai, model: gpt-4o-audio-preview }]
    pricing: { input: 2.5, output: 10, input_audio: 40, output_audio: 80 }
    input_modalities: [text, audio]
    output_modalities: [text, audio]
  - id: gemini-image
    routes: [{ provider: openai, model: google/gemini-2.5-flash-image }]
    pricing: { input: 0.3, output: 2.5, output_image: 30 }
    output_modalities: [text, image]
`;

const answer = (body: string, sse?: string) => (req: RecordedRequest): Reply =>
  req.json()['stream'] === true && sse !== undefined ? { sse } : { body, headers: { 'content-type': 'application/json' } };

describe('chat output modalities', () => {
  const env = useUpstreamAndGateway((url) => standardConfig(url, EXTRA));
  let openai: OpenAI;
  before(() => {
    openai = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: KEYS.alice, maxRetries: 0 });
  });
  const generation = async (id: string | null) =>
    (await call(`${env.gw.url}/v1/generations/${id}`, { headers: CHAT_HEADERS })).json() as { tokens: Record<string, number>; cost_usd: number };

  it('audio out: modalities and audio reach the upstream, message.audio the client; audio tokens at their prices', async () => {
    env.upstream.script(answer(AUDIO));
    const { data: completion, response } = await openai.chat.completions
      .create({ model: 'gpt-audio', modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' }, messages: [{ role: 'user', content: 'Say hello' }] })
      .withResponse();
    expect(env.upstream.last().json()).to.deep.include({ modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } });
    expect(completion.choices[0]?.message.audio).to.deep.equal(JSON.parse(AUDIO).choices[0].message.audio);
    const row = await generation(response.headers.get('x-request-id'));
    expect(row.tokens).to.deep.include({ input: 18, input_audio: 12, output: 10, output_audio: 60 });
    // 18 × $2.50 + 12 × $40 + 10 × $10 + 60 × $80, per million.
    const cost = (18 * 2.5 + 12 * 40 + 10 * 10 + 60 * 80) / 1e6;
    expect(row.cost_usd).to.be.closeTo(cost, 1e-12);
    expect(completion.usage).to.deep.include({ cost });
  });

  it('audio out, streamed: the delta.audio chunks pass through as sent, and the usage is charged the same way', async () => {
    env.upstream.script(answer(AUDIO, AUDIO_SSE));
    const res = await fetch(`${env.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...CHAT_HEADERS, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-audio', stream: true, modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'pcm16' }, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    const text = await res.text();
    const audio = text.split('\n\n').filter((e) => e.includes('"audio"')).map((e) => JSON.parse(e.slice('data: '.length)).choices[0].delta.audio);
    expect(audio).to.deep.equal([{ id: 'audio_6824', transcript: 'Hel' }, { data: 'AAAAAAAA', transcript: 'lo!' }, { expires_at: 1764003600 }]);
    const row = await generation(res.headers.get('x-request-id'));
    expect(row.tokens).to.deep.include({ input: 18, input_audio: 12, output: 10, output_audio: 60 });
  });

  it("images out (OpenRouter's way): message.images reaches the client; image tokens at the image price", async () => {
    env.upstream.script(answer(IMAGES));
    const res = await call(`${env.gw.url}/v1/chat/completions`, {
      headers: CHAT_HEADERS,
      body: { model: 'gemini-image', modalities: ['image', 'text'], messages: [{ role: 'user', content: 'Draw a fox' }] },
    });
    expect(env.upstream.last().json()['modalities']).to.deep.equal(['image', 'text']);
    const message = (res.json()['choices'] as { message: Record<string, unknown> }[])[0]?.message;
    expect(message?.['images']).to.deep.equal(JSON.parse(IMAGES).choices[0].message.images);
    const row = await generation(res.headers.get('x-request-id'));
    expect(row.tokens).to.deep.include({ input: 8, output: 10, output_image: 1290 });
    expect(row.cost_usd).to.be.closeTo((8 * 0.3 + 10 * 2.5 + 1290 * 30) / 1e6, 1e-12);
  });

  it('/v1/models shows the audio prices under OpenRouter\'s names', async () => {
    const entry = (await call(`${env.gw.url}/v1/models/gpt-audio`, { headers: CHAT_HEADERS })).json();
    expect(entry['pricing']).to.deep.include({ audio: '0.00004', audio_output: '0.00008' });
    expect(entry['architecture']).to.deep.include({ output_modalities: ['text', 'audio'] });
  });
});
