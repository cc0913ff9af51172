import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import OpenAI, { toFile } from 'openai';
import type { RecordedRequest, Reply } from '../support/fake-upstream.ts';
import { expectNothingSentOrCharged, KEYS, PROVIDER_KEYS, standardConfig, generationOf, useUpstreamAndGateway } from '../support/gateway.ts';
import { multipart, postForm, type PartSpec } from '../support/multipart.ts';

/**
 * POST /v1/images/edits (issue #13; media.md §1.2): a multipart form of one or more images, an
 * optional mask and a prompt. Native routes get the form as sent (the model renamed in place),
 * held and charged like generations; the demo edits in-process. Non-images are refused by their
 * bytes, whatever their names say.
 */

const fixture = (name: string): string => readFileSync(new URL(`../fixtures/openai/${name}`, import.meta.url), 'utf8');
const GPT_IMAGE = fixture('images-gpt-image.json');
const EDIT_STREAM = fixture('images-edit-stream.sse');
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
// A 1×1 PNG (the one in the recorded answers).
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC', 'base64');
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(64)]);
const json = { 'content-type': 'application/json' };
const AUTH = { authorization: `Bearer ${KEYS.alice}` };

const EXTRA = `  - id: edit-native
    routes: [{ provider: openai, model: gpt-image-1 }]
    pricing: { input: 5, output: 10, input_image: 10, output_image: 40, image: { "1024x1024/low": 0.011, "1024x1024": 0.042 } }
    input_modalities: [text, image]
    output_modalities: [image]
  - id: draw-only
    routes: [{ provider: openai, model: dall-e-3 }]
    pricing: { input: 0, image: 0.04 }
    output_modalities: [image]
  - id: edit-demo
    routes: [{ provider: mock }]
    pricing: { input: 0, image: 0.5 }
    max_images: 2
    input_modalities: [text, image]
    output_modalities: [image]
`;


const editsUpstream = (reply: Reply) => (req: RecordedRequest): Reply | undefined => (req.url === '/v1/images/edits' ? reply : undefined);

