import { expect } from 'chai';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { addCostToBody, ChatStreamRewriter, numberText } from '../../src/proxy/chat-usage-rewriter.ts';
import { SseGuard } from '../../src/proxy/sse-guard.ts';
import { splits } from '../support/splits.ts';

const fixture = (path: string) => readFileSync(new URL(`../fixtures/${path}`, import.meta.url));

/** What the rewriter must make of a whole stream, line by line: the usage chunk dropped, or given `cost`. */
function expected(stream: Buffer, drop: boolean, cost: number): Buffer {
  const lines = stream.toString('utf8').split(/(?<=\n)/);
  return Buffer.from(
    lines
      .map((line) => {
        if (!line.startsWith('data:') || line.startsWith('data: [DONE]')) return line;
        const chunk = JSON.parse(line.slice(5)) as { usage?: unknown; choices?: unknown[] };
        if (typeof chunk.usage !== 'object' || chunk.usage === null || Array.isArray(chunk.usage)) return line;
        if (drop) return chunk.choices?.length === 0 ? '' : line;
        return `data: ${JSON.stringify({ ...chunk, usage: { ...chunk.usage, cost } })}${line.endsWith('\r\n') ? '\r\n' : '\n'}`;
      })
      .join(''),
  );
}

/** `guarded`: as a native stream's relay feeds it, each chunk through a stream guard first, with the text the guard read it as. */
function rewrite(chunks: Buffer[], drop: boolean, cost: number, guarded = false): Buffer {
  const rewriter = new ChatStreamRewriter({ dropUsageChunk: drop, addCost: () => cost });
  const guard = guarded ? new SseGuard('chat') : null;
  const out = chunks.map((chunk) => {
    if (guard === null) return rewriter.push(chunk);
    const events = guard.push(chunk);
    const text = guard.takeText(chunk);
    return rewriter.push(events, events === chunk ? text : undefined);
  });
  return Buffer.concat([...out, rewriter.flush()]);
}

describe('ChatStreamRewriter (issue #4)', () => {
  // A recorded OpenAI stream with include_usage: `"usage":null` on every content chunk, the usage on
  // a last `choices: []` one. Its copy with text that is not ASCII checks that the search's offsets
  // are byte offsets (the chunk is searched as latin1, issue #17).
  const recorded = fixture('openai/text.sse');
  const wide = Buffer.from(recorded.toString('utf8').replace('"content":"Hello"', '"content":"Héllo — 日本語 \\"usage\\" 🎉"'));
  const crlf = Buffer.from(recorded.toString('latin1').replace(/\n/g, '\r\n'), 'latin1');
  const streams = [recorded, wide, crlf];

  it('drops the usage chunk the gateway asked for, and only it, however the stream is cut', () => {
    for (const stream of streams) {
      const want = expected(stream, true, 0);
      expect(want.length).to.be.lessThan(stream.length);
      expect(rewrite([stream], true, 0).equals(want)).to.equal(true);
      fc.assert(
        fc.property(fc.array(fc.nat(), { maxLength: 12 }), (cuts) => {
          expect(rewrite(splits(stream, cuts), true, 0).toString()).to.equal(want.toString());
          expect(rewrite(splits(stream, cuts), true, 0, true).toString(), 'fed as the relay feeds it').to.equal(want.toString());
        }),
        { numRuns: 300 },
      );
    }
  });

  it('adds usage.cost to the usage chunk a client asked for, however the stream is cut', () => {
    for (const stream of streams) {
      const want = expected(stream, false, 0.000123);
      expect(want.toString()).to.include('"cost":0.000123');
      fc.assert(
        fc.property(fc.array(fc.nat(), { maxLength: 12 }), (cuts) => {
          expect(rewrite(splits(stream, cuts), false, 0.000123).toString()).to.equal(want.toString());
          expect(rewrite(splits(stream, cuts), false, 0.000123, true).toString(), 'fed as the relay feeds it').to.equal(want.toString());
        }),
        { numRuns: 300 },
      );
    }
  });

  it('passes a line longer than it holds on as it comes, and still drops the usage chunk after it', () => {
    // Behind the guard, only an event over the guard's own limit arrives cut mid-line (review).
    const long = `data: {"choices":[{"index":0,"delta":{"content":"${'x'.repeat(100 * 1024)}"},"finish_reason":null}],"usage":null}\n\n`;
    const stream = Buffer.concat([Buffer.from(long), recorded.subarray(recorded.indexOf('data: {"id"', recorded.length - 600))]);
    const want = expected(stream, true, 0);
    expect(want.length).to.be.lessThan(stream.length);
    const rewriter = new ChatStreamRewriter({ dropUsageChunk: true, addCost: () => 0 });
    const pieces = splits(stream, [1000, 70 * 1024, 90 * 1024, long.length - 5, long.length + 50]);
    const out = pieces.map((piece) => rewriter.push(piece));
    expect(out[0]?.length, 'the line is held while it is short').to.equal(0);
    expect(out[1]?.length, 'and passed on once it is long').to.equal(70 * 1024);
    expect(Buffer.concat([...out, rewriter.flush()]).toString()).to.equal(want.toString());
  });

  it('passes the recorded stream\'s `"usage":null` chunks as the same Buffers, uncopied (issue #17)', () => {
    // OpenAI sends `"usage":null` on every chunk but the last when asked for usage, as Junction asks.
    const events = recorded.toString('latin1').split(/(?<=\n\n)/).map((event) => Buffer.from(event, 'latin1'));
    const nulls = events.filter((event) => event.includes('"usage":null'));
    expect(nulls.length).to.be.greaterThan(2);
    const rewriter = new ChatStreamRewriter({ dropUsageChunk: true, addCost: () => 0 });
    for (const event of nulls) expect(rewriter.push(event)).to.equal(event);
  });

  it('finds a usage object however JSON spaces it, and only an object', () => {
    for (const [usage, read] of [['"usage":{"prompt_tokens":1}', true], ['"usage" :\t{"prompt_tokens":1}', true], ['"usage"\t:\r{"prompt_tokens":1}', true], ['"usage": null', false], ['"usage":7', false], ['"usage":[]', false], ['"usage":null,"x":{"usage":{"prompt_tokens":1}}', false]] as const) {
      const line = Buffer.from(`data: {"choices":[],${usage}}\n\n`);
      expect(rewrite([line], false, 0.5).includes('"cost":0.5'), usage).to.equal(read);
      for (const drop of [false, true]) expect(rewrite([line], drop, 0.5).toString(), usage).to.equal(expected(line, drop, 0.5).toString());
    }
  });

  it('passes a chunk with no usage in it as the same Buffer, uncopied', () => {
    const chunk = Buffer.from('data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n');
    expect(new ChatStreamRewriter({ dropUsageChunk: true, addCost: () => 0 }).push(chunk)).to.equal(chunk);
    // A partial line waits for its end, then passes whole.
    const rewriter = new ChatStreamRewriter({ dropUsageChunk: true, addCost: () => 0 });
    expect(rewriter.push(chunk.subarray(0, 10)).length).to.equal(0);
    expect(Buffer.concat([rewriter.push(chunk.subarray(10)), rewriter.flush()]).equals(chunk)).to.equal(true);
  });
});

