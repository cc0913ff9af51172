import { expect } from 'chai';
import { embeddingsUsageTap, imagesUsageTap } from '../../src/usage/tail-tap.ts';

describe('the tail usage tap (Images and embeddings answers)', () => {
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
        const tap = imagesUsageTap();
        const head = body.subarray(0, cut);
        for (let at = 0; at < head.length; at += step) tap.push(head.subarray(at, Math.min(at + step, head.length)));
        tap.push(body.subarray(cut));
        // The quoted keys inside revised_prompt are escaped in JSON, so they are not counted.
        expect(tap.finish(), `cut at ${cut}, step ${step}`).to.deep.include({ images: 2, input: 10, inputImage: 40, output: 0, outputImage: 7 });
      }
    }
  });

  it('counts an entry whose url is null once: compatible servers send every field', () => {
    const tap = imagesUsageTap();
    tap.push(Buffer.from('{"created":1,"data":[{"b64_json":"AAAA","url":null,"revised_prompt":null},{"b64_json": "BBBB", "url": null}]}'));
    expect(tap.finish()).to.deep.include({ images: 2 });
  });

  it('reads embeddings usage from the tail of an answer larger than the generic tap keeps, estimating no output', () => {
    const tap = embeddingsUsageTap();
    const vector = `"${'A'.repeat(1024 * 1024)}"`;
    tap.push(Buffer.from('{"object":"list","data":['));
    for (let i = 0; i < 10; i++) tap.push(Buffer.from(`${i ? ',' : ''}{"object":"embedding","index":${i},"embedding":${vector}}`));
    tap.push(Buffer.from('],"model":"m","usage":{"prompt_tokens":123456,"total_tokens":123456}}'));
    expect(tap.finish()).to.deep.include({ input: 123456, output: 0 });
    expect(tap.outputEstimate()).to.equal(0);
  });

  it('reads nothing from an empty answer, and images without usage from a dall-e one', () => {
    expect(imagesUsageTap().finish()).to.equal(undefined);
    const tap = imagesUsageTap();
    tap.push(Buffer.from('{"created":1,"data":[{"url":"https://x"}]}'));
    expect(tap.finish()).to.deep.equal({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, images: 1 });
  });
});
