import { expect } from 'chai';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { SseGuard } from '../../src/proxy/sse-guard.ts';

const fixture = (path: string) => readFileSync(new URL(`../fixtures/${path}`, import.meta.url));

function run(format: 'messages' | 'chat', chunks: Buffer[]): { out: Buffer; guard: SseGuard; boundaries: boolean } {
  const guard = new SseGuard(format);
  const parts: Buffer[] = [];
  let boundaries = true;
  for (const chunk of chunks) {
    const out = guard.push(chunk);
    if (out.length > 0) {
      parts.push(out);
      boundaries &&= out.subarray(-2).toString() === '\n\n' || out.subarray(-4).toString() === '\r\n\r\n';
    }
  }
  return { out: Buffer.concat(parts), guard, boundaries };
}

function splits(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const at of [...points, bytes.length]) {
    if (at > from) chunks.push(bytes.subarray(from, at));
    from = at;
  }
  return chunks;
}

describe('native SSE guard', () => {
  const streams = [
    ['messages', fixture('anthropic/text.sse')],
    ['messages', fixture('anthropic/thinking-tool.sse')],
    ['chat', fixture('openai/text.sse')],
    ['chat', fixture('openai/tool-call.sse')],
    ['chat', fixture('openai/openrouter-reasoning.sse')],
  ] as const;

  it('passes recorded streams through byte for byte, whole events only, however they are split', () => {
    for (const [format, bytes] of streams) {
      fc.assert(
        fc.property(fc.array(fc.nat(), { maxLength: 12 }), (cuts) => {
          const { out, guard, boundaries } = run(format, splits(bytes, cuts));
          expect(out.equals(bytes)).to.equal(true);
          expect(boundaries).to.equal(true);
          expect(guard.terminated).to.equal(true);
          expect(guard.pending).to.equal(false);
        }),
        { numRuns: 200 },
      );
    }
  });

  it('passes CRLF streams and comments through', () => {
    const bytes = Buffer.from(': OPENROUTER PROCESSING\r\n\r\ndata: {"choices":[{"delta":{"content":"hi"},"finish_reason":null}]}\r\n\r\ndata: [DONE]\r\n\r\n');
    const { out, guard } = run('chat', [bytes.subarray(0, 30), bytes.subarray(30)]);
    expect(out.equals(bytes)).to.equal(true);
    expect(guard.terminated).to.equal(true);
  });

  it('reports a stream that ends without its terminator, and holds back a half event', () => {
    const text = fixture('anthropic/text.sse').toString();
    const cut = text.slice(0, text.indexOf('event: message_stop') + 10);
    const { out, guard } = run('messages', [Buffer.from(cut)]);
    expect(guard.terminated).to.equal(false);
    expect(guard.pending).to.equal(true);
    expect(out.toString()).to.equal(text.slice(0, text.indexOf('event: message_stop')));
  });

  it('stops before a malformed event and passes none of it', () => {
    const good = 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}\n\n';
    const bad = 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_de\n\n';
    const { out, guard } = run('messages', [Buffer.from(good + bad + good)]);
    expect(guard.malformed).to.equal(true);
    expect(out.toString()).to.equal(good);
    const chat = run('chat', [Buffer.from('data: {"choices":[]}\n\ndata: not json at all\n\n')]);
    expect(chat.guard.malformed).to.equal(true);
    expect(chat.out.toString()).to.equal('data: {"choices":[]}\n\n');
  });

  it('notes an upstream in-band error as the end of the stream', () => {
    const messages = run('messages', [Buffer.from('event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n')]);
    expect(messages.guard.upstreamError && messages.guard.terminated).to.equal(true);
    const chat = run('chat', [Buffer.from('data: {"error":{"message":"boom","code":502}}\n\n')]);
    expect(chat.guard.upstreamError && chat.guard.terminated).to.equal(true);
  });

  it('takes a Chat finish_reason as the end when [DONE] does not come', () => {
    const { guard } = run('chat', [Buffer.from('data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n')]);
    expect(guard.terminated).to.equal(true);
    const open = run('chat', [Buffer.from('data: {"choices":[{"index":0,"delta":{"content":"\\"finish_reason\\":\\""},"finish_reason":null}]}\n\n')]);
    expect(open.guard.terminated).to.equal(false);
  });
});

describe('SseGuard with an endpoint terminator (issue #13)', () => {
  const event = (type: string) => `event: ${type}\ndata: {"type":"${type}","b64_json":"AAAA"}\n\n`;
  const stream = Buffer.from(event('image_generation.partial_image') + event('image_generation.completed') + event('image_generation.completed'));
  const terminator = (count: number) => ({ markers: [Buffer.from('"image_generation.completed"')], count });

  it('is terminated only once every expected terminator has passed, wherever the stream is split', () => {
    for (let cut = 0; cut <= stream.length; cut++) {
      const guard = new SseGuard('chat', terminator(2));
      const out = Buffer.concat([guard.push(stream.subarray(0, cut)), guard.push(stream.subarray(cut))]);
      expect(out.equals(stream), `cut at ${cut}`).to.equal(true);
      expect(guard.terminated, `cut at ${cut}`).to.equal(true);
    }
    const short = new SseGuard('chat', terminator(3));
    short.push(stream);
    expect(short.terminated).to.equal(false);
  });
});