describe('addCostToBody (issue #4; issue #17)', () => {
  const answer = (usage: string): Buffer =>
    Buffer.from(`{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":${usage}}`);

  it('writes a number as JSON.stringify would, for every double', () => {
    fc.assert(fc.property(fc.double(), (value) => {
      expect(numberText(value)).to.equal(JSON.stringify(value));
    }), { numRuns: 2000 });
    for (const value of [0, -0, 1e-7, 1.5e-12, 123456789012345680000, 1e21, Number.MAX_VALUE, Number.MIN_VALUE, NaN, Infinity, -Infinity]) {
      expect(numberText(value), String(value)).to.equal(JSON.stringify(value));
    }
  });

  it('splices usage.cost into a whole answer, every other byte as it was', () => {
    for (const cost of [0, 0.000042, 1e-7, 3, 12.5]) {
      for (const usage of ['{"prompt_tokens":12,"completion_tokens":9,"total_tokens":21}', '{}', '{"prompt_tokens":1,"prompt_tokens_details":{"cached_tokens":0}}']) {
        const body = answer(usage);
        const out = addCostToBody(body, () => cost);
        const parsed = JSON.parse(out.toString()) as { usage: Record<string, unknown> };
        expect(parsed, `${usage} ${cost}`).to.deep.equal({ ...(JSON.parse(body.toString()) as object), usage: { ...(JSON.parse(usage) as object), cost } });
        expect(out.toString()).to.equal(body.toString().replace(/}$/, '').slice(0, -1) + `${usage === '{}' ? '' : ','}"cost":${JSON.stringify(cost)}}}`);
      }
    }
  });

  it('puts its own cost in place of one the usage had, and leaves an answer without usage as it is', () => {
    const out = addCostToBody(answer('{"prompt_tokens":1,"cost":9}'), () => 0.5);
    expect((JSON.parse(out.toString()) as { usage: unknown }).usage).to.deep.equal({ prompt_tokens: 1, cost: 0.5 });
    const bare = Buffer.from('{"id":"x","choices":[]}');
    expect(addCostToBody(bare, () => 0.5)).to.equal(bare);
  });
});
