import { createOpenAI } from '@ai-sdk/openai';
import { experimental_generateImage as generateImage } from 'ai';
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import type { RecordedRequest, Reply } from '../support/fake-upstream.ts';
import { call, CHAT_HEADERS, expectNothingSentOrCharged, KEYS, PROVIDER_KEYS, standardConfig, generationOf, useUpstreamAndGateway } from '../support/gateway.ts';

/**
 * POST /v1/images/generations (issue #13; media.md §1): native passthrough and in-process through
 * the mock, with the openai SDK and the Vercel AI SDK; per-image prices by size and quality, and
 * image tokens at their own prices, each in the ledger row.
 */

const fixture = (name: string): string => readFileSync(new URL(`../fixtures/openai/${name}`, import.meta.url), 'utf8');
const GPT_IMAGE = fixture('images-gpt-image.json');
const DALLE = fixture('images-dalle-url.json');
const STREAM = fixture('images-stream.sse');
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const json = { 'content-type': 'application/json' };

const imagesUpstream = (body: string) => (req: RecordedRequest): Reply | undefined => (req.url === '/v1/images/generations' ? { body, headers: json } : undefined);

// Text $5 in and $10 out, image input $10, image output $40 per million tokens, and a per-image table.
const EXTRA = `  - id: img-native
    routes: [{ provider: openai, model: gpt-image-1 }]
    pricing: { input: 5, output: 10, input_image: 10, output_image: 40, image: { "1024x1024/low": 0.011, "1024x1024": 0.042 } }
    output_modalities: [image]
  - id: dalle
    routes: [{ provider: openai, model: dall-e-3 }]
    pricing: { input: 0, image: { "1024x1024": 0.04, "1024x1024/hd": 0.08, "1792x1024/hd": 0.12 } }
    max_images: 1
    output_modalities: [image]
  - id: img-demo
    routes: [{ provider: mock }]
    pricing: { input: 1, image: 0.5 }
    output_modalities: [image]
  - id: img-pricey
    routes: [{ provider: mock }]
    pricing: { input: 0, image: 60 }
    output_modalities: [image]
`;


