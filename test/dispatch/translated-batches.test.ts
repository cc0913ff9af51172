import { expect } from 'chai';
import fc from 'fast-check';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import bedrockPlugin from '../../plugins/bedrock/index.ts';
import geminiPlugin from '../../plugins/gemini/index.ts';
import { planTranslation } from '../../src/dispatch/bridge.ts';
import { pluginDecodeError } from '../../src/formats/canonical/plugin-codec.ts';
import type { Json } from '../../src/formats/convert/json.ts';
import type { WireFormat } from '../../src/formats/wire.ts';
import type { CallContext, PluginLogger, Translator } from '../../src/plugin-host/api.ts';
import { decodeFrameBatches, decodeFrames } from '../../src/sse/decode-frames.ts';
import { decodeSse, decodeSseBatches } from '../../src/sse/decode.ts';
import { chatChunkFrame, messagesEventFrame } from '../../src/sse/encode.ts';
import { frame } from '../support/aws-fake.ts';

/**
 * Issue #17's chunk-at-a-time path for every translated stream: a plugin's own format (Gemini,
 * Bedrock's Converse), a framed stream (AWS's event stream) and the same format on both sides
 * (Claude on Bedrock, a Chat upstream for a Chat client). The client must get exactly the bytes
 * the event-at-a-time path gives, however the upstream's bytes arrive: the upstream's own JSON
 * text where an event passes unchanged, the events before an in-band error or a corrupt frame,
 * then that error.
 */
const silent: PluginLogger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const call = { log: silent } as unknown as CallContext;
const fail = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

async function* pieces(body: Buffer, cuts: readonly number[]): AsyncGenerator<Uint8Array> {
  let start = 0;
  for (const cut of [...cuts, body.length]) {
    if (cut > start) yield Buffer.from(body.subarray(start, cut));
    start = Math.max(start, cut);
  }
}

interface Run {
  frames: string;
  usage: unknown;
  error?: string;
}

