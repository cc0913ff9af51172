import { expect } from 'chai';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { SseGuard } from '../../src/proxy/sse-guard.ts';
import { splits } from '../support/splits.ts';

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

describe('native SSE guard', () => {
  const streams = [
    ['messages', fixture('anthropic/text.sse')],
    ['messages', fixture('anthropic/thinking-tool.sse')],
    ['chat', fixture('openai/text.sse')],
    ['chat', fixture('openai/tool-call.sse')],
    ['chat', fixture('openai/openrouter-reasoning.sse')],
  ] as const;

  it('passes recorded streams through byte for byte, whole events only, LF or CRLF, however they are split', () => {
    // The scan finds an event's blank line by the bytes after a line's end (issue #17): with CRLF,
    // a cut can fall between the CR and the LF of either line. Each stream counts its content
    // events alike whichever its line ends and wherever it is cut.
    for (const [format, lf] of streams) {
      const crlf = Buffer.from(lf.toString('latin1').replace(/\r?\n/g, '\r\n'), 'latin1');
      const events = run(format, [lf]).guard.contentEvents;
      for (const bytes of [lf, crlf]) {
        fc.assert(
          fc.property(fc.array(fc.nat(), { maxLength: 12 }), (cuts) => {
            const { out, guard, boundaries } = run(format, splits(bytes, cuts));
            expect(out.equals(bytes)).to.equal(true);
            expect(boundaries).to.equal(true);
            expect(guard.terminated).to.equal(true);
            expect(guard.pending).to.equal(false);
            expect(guard.malformed).to.equal(false);
            expect(guard.contentEvents).to.equal(events);
          }),
          { numRuns: 200 },
        );
      }
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

  it('finds a non-null finish_reason exactly where its bytes are, by whatever surrounds the name (issue #17)', () => {
    // The guard looks for the name and compares the quote and `":"` around it: the same answer as a
    // search for the whole marker, on text built from its pieces and near misses.
    const pieces = ['finish_reason', '"', ':', '":"', '\\"', 'null', 'finish_', 'reason', 'x', ' '];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 24 }), (parts) => {
        const line = `data: {"x":"${parts.join('')}"}\n\n`;
        const { guard } = run('chat', [Buffer.from(line)]);
        expect(guard.terminated, line).to.equal(line.includes('"finish_reason":"'));
      }),
      { numRuns: 2000 },
    );
  });

  it('tells `data:` and `event:` lines by their bytes exactly, near misses included (issue #17)', () => {
    // The fields are compared byte by byte with literals: a line counts as a field exactly when it
    // starts with the field's name and colon, as an SSE parser reads it.
    const pieces = ['d', 'a', 't', 'e', 'v', 'n', ':', ' ', 'data', 'event', 'dat', 'even', 'x'];
    // A field name with one byte changed or dropped, or pieces strung together.
    const nearMiss = fc
      .record({ name: fc.constantFrom('data:', 'event:'), at: fc.nat(), byte: fc.constantFrom(...pieces.filter((p) => p.length === 1)), drop: fc.boolean(), tail: fc.constantFrom('', ' ', ':') })
      .map(({ name, at, byte, drop, tail }) => name.slice(0, at % name.length) + (drop ? '' : byte) + name.slice((at % name.length) + 1) + tail);
    fc.assert(
      fc.property(fc.oneof(nearMiss, fc.array(fc.constantFrom(...pieces), { maxLength: 5 }).map((parts) => parts.join(''))), (field) => {
        const data = run('messages', [Buffer.from(`${field}x\n\n`)]);
        expect(data.guard.malformed, `data line ${JSON.stringify(field)}`).to.equal(field.startsWith('data:'));
        const name = field.startsWith('event:') ? field.slice(6).replace(/^ /, '') + 'content_block_delta' : null;
        const event = run('messages', [Buffer.from(`${field}content_block_delta\ndata: {}\n\n`)]);
        expect(event.guard.contentEvents, `event line ${JSON.stringify(field)}`).to.equal(name === 'content_block_delta' ? 1 : 0);
      }),
      { numRuns: 3000 },
    );
  });

  it('scans a read over 256 KB as bytes, with the same answers (issue #17)', () => {
    // Past TEXT_MAX the guard makes no latin1 copy: an image's or audio's base64 is the bulk there.
    const big = `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${'y'.repeat(300 * 1024)}"}}\n\n`;
    const messages = Buffer.concat([Buffer.from(big), fixture('anthropic/text.sse')]);
    const small = run('messages', [fixture('anthropic/text.sse')]);
    for (const chunks of [[messages], splits(messages, [1000, 200 * 1024, big.length + 10])]) {
      const { out, guard } = run('messages', chunks);
      expect(out.equals(messages)).to.equal(true);
      expect(guard.terminated).to.equal(true);
      expect(guard.contentEvents).to.equal(small.guard.contentEvents + 1);
      if (chunks.length === 1) expect(guard.takeText(messages), 'no text made for a read this large').to.equal(undefined);
    }
    const chat = Buffer.from(`data: {"choices":[{"index":0,"delta":{"content":"${'z'.repeat(300 * 1024)}"},"finish_reason":"stop"}]}\n\n`);
    expect(run('chat', [chat]).guard.terminated, 'a finish_reason found in bytes').to.equal(true);
  });

  it('hands the usage tap the latin1 text of a chunk it read whole, once asked, and nothing for bytes it joined (issue #17)', () => {
    const guard = new SseGuard('messages');
    const first = Buffer.from('event: ping\ndata: {"type":"ping","text":"h\u00e9"}\n\n', 'utf8');
    guard.push(first);
    expect(guard.takeText(first)).to.equal(first.toString('latin1'));
    expect(guard.takeText(first), 'taken once').to.equal(undefined);
    const half = Buffer.from('event: ping\ndata: {"ty');
    guard.push(half);
    const rest = Buffer.from('pe":"ping"}\n\n');
    guard.push(rest); // scanned joined with the held half: not this chunk's own text
    expect(guard.takeText(rest)).to.equal(undefined);
    const other = Buffer.from('event: ping\ndata: {}\n\n');
    guard.push(other);
    expect(guard.takeText(Buffer.from(other)), 'another Buffer of the same bytes').to.equal(undefined);
    expect(guard.takeText(other), 'let go once asked').to.equal(undefined);
  });
});

