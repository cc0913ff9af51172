import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import { call, CHAT_HEADERS, KEYS, startGateway, type TestGateway } from '../support/gateway.ts';

/**
 * In-process media answers that go wrong (issue #13 review): nothing is charged for no answer, a
 * refusal thrown from inside a stream keeps its 4xx, and a stream that stops early says so.
 */
const PLUGINS_DIR = fileURLToPath(new URL('../fixtures/plugins/', import.meta.url));

describe('in-process media answers that go wrong', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway(
      `
auth: { keys: [{ name: alice, key: "${KEYS.alice}", balance_usd: 10 }] }
providers: [{ id: faults, plugin: ./media-faults.js }]
models:
  - { id: speaker, routes: [{ provider: faults }], pricing: { input: 0, characters: 1000 }, output_modalities: [audio] }
  - { id: painter, routes: [{ provider: faults }], pricing: { input: 0, image: 0.5 }, output_modalities: [image] }
`,
      { dir: PLUGINS_DIR },
    );
  });
  after(() => gw.close());
  const spent = async () => ((await call(`${gw.url}/v1/balance`, { headers: CHAT_HEADERS })).json() as { spent_usd: number; held_usd: number });

  it('speech with no audio at all is an error, not a charged empty clip', async () => {
    const res = await call(`${gw.url}/v1/audio/speech`, { headers: CHAT_HEADERS, body: { model: 'speaker', voice: 'a', input: 'empty' } });
    expect(res.status).to.be.at.least(500);
    expect(await spent()).to.deep.include({ spent_usd: 0, held_usd: 0 });
  });

  it("a refusal thrown from inside the plugin's stream keeps its 4xx, and is not charged", async () => {
    for (const [path, body] of [
      ['/v1/audio/speech', { model: 'speaker', voice: 'robot', input: 'refuse' }],
      ['/v1/images/generations', { model: 'painter', prompt: 'refuse', stream: true }],
    ] as const) {
      const res = await call(`${gw.url}${path}`, { headers: CHAT_HEADERS, body });
      expect(res.status, path).to.equal(400);
      expect(res.json()['error']).to.deep.include({ param: 'voice', message: 'voice: not one this plugin has' });
    }
    expect(await spent()).to.deep.include({ spent_usd: 0, held_usd: 0 });
  });

  it('an image stream that stops before its completed event ends with an in-band error', async () => {
    const res = await call(`${gw.url}/v1/images/generations`, { headers: CHAT_HEADERS, body: { model: 'painter', prompt: 'short', stream: true } });
    expect(res.status).to.equal(200);
    expect(res.text).to.include('event: image_generation.partial_image');
    expect(res.text).to.match(/data: \{"error":\{[^\n]*0 of 1 images completed/);
    expect((await spent()).spent_usd).to.equal(0); // no image completed: none charged
  });

  it('an empty image stream is an error, not a 200 with nothing in it', async () => {
    const res = await call(`${gw.url}/v1/images/generations`, { headers: CHAT_HEADERS, body: { model: 'painter', prompt: 'empty', stream: true } });
    expect(res.status).to.be.at.least(500);
  });
});