/** What translate.ts does with the answer's bytes, then what sendStream writes of each event. */
async function run(translator: Translator, clientFormat: WireFormat, body: Buffer, cuts: readonly number[], batched: boolean): Promise<Run> {
  const request = { model: 'm', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Hi' }] };
  const plan = planTranslation({ clientFormat, body: request, translator, requestId: 'req_0123456789abcdef', upstreamModel: 'm', maxOutputTokens: null, provider: 'up', inputTokensEstimate: 3 });
  const framing = translator.streamFraming;
  const bytes = pieces(body, cuts);
  const onCorrupt = (err: unknown) => pluginDecodeError(err, 'up');
  let events: AsyncIterable<Json | readonly Json[]>;
  if (batched) {
    if (!plan.streamBatches) throw new Error('no chunk-at-a-time path');
    events = plan.streamBatches(framing ? decodeFrameBatches(bytes, framing.decoder(call), fail, onCorrupt) : decodeSseBatches(bytes, fail));
  } else {
    events = plan.stream(framing ? decodeFrames(bytes, framing.decoder(call), fail, onCorrupt) : decodeSse(bytes, fail));
  }
  const frameOf = clientFormat === 'chat' ? chatChunkFrame : (event: Json) => messagesEventFrame(event as { type: string });
  let frames = '';
  try {
    // Batches are reused: each is read before the next is asked for.
    for await (const item of events) for (const event of Array.isArray(item) ? (item as readonly Json[]) : [item as Json]) frames += frameOf(event);
  } catch (err) {
    return { frames: sameSecond(frames), usage: plan.streamUsage(), error: err instanceof Error ? err.message : String(err) };
  }
  return { frames: sameSecond(frames), usage: plan.streamUsage() };
}

/** Chat chunks carry the second the plan was made in: two runs may straddle one. */
const sameSecond = (frames: string): string => frames.replace(/"created":\d+/g, '"created":0');

const silentProvider = { id: 'up', baseUrl: 'http://127.0.0.1:1', log: silent, configDir: '/tmp' };
const bedrock = await bedrockPlugin.create({ ...silentProvider, apiKey: 'bedrock-key', options: { region: 'us-east-1' } });
if (!('translateFor' in bedrock) || !bedrock.translateFor) throw new Error('bedrock serves by model');
const claude = bedrock.translateFor('anthropic.claude-sonnet-4-5-20250929-v1:0')!;
const converse = bedrock.translateFor('amazon.nova-pro-v1:0')!;
const geminiInstance = await geminiPlugin.create({ ...silentProvider, apiKey: 'k', options: {} });
const gemini = (geminiInstance as { translate: Translator }).translate;
const chatTranslator = { upstream: 'chat', endpoints: ['chat_completions'], request: () => ({ url: 'http://x', headers: {}, body: {} }) } as unknown as Translator;
const messagesTranslator = { upstream: 'messages', endpoints: ['messages'], request: () => ({ url: 'http://x', headers: {}, body: {} }) } as unknown as Translator;

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const str = (value: string) => ({ type: 'string' as const, value });
/** A `chunk` carrying this exact JSON text, as Bedrock wraps Anthropic's events. */
const rawChunk = (text: string): Buffer => Buffer.from(codec.encode({ headers: { ':event-type': str('chunk'), ':content-type': str('application/json'), ':message-type': str('event') }, body: fromUtf8(JSON.stringify({ bytes: Buffer.from(text).toString('base64'), p: 'abcdefgh' })) }));
/** Anthropic's events written as no JSON.stringify would write them: spaces, escapes, 1.0. */
const messagesTexts = (deltas: number): string[] => [
  '{"type": "message_start", "message": {"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1.0}}}',
  '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
  ...Array.from({ length: deltas }, (_, i) => `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"w\\u00e9${i} \\/ é "}}`),
  '{"type":"content_block_stop","index":0 }',
  `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":${deltas}}}`,
  '{"type":"message_stop","amazon-bedrock-invocationMetrics":{"inputTokenCount":25}}',
];
const messagesSse = (texts: readonly string[]): string => texts.map((t) => `event: ${(JSON.parse(t) as { type: string }).type}\ndata: ${t}\n\n`).join('');
const geminiEvent = (i: number, last: boolean): string =>
  `data: {"candidates": [{"content": {"role":"model","parts":[{"text":"w\\u00e9${i} "}]}${last ? ',"finishReason":"STOP"' : ''}}]${last ? ',"usageMetadata":{"promptTokenCount":25,"candidatesTokenCount":9}' : ''}}\r\n\r\n`;
const geminiSse = (count: number): string => Array.from({ length: count }, (_, i) => geminiEvent(i, i === count - 1)).join('');
const chatSse = (count: number): string =>
  [
    ...Array.from({ length: count }, (_, i) => `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"w\\u00e9${i}"},"finish_reason":null}]}\n\n`),
    'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":6,"total_tokens":11}}\n\n',
    'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":6,"total_tokens":11}}\n\n',
    'data: [DONE]\n\n',
  ].join('');
const converseFrames = (count: number): Buffer[] => [
  frame('messageStart', { role: 'assistant' }),
  ...Array.from({ length: count }, (_, i) => frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: `w\u00e9${i} ` } })),
  frame('contentBlockStop', { contentBlockIndex: 0 }),
  frame('messageStop', { stopReason: 'end_turn' }),
  frame('metadata', { usage: { inputTokens: 5, outputTokens: 7 }, metrics: { latencyMs: 1 } }),
];

