import { expect } from 'chai';
import { ImagesUsageTap } from '../../src/usage/images-tap.ts';
import { ImagesSseUsageTap } from '../../src/usage/images-sse-tap.ts';

describe('the Images usage tap', () => {
  const body = Buffer.from(
    JSON.stringify({
      created: 1,
      data: [{ b64_json: 'iVBORw0KGgo=' }, { revised_prompt: 'say "url": and "b64_json": {"usage": 1}', url: 'https://x/y.png' }],
      usage: { input_tokens: 50, input_tokens_details: { image_tokens: 40, text_tokens: 10 }, output_tokens: 7, total_tokens: 57 },
    }),
  );

  it('counts the images and reads usage wherever the body is split', () => {
    for (let cut = 0; cut <= body.length; cut++) {
      for (const step of [1, 3, 64]) {
        const tap = new ImagesUsageTap();
        const head = body.subarray(0, cut);
        for (let at = 0; at < head.length; at += step) tap.push(head.subarray(at, Math.min(at + step, head.length)));
        tap.push(body.subarray(cut));
        // The quoted keys inside revised_prompt are escaped in JSON, so they are not counted.
        expect(tap.finish(), `cut at ${cut}, step ${step}`).to.deep.include({ images: 2, input: 10, inputImage: 40, output: 0, outputImage: 7 });
      }
    }
  });

  it('reads nothing from an empty answer, and images without usage from a dall-e one', () => {
    expect(new ImagesUsageTap().finish()).to.equal(undefined);
    const tap = new ImagesUsageTap();
    tap.push(Buffer.from('{"created":1,"data":[{"url":"https://x"}]}'));
    expect(tap.finish()).to.deep.equal({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, images: 1 });
  });
});

describe('the streamed Images usage tap', () => {
  const event = (type: string, usage?: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, b64_json: 'iVBORw0KGgo=', ...(usage && { usage }) })}\n\n`;
  const body = Buffer.from(
    event('image_generation.partial_image') +
      event('image_generation.completed', { input_tokens: 10, input_tokens_details: { image_tokens: 0, text_tokens: 10 }, output_tokens: 100, total_tokens: 110 }) +
      event('image_generation.partial_image') +
      event('image_generation.completed', { input_tokens: 0, input_tokens_details: { image_tokens: 0, text_tokens: 0 }, output_tokens: 100, total_tokens: 100 }),
  );

  it('counts completed images and adds up their usage wherever the stream is split', () => {
    for (let cut = 0; cut <= body.length; cut++) {
      for (const step of [1, 7]) {
        const tap = new ImagesSseUsageTap();
        const head = body.subarray(0, cut);
        for (let at = 0; at < head.length; at += step) tap.push(head.subarray(at, Math.min(at + step, head.length)));
        tap.push(body.subarray(cut));
        expect(tap.finish(), `cut at ${cut}, step ${step}`).to.deep.include({ images: 2, input: 10, outputImage: 200 });
      }
    }
  });
});
