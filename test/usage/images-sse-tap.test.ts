import { expect } from 'chai';
import { ImagesSseUsageTap } from '../../src/usage/images-sse-tap.ts';

describe('the streamed Images usage tap', () => {
  const event = (type: string, usage?: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, b64_json: 'iVBORw0KGgo=', ...(usage && { usage }) })}\n\n`;
  const body = Buffer.from(
    event('image_generation.partial_image') +
      event('image_generation.completed', { input_tokens: 10, input_tokens_details: { image_tokens: 0, text_tokens: 10 }, output_tokens: 100, total_tokens: 110 }) +
      event('image_generation.partial_image') +
      event('image_generation.completed', { input_tokens: 0, input_tokens_details: { image_tokens: 0, text_tokens: 0 }, output_tokens: 100, total_tokens: 100 }),
  );

  it('does not count an image whose completed event was cut, and skips a null usage', () => {
    const tap = new ImagesSseUsageTap();
    tap.push(Buffer.from(event('image_generation.partial_image').replace('"iVBORw0KGgo="', '"x","usage": null')));
    const completed = event('image_generation.completed', { input_tokens: 1, output_tokens: 5, total_tokens: 6 });
    tap.push(Buffer.from(completed.slice(0, -2))); // its blank line never came
    expect(tap.finish()).to.deep.include({ images: 0, input: 1, outputImage: 5 });
  });

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