describe('image generation', () => {
  const env = useUpstreamAndGateway((url) => standardConfig(url, EXTRA));
  let openai: OpenAI;
  before(() => {
    openai = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: KEYS.alice, maxRetries: 0 });
  });
  const generation = (id: string | string[] | null | undefined) => generationOf(env.gw.url, id);

  describe('native route', () => {
    it('openai SDK: the answer as sent; images and text, image-input and image-output tokens each at their price', async () => {
      env.upstream.script(imagesUpstream(GPT_IMAGE));
      const { data: answer, response } = await openai.images.generate({ model: 'img-native', prompt: 'a red fox', n: 2, size: '1024x1024', quality: 'low' }).withResponse();
      const seen = env.upstream.last();
      expect(seen.json()).to.deep.equal({ model: 'gpt-image-1', prompt: 'a red fox', n: 2, size: '1024x1024', quality: 'low' });
      expect(seen.headers['authorization']).to.equal(`Bearer ${PROVIDER_KEYS.openai}`);
      expect(answer.data).to.have.length(2);
      expect(Buffer.from(answer.data?.[0]?.b64_json ?? '', 'base64').subarray(0, 8)).to.deep.equal(PNG_SIGNATURE);
      expect(answer.usage).to.deep.include({ input_tokens: 50, output_tokens: 50 });
      const row = await generation(response.headers.get('x-request-id'));
      expect(row).to.deep.include({ endpoint: 'images_generations', route: 'native' });
      // No output details: every output token is an image token (media.md §1.3).
      expect(row.tokens).to.deep.include({ input: 10, output: 0, input_image: 40, output_image: 50, images: 2 });
      // 10 × $5 + 40 × $10 + 50 × $40 per million, and 2 × $0.011.
      expect(row.cost_usd).to.be.closeTo((10 * 5 + 40 * 10 + 50 * 40) / 1e6 + 2 * 0.011, 1e-12);
    });

    it('passes the answer through byte for byte', async () => {
      env.upstream.script(imagesUpstream(GPT_IMAGE));
      const res = await call(`${env.gw.url}/v1/images/generations`, { headers: CHAT_HEADERS, body: { model: 'img-native', prompt: 'x' } });
      expect(res.status).to.equal(200);
      expect(res.text).to.equal(GPT_IMAGE);
    });

    for (const [quality, price] of [[undefined, 0.04], ['standard', 0.04], ['hd', 0.08]] as const) {
      it(`a per-image model with no usage (dall-e, url answer): charged by size and quality ${quality ?? '(none)'}, $${price}`, async () => {
        env.upstream.script(imagesUpstream(DALLE));
        const { data: answer, response } = await openai.images
          .generate({ model: 'dalle', prompt: 'a red fox', size: '1024x1024', ...(quality && { quality }), response_format: 'url' })
          .withResponse();
        expect(answer.data?.[0]?.url).to.match(/^https:\/\//);
        expect(answer.data?.[0]?.revised_prompt).to.be.a('string');
        const row = await generation(response.headers.get('x-request-id'));
        expect(row.tokens).to.deep.include({ images: 1 });
        expect(row.cost_usd).to.equal(price);
      });
    }

    it('a size the table does not name pays its dearest price', async () => {
      env.upstream.script(imagesUpstream(DALLE));
      const { response } = await openai.images.generate({ model: 'dalle', prompt: 'x', size: '1024x1792' }).withResponse();
      expect((await generation(response.headers.get('x-request-id'))).cost_usd).to.equal(0.12);
    });

    it('counts images and reads usage from an answer of 12 MB, arriving in many chunks', async () => {
      const big = Buffer.alloc(3 * 1024 * 1024, 7).toString('base64'); // 4 MB of base64 an image
      const body = JSON.stringify({ created: 1, data: [{ b64_json: big }, { b64_json: big }, { b64_json: big }], usage: { input_tokens: 3, output_tokens: 300, total_tokens: 303, output_tokens_details: { image_tokens: 270, text_tokens: 30 } } });
      env.upstream.script(imagesUpstream(body));
      const res = await fetch(`${env.gw.url}/v1/images/generations`, { method: 'POST', headers: { ...CHAT_HEADERS, ...json }, body: JSON.stringify({ model: 'img-native', prompt: 'x', n: 3, size: '1024x1024' }) });
      expect((await res.text()).length).to.equal(body.length);
      const row = await generation(res.headers.get('x-request-id'));
      expect(row.tokens).to.deep.include({ input: 3, output: 30, output_image: 270, images: 3 });
      expect(row.cost_usd).to.be.closeTo((3 * 5 + 30 * 10 + 270 * 40) / 1e6 + 3 * 0.042, 1e-12);
    });

    it('stream: true passes the events through untouched, charged from the completed event', async () => {
      env.upstream.script(() => ({ sse: STREAM }));
      const res = await call(`${env.gw.url}/v1/images/generations`, { headers: CHAT_HEADERS, body: { model: 'img-native', prompt: 'x', stream: true, partial_images: 1, size: '1024x1024', quality: 'low' } });
      expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
      expect(res.text).to.equal(STREAM);
      const row = await generation(res.headers.get('x-request-id'));
      expect(row.tokens).to.deep.include({ input: 10, input_image: 40, output_image: 272, images: 1 });
      expect(row.cost_usd).to.be.closeTo((10 * 5 + 40 * 10 + 272 * 40) / 1e6 + 0.011, 1e-12);
    });

    it('a stream of two images that ends after the first is cut, not whole; after both it is whole', async () => {
      const twice = STREAM + STREAM.split('\n\n').slice(1).join('\n\n');
      env.upstream.script(() => ({ sse: STREAM }));
      const cut = await call(`${env.gw.url}/v1/images/generations`, { headers: CHAT_HEADERS, body: { model: 'img-native', prompt: 'x', n: 2, stream: true, partial_images: 1 } });
      expect(cut.text).to.match(/data: \{"error":/);
      env.upstream.script(() => ({ sse: twice }));
      const whole = await call(`${env.gw.url}/v1/images/generations`, { headers: CHAT_HEADERS, body: { model: 'img-native', prompt: 'x', n: 2, stream: true, partial_images: 1 } });
      expect(whole.text).to.equal(twice);
    });

    it('a stream cut before its completed event ends with an in-band error', async () => {
      env.upstream.script(() => ({ sse: STREAM.split('\n\n')[0] + '\n\n' }));
      const res = await call(`${env.gw.url}/v1/images/generations`, { headers: CHAT_HEADERS, body: { model: 'img-native', prompt: 'x', stream: true, partial_images: 1 } });
      expect(res.text).to.match(/data: \{"error":/);
    });

    it('Vercel AI SDK: experimental_generateImage', async () => {
      env.upstream.script(imagesUpstream(GPT_IMAGE));
      const result = await generateImage({ model: createOpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: KEYS.alice }).image('img-native'), prompt: 'a red fox', maxRetries: 0 });
      expect(Buffer.from(result.image.uint8Array).subarray(0, 8)).to.deep.equal(PNG_SIGNATURE);
      expect(env.upstream.last().json()).to.deep.include({ model: 'gpt-image-1', prompt: 'a red fox' });
    });
  });

  describe('in-process (the mock)', () => {
    it('openai SDK: real PNGs, the same prompt drawing the same picture; charged per image and input token', async () => {
      const { data: answer, response } = await openai.images.generate({ model: 'img-demo', prompt: 'a red fox', n: 2 }).withResponse();
      const pngs = (answer.data ?? []).map((d) => Buffer.from(d.b64_json ?? '', 'base64'));
      expect(pngs).to.have.length(2);
      for (const png of pngs) {
        expect(png.subarray(0, 8)).to.deep.equal(PNG_SIGNATURE);
        expect([png.readUInt32BE(16), png.readUInt32BE(20)]).to.deep.equal([64, 64]); // IHDR width, height
      }
      expect(pngs[0]).to.not.deep.equal(pngs[1]);
      const again = await openai.images.generate({ model: 'img-demo', prompt: 'a red fox' });
      expect(again.data?.[0]?.b64_json).to.equal(answer.data?.[0]?.b64_json);
      const row = await generation(response.headers.get('x-request-id'));
      expect(row).to.deep.include({ endpoint: 'images_generations', route: 'in-process' });
      expect(row.tokens).to.deep.include({ input: 3, images: 2, output_image: 32 });
      // 3 tokens × $1 per million, 32 image tokens at the output price (absent output_image: output's, 0), 2 × $0.50.
      expect(row.cost_usd).to.be.closeTo(3e-6 + 1, 1e-12);
    });

    it('openai SDK, stream: true: partial images, then one completed event per image; charged for the completed', async () => {
      const { data: stream, response } = await openai.images.generate({ model: 'img-demo', prompt: 'a red fox', n: 2, stream: true, partial_images: 2 }).withResponse();
      const types: string[] = [];
      for await (const event of stream) {
        types.push(event.type);
        expect(Buffer.from(event.b64_json, 'base64').subarray(0, 8)).to.deep.equal(PNG_SIGNATURE);
      }
      const partial = 'image_generation.partial_image';
      const completed = 'image_generation.completed';
      expect(types).to.deep.equal([partial, partial, completed, partial, partial, completed]);
      const row = await generation(response.headers.get('x-request-id'));
      expect(row.tokens).to.deep.include({ input: 3, images: 2, output_image: 32 });
      expect(row.cost_usd).to.be.closeTo(3e-6 + 1, 1e-12);
    });

    it('answers response_format url with data URLs', async () => {
      const answer = await openai.images.generate({ model: 'img-demo', prompt: 'x', response_format: 'url' });
      expect(answer.data?.[0]?.url).to.match(/^data:image\/png;base64,iVBORw0KGgo/);
    });

    it('Vercel AI SDK: experimental_generateImage, two images', async () => {
      const result = await generateImage({ model: createOpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: KEYS.alice }).image('img-demo'), prompt: 'a blue bird', n: 2, maxRetries: 0 });
      expect(result.images).to.have.length(2);
      for (const image of result.images) expect(Buffer.from(image.uint8Array).subarray(0, 8)).to.deep.equal(PNG_SIGNATURE);
    });
  });

  it('GET /v1/models shows image prices and filters by output modality', async () => {
    const entry = (await call(`${env.gw.url}/v1/models/dalle`, { headers: CHAT_HEADERS })).json();
    expect(entry['architecture']).to.deep.include({ output_modalities: ['image'] });
    expect(entry['pricing']).to.deep.include({ image_output: '0.12', image_output_by_size: { '1024x1024': '0.04', '1024x1024/hd': '0.08', '1792x1024/hd': '0.12' } });
    expect((await call(`${env.gw.url}/v1/models/img-native`, { headers: CHAT_HEADERS })).json()['pricing']).to.deep.include({
      input_image_token: '0.00001',
      output_image_token: '0.00004',
    });
    const ids = ((await call(`${env.gw.url}/v1/models?output_modalities=image`, { headers: CHAT_HEADERS })).json()['data'] as { id: string }[]).map((m) => m.id);
    expect(ids).to.deep.equal(['img-native', 'dalle', 'img-demo', 'img-pricey']);
  });

  describe('refused before anything goes upstream, and never charged', () => {
    expectNothingSentOrCharged(env);

    const refused = async (body: Record<string, unknown>, path = '/v1/images/generations') => {
      const res = await call(`${env.gw.url}${path}`, { headers: CHAT_HEADERS, body });
      expect(res.status, res.text).to.be.within(400, 499);
      return { status: res.status, error: res.json()['error'] as Record<string, unknown> };
    };

    it('n above the model\'s maximum', async () => {
      const { status, error } = await refused({ model: 'dalle', prompt: 'x', n: 2 });
      expect(status).to.equal(400);
      expect(error).to.deep.include({ param: 'n', message: 'n: model "dalle" draws at most 1 images a request, got 2' });
      expect((await refused({ model: 'img-native', prompt: 'x', n: 11 })).error).to.deep.include({ param: 'n' });
    });

    it('no prompt, or an empty one', async () => {
      expect((await refused({ model: 'img-native' })).error).to.deep.include({ param: 'prompt' });
      expect((await refused({ model: 'img-native', prompt: '' })).error).to.deep.include({ param: 'prompt', message: 'prompt: must not be empty' });
    });

    it('partial_images above 3', async () => {
      expect((await refused({ model: 'img-native', prompt: 'x', stream: true, partial_images: 4 })).error).to.deep.include({ param: 'partial_images' });
    });

    it('a text model on the images endpoint, and an image model on chat', async () => {
      expect((await refused({ model: 'gpt-4o', prompt: 'x' })).error['message']).to.equal(
        'model "gpt-4o" does not serve /v1/images/generations; it serves /v1/messages, /v1/messages/count_tokens, /v1/chat/completions, /v1/responses, /v1/responses/input_tokens',
      );
      expect((await refused({ model: 'img-native', messages: [{ role: 'user', content: 'x' }] }, '/v1/chat/completions')).error['message']).to.equal(
        'model "img-native" does not serve /v1/chat/completions; it serves /v1/images/generations',
      );
    });

    it('a key that cannot cover the images: 402', async () => {
      // Two images at $60 each against a balance of $100.
      expect((await refused({ model: 'img-pricey', prompt: 'x', n: 2 })).status).to.equal(402);
    });
  });
});