describe('SseGuard content events (the estimate for a cut stream, issue #4)', () => {
  /** What one SSE reader would call content events, counted from the parsed events. */
  const contentEventsIn = (format: 'messages' | 'chat' | 'responses', text: string): number =>
    text.split(/\r?\n\r?\n/).filter((event) => {
      const name = /^event: ?(.*)$/m.exec(event)?.[1];
      const data = /^data: ?(.*)$/m.exec(event)?.[1];
      if (format === 'messages') return name === 'content_block_delta';
      if (format === 'responses') return name?.endsWith('.delta') === true;
      return data !== undefined && data !== '[DONE]' && !data.startsWith('{"error"');
    }).length;

  it('counts one per content event, each once, however the stream is split', () => {
    const cases = [
      ['messages', fixture('anthropic/thinking-tool.sse'), 7],
      ['messages', fixture('anthropic/text.sse'), undefined],
      ['chat', fixture('openai/tool-call.sse'), 6],
      ['chat', fixture('openai/openrouter-reasoning.sse'), undefined],
      ['responses', fixture('openai/responses.sse'), 6],
    ] as const;
    for (const [format, bytes, expected] of cases) {
      const whole = contentEventsIn(format, bytes.toString());
      if (expected !== undefined) expect(whole).to.equal(expected);
      expect(whole).to.be.greaterThan(0);
      fc.assert(
        fc.property(fc.array(fc.nat(), { maxLength: 12 }), (cuts) => {
          const guard = new SseGuard(format);
          for (const chunk of splits(bytes, cuts)) guard.push(chunk);
          expect(guard.contentEvents).to.equal(whole);
        }),
        { numRuns: 100 },
      );
    }
  });

  it('counts only whole events passed: not a half event, nor a malformed one or what follows it', () => {
    const delta = (text: string) => `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${text}"}}\n\n`;
    const half = new SseGuard('messages');
    half.push(Buffer.from(delta('a') + delta('b').slice(0, 40)));
    expect(half.contentEvents).to.equal(1);
    const broken = new SseGuard('messages');
    broken.push(Buffer.from(delta('a') + delta('b').replace('"}}', '') + delta('c')));
    expect(broken.malformed).to.equal(true);
    expect(broken.contentEvents).to.equal(1);
    // Text that says content_block_delta is no event line.
    const quoted = new SseGuard('messages');
    quoted.push(Buffer.from('event: content_block_start\ndata: {"type":"content_block_start","text":"event: content_block_delta"}\n\n'));
    expect(quoted.contentEvents).to.equal(0);
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
