import { crc32, deflateSync } from 'node:zlib';
import {
  PluginRequestError,
  type ClientRequest,
  type FormattedImages,
  type ImagesEditStreamEvent,
  type ImagesRequest,
  type ImagesResponse,
  type ImagesStreamEvent,
} from '../../src/plugin-host/api.ts';
import { fnv1a } from './hash.ts';
import { estimateTokens } from './reply.ts';

/** The demo image model draws this many pixels a side, whatever size is asked (it is a demo). */
export const DRAWN_SIDE = 64;
/** Output image tokens the demo reports per image, as GPT image models report theirs. */
export const TOKENS_PER_IMAGE = 16;

/**
 * Deterministic demo images: a real PNG, a diagonal gradient between two colours taken from the
 * prompt, so the same prompt always draws the same picture and different prompts differ. `n`
 * images vary by their index. `url` answers are data URLs: the mock has nowhere to host a file.
 */
export function draw(body: ImagesRequest): ImagesResponse {
  const n = body.n ?? 1;
  const data = Array.from({ length: n }, (_, i) => {
    const png = gradientPng(`${body.prompt}\u0000${i}`).toString('base64');
    return body.response_format === 'url' ? { url: `data:image/png;base64,${png}` } : { b64_json: png };
  });
  const text = estimateTokens([body.prompt]);
  return {
    created: Math.floor(Date.now() / 1000),
    data,
    output_format: 'png',
    usage: {
      input_tokens: text,
      input_tokens_details: { text_tokens: text, image_tokens: 0 },
      output_tokens: TOKENS_PER_IMAGE * n,
      total_tokens: text + TOKENS_PER_IMAGE * n,
    },
  };
}

/**
 * The same pictures streamed (`stream: true`): `partial_images` previews of each (blurrier seeds
 * of the same prompt), then its `image_generation.completed` event with that image's usage.
 */
export async function* drawStream(body: ImagesRequest): AsyncGenerator<ImagesStreamEvent> {
  const whole = draw({ ...body, stream: false, response_format: 'b64_json' });
  const text = estimateTokens([body.prompt]);
  const common = { background: 'opaque', created_at: whole.created, output_format: 'png', quality: 'auto', size: 'auto' } as const;
  for (const [i, image] of (whole.data ?? []).entries()) {
    for (let p = 0; p < (body.partial_images ?? 0); p++) {
      const preview = gradientPng(`${body.prompt}\u0000${i}\u0000partial ${p}`).toString('base64');
      yield { type: 'image_generation.partial_image', b64_json: preview, partial_image_index: p, ...common };
    }
    yield {
      type: 'image_generation.completed',
      b64_json: image.b64_json ?? '',
      ...common,
      // The prompt is read once: its tokens are on the first image's usage, so the sum is the whole's.
      usage: {
        input_tokens: i === 0 ? text : 0,
        input_tokens_details: { text_tokens: i === 0 ? text : 0, image_tokens: 0 },
        output_tokens: TOKENS_PER_IMAGE,
        total_tokens: (i === 0 ? text : 0) + TOKENS_PER_IMAGE,
      },
    };
  }
}

function gradientPng(seed: string): Buffer {
  const hash = fnv1a(seed);
  const from = [hash & 0xff, (hash >>> 8) & 0xff, (hash >>> 16) & 0xff];
  const to = [255 - (from[0] ?? 0), 255 - (from[1] ?? 0), 255 - (from[2] ?? 0)];
  const side = DRAWN_SIDE;
  // Each scanline: filter byte 0, then RGB triples.
  const raw = Buffer.alloc(side * (1 + side * 3));
  for (let y = 0; y < side; y++) {
    const row = y * (1 + side * 3);
    for (let x = 0; x < side; x++) {
      const t = (x + y) / (2 * (side - 1));
      for (let c = 0; c < 3; c++) raw[row + 1 + x * 3 + c] = Math.round((from[c] ?? 0) * (1 - t) + (to[c] ?? 0) * t);
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits per channel, truecolour, deflate, no filter, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

type EditRequest = Extract<ClientRequest, { endpoint: 'images_edits' }>;

/**
 * The demo edit: the same gradients, seeded by the prompt and the first image's bytes, so a
 * different picture edits differently. Streamed edits use the `image_edit.*` event names.
 */
export async function edit(request: EditRequest): Promise<FormattedImages> {
  const image = request.files.find((f) => f.field === 'image' || f.field === 'image[]');
  if (image === undefined) throw new PluginRequestError(400, 'image is required', 'image');
  const { prompt = '', n, response_format, partial_images } = request.body;
  const seeded: ImagesRequest = {
    prompt: `${prompt}\u0000${fnv1a((await image.bytes()).toString('latin1'))}`,
    ...(typeof n === 'number' && { n }),
    ...(response_format && { response_format }),
    ...(typeof partial_images === 'number' && { partial_images }),
  };
  if (!request.stream) return { format: 'images', body: draw(seeded) };
  return { format: 'images', events: editEvents(drawStream(seeded)) };
}

async function* editEvents(events: AsyncIterable<ImagesStreamEvent>): AsyncGenerator<ImagesEditStreamEvent> {
  for await (const event of events) {
    yield event.type === 'image_generation.completed'
      ? { ...event, type: 'image_edit.completed' }
      : { ...event, type: 'image_edit.partial_image' };
  }
}