describe('image edits', () => {
  const env = useUpstreamAndGateway((url) => standardConfig(url, EXTRA));
  let openai: OpenAI;
  before(() => {
    openai = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: KEYS.alice, maxRetries: 0 });
  });
  const generation = (id: string | string[] | null | undefined) => generationOf(env.gw.url, id);
  const post = (parts: readonly PartSpec[]) => {
    const { body, contentType } = multipart(parts);
    return postForm(`${env.gw.url}/v1/images/edits`, { ...AUTH, 'content-type': contentType }, [body]);
  };

  describe('native route', () => {
    it('openai SDK with two images and a mask: every part arrives as sent, the model renamed; charged per image and per token', async () => {
      env.upstream.script(editsUpstream({ body: GPT_IMAGE, headers: json }));
      const { data: answer, response } = await openai.images
        .edit({
          image: [await toFile(PNG, 'a.png', { type: 'image/png' }), await toFile(JPEG, 'b.jpg', { type: 'image/jpeg' })],
          mask: await toFile(PNG, 'mask.png', { type: 'image/png' }),
          prompt: 'add a hat',
          model: 'edit-native',
          n: 2,
          size: '1024x1024',
          quality: 'low',
        })
        .withResponse();
      expect(answer.data).to.have.length(2);
      const seen = env.upstream.last();
      expect(seen.url).to.equal('/v1/images/edits');
      expect(seen.headers['authorization']).to.equal(`Bearer ${PROVIDER_KEYS.openai}`);
      const text = seen.body.toString('latin1');
      expect(text.match(/name="image\[\]"; filename="a\.png"/g)).to.have.length(1);
      expect(text.match(/name="image\[\]"; filename="b\.jpg"/g)).to.have.length(1);
      expect(text).to.include('name="mask"; filename="mask.png"');
      expect(text).to.match(/name="model"\r\n\r\ngpt-image-1\r\n/);
      expect(seen.body.includes(PNG)).to.equal(true);
      expect(seen.body.includes(JPEG)).to.equal(true);
      const row = await generation(response.headers.get('x-request-id'));
      expect(row).to.deep.include({ endpoint: 'images_edits', route: 'native' });
      expect(row.tokens).to.deep.include({ images: 2 });
      expect(row.cost_usd).to.be.closeTo((10 * 5 + 40 * 10 + 50 * 40) / 1e6 + 2 * 0.011, 1e-12);
    });

    it('stream: true: the image_edit events pass through, and the stream is whole at its completed event', async () => {
      env.upstream.script(editsUpstream({ sse: EDIT_STREAM }));
      const stream = await openai.images.edit({ image: await toFile(PNG, 'a.png'), prompt: 'x', model: 'edit-native', stream: true, partial_images: 1 });
      const types: string[] = [];
      for await (const event of stream) types.push(event.type);
      expect(types).to.deep.equal(['image_edit.partial_image', 'image_edit.completed']);
    });

    it('an upstream edit stream cut before its completed event ends in an in-band error', async () => {
      const cut = EDIT_STREAM.slice(0, EDIT_STREAM.indexOf('event: image_edit.completed'));
      env.upstream.script(editsUpstream({ sse: cut }));
      const res = await post([{ name: 'image', filename: 'a.png', type: 'image/png', bytes: PNG }, { name: 'prompt', value: 'x' }, { name: 'model', value: 'edit-native' }, { name: 'stream', value: 'true' }]);
      expect(res.status).to.equal(200);
      expect(res.text.trimEnd().split('\n\n').at(-1)).to.match(/^data: \{"error":\{"message":"upstream provider \\"openai\\" ended the response early"/);
    });
  });

  describe('in-process (the demo model)', () => {
    it('openai SDK: real PNGs, one per image asked, charged per image', async () => {
      const { data: answer, response } = await openai.images.edit({ image: await toFile(PNG, 'a.png'), prompt: 'add a hat', model: 'edit-demo', n: 2 }).withResponse();
      expect(answer.data).to.have.length(2);
      for (const image of answer.data ?? []) expect(Buffer.from(image.b64_json ?? '', 'base64').subarray(0, 8)).to.deep.equal(PNG_SIGNATURE);
      const row = await generation(response.headers.get('x-request-id'));
      expect(row).to.deep.include({ endpoint: 'images_edits', route: 'in-process', cost_usd: 1 });
    });

    it('a different picture edits differently; the same one the same', async () => {
      const once = async (bytes: Buffer) => (await openai.images.edit({ image: await toFile(bytes, 'a.png'), prompt: 'p', model: 'edit-demo' })).data?.[0]?.b64_json;
      const other = Buffer.concat([PNG, Buffer.from('trailing')]);
      expect(await once(PNG)).to.equal(await once(PNG));
      expect(await once(PNG)).to.not.equal(await once(other));
    });

    it('stream: true: image_edit events through the SDK', async () => {
      const stream = await openai.images.edit({ image: await toFile(PNG, 'a.png'), prompt: 'p', model: 'edit-demo', stream: true, partial_images: 2 });
      const types: string[] = [];
      for await (const event of stream) types.push(event.type);
      expect(types).to.deep.equal(['image_edit.partial_image', 'image_edit.partial_image', 'image_edit.completed']);
    });
  });

  describe('refused, with nothing charged and no whole form upstream', () => {
    // The upstream may see part of a refused form, never a whole one (a whole one would be recorded).
    expectNothingSentOrCharged(env);

    it('a text file as the image: 400 naming image, by its bytes, whatever its type says', async () => {
      const res = await post([{ name: 'model', value: 'edit-native' }, { name: 'prompt', value: 'x' }, { name: 'image', filename: 'notes.png', type: 'image/png', bytes: Buffer.from('just some text, not a picture') }]);
      expect(res.status).to.equal(400);
      expect(res.json()).to.have.nested.property('error.param', 'image');
      expect(res.json()).to.have.nested.property('error.message').that.includes('notes.png');
    });

    it('a non-image mask: 400 naming mask', async () => {
      const res = await post([{ name: 'image', filename: 'a.png', type: 'image/png', bytes: PNG }, { name: 'mask', filename: 'm.txt', type: 'text/plain', bytes: Buffer.from('nope nope nope') }, { name: 'prompt', value: 'x' }, { name: 'model', value: 'edit-demo' }]);
      expect(res.status).to.equal(400);
      expect(res.json()).to.have.nested.property('error.param', 'mask');
    });

    it('no image at all: 400 naming image', async () => {
      const res = await post([{ name: 'model', value: 'edit-native' }, { name: 'prompt', value: 'x' }]);
      expect(res.status).to.equal(400);
      expect(res.json()).to.have.nested.property('error.param', 'image');
    });

    it('no prompt: 400 naming prompt', async () => {
      const res = await post([{ name: 'model', value: 'edit-native' }, { name: 'image', filename: 'a.png', type: 'image/png', bytes: PNG }]);
      expect(res.status).to.equal(400);
      expect(res.json()).to.have.nested.property('error.param', 'prompt');
    });

    it('n above the model\'s maximum: 400 naming n', async () => {
      const res = await post([{ name: 'model', value: 'edit-demo' }, { name: 'n', value: '3' }, { name: 'image', filename: 'a.png', type: 'image/png', bytes: PNG }, { name: 'prompt', value: 'x' }]);
      expect(res.status).to.equal(400);
      expect(res.json()).to.have.nested.property('error.param', 'n');
    });

    it('a model that draws but does not read images: 400 naming the endpoints it serves', async () => {
      const res = await post([{ name: 'model', value: 'draw-only' }, { name: 'image', filename: 'a.png', type: 'image/png', bytes: PNG }, { name: 'prompt', value: 'x' }]);
      expect(res.status).to.equal(400);
      expect(res.json()).to.have.nested.property('error.message').that.includes('/v1/images/generations');
    });
  });
});