const texts = messagesTexts(40);
const CASES: [string, Translator, WireFormat, Buffer][] = [
  ['Claude on Bedrock (framed, same format): the upstream text as it came', claude, 'messages', Buffer.concat(texts.map(rawChunk))],
  ['Claude on Bedrock: a throttling exception after some text', claude, 'messages', Buffer.concat([...texts.slice(0, 12).map(rawChunk), frame('throttlingException', { message: 'slow down' }, 'exception'), ...texts.slice(12).map(rawChunk)])],
  ['Claude on Bedrock: a corrupt frame after some text', claude, 'messages', (() => {
    const body = Buffer.concat(texts.map(rawChunk));
    const at = Buffer.concat(texts.slice(0, 9).map(rawChunk)).length + 40;
    body[at] = body[at]! ^ 0xff;
    return body;
  })()],
  ['Claude on Bedrock: cut before message_stop', claude, 'messages', Buffer.concat(texts.slice(0, 20).map(rawChunk))],
  ['Converse on Bedrock (framed, the plugin\'s format)', converse, 'messages', Buffer.concat(converseFrames(30))],
  ['Converse on Bedrock for a Chat client', converse, 'chat', Buffer.concat(converseFrames(30))],
  ['Gemini (the plugin\'s format)', gemini, 'messages', Buffer.from(geminiSse(40))],
  ['Gemini: an in-band error after some text', gemini, 'messages', Buffer.from(geminiSse(40).replace(geminiEvent(15, false), 'data: {"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED"}}\r\n\r\n'))],
  ['Gemini: an event that is not JSON after some text', gemini, 'messages', Buffer.from(geminiSse(40).replace(geminiEvent(15, false), 'data: {"candidates": [\r\n\r\n'))],
  ['Gemini: cut before its finish', gemini, 'messages', Buffer.from(geminiSse(40).slice(0, geminiSse(40).indexOf(geminiEvent(30, false))))],
  ['Messages upstream, Messages client (SSE, same format)', messagesTranslator, 'messages', Buffer.from(messagesSse(texts))],
  ['Messages upstream: an error event after some text', messagesTranslator, 'messages', Buffer.from(messagesSse(texts.slice(0, 14)) + 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n' + messagesSse(texts.slice(14)))],
  ['Chat upstream, Chat client that did not ask for usage', chatTranslator, 'chat', Buffer.from(chatSse(30))],
];

describe('translated streams a chunk at a time: plugin formats, framed streams, the same format (issue #17)', () => {
  for (const [name, translator, clientFormat, body] of CASES) {
    it(`${name}: the same bytes and the same error as event by event, however the bytes arrive`, async () => {
      const whole = await run(translator, clientFormat, body, [], false);
      expect(whole.frames.split('\n\n').length).to.be.greaterThan(4);
      expect(await run(translator, clientFormat, body, [], true)).to.deep.equal(whole);
      await fc.assert(
        fc.asyncProperty(fc.uniqueArray(fc.integer({ min: 1, max: body.length - 1 }), { maxLength: 40 }).map((c) => c.sort((a, b) => a - b)), async (cuts) => {
          const single = await run(translator, clientFormat, body, cuts, false);
          expect(await run(translator, clientFormat, body, cuts, true)).to.deep.equal(single);
        }),
        { seed: 17, numRuns: 25 },
      );
    });
  }

  it('writes Claude on Bedrock\'s events in the upstream\'s own text, however many a chunk holds', async () => {
    const many = messagesTexts(600);
    const result = await run(claude, 'messages', Buffer.concat(many.map(rawChunk)), [], true);
    expect(result.error).to.equal(undefined);
    const written = result.frames.split('\n\n').filter((f) => f !== '').map((f) => f.slice(f.indexOf('\ndata: ') + 7));
    // The last one lost Bedrock's invocation metrics, which are not Anthropic's: it is rewritten.
    expect(written.slice(0, -1)).to.deep.equal(many.slice(0, -1));
    expect(written.at(-1)).to.equal('{"type":"message_stop"}');
  });

  it('sends the events before a failure, then fails: an error in the first chunk is not a failure before any output', async () => {
    const body = Buffer.from(geminiSse(5).replace(geminiEvent(3, false), 'data: {"error":{"code":503,"message":"busy"}}\r\n\r\n'));
    const result = await run(gemini, 'messages', body, [], true);
    expect(result.frames).to.include('event: content_block_delta');
    expect(result.error).to.match(/busy/);
  });
});
