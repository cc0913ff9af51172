import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { createUsageTap } from '../../src/usage/tap.ts';
import { seededRandom } from '../support/random.ts';

const fixture = (path: string) => readFileSync(new URL(`../fixtures/${path}`, import.meta.url));

/** Feeds a body to a fresh tap in pieces cut at the given offsets. */
function tapWithCuts(format: 'messages' | 'chat', contentType: string, body: Buffer, cuts: number[]) {
  const tap = createUsageTap(format, contentType);
  let start = 0;
  for (const cut of [...cuts, body.length]) {
    tap.push(body.subarray(start, cut));
    start = cut;
  }
  return tap.finish();
}

describe('usage tap', () => {
  const SSE = 'text/event-stream; charset=utf-8';

  it('reads Messages stream usage: input from message_start, cumulative totals from message_delta', () => {
    expect(tapWithCuts('messages', SSE, fixture('anthropic/thinking-tool.sse'), [])).to.deep.equal({
      input: 424, output: 89, cacheRead: 200, cacheWrite: 0, reasoning: 0,
    });
    expect(tapWithCuts('messages', SSE, fixture('anthropic/text.sse'), [])).to.deep.equal({
      input: 25, output: 15, cacheRead: 0, cacheWrite: 0, reasoning: 0,
    });
  });

  it('gives the same usage whatever byte boundaries the stream arrives in', () => {
    for (const [format, file] of [['messages', 'anthropic/thinking-tool.sse'], ['chat', 'openai/tool-call.sse']] as const) {
      const body = fixture(file);
      const whole = tapWithCuts(format, SSE, body, []);
      expect(whole).not.to.equal(undefined);
      for (let cut = 1; cut < body.length; cut++) {
        expect(tapWithCuts(format, SSE, body, [cut]), `${file} cut at ${cut}`).to.deep.equal(whole);
      }
      const random = seededRandom(7);
      for (let trial = 0; trial < 200; trial++) {
        const cuts = Array.from({ length: 1 + (trial % 30) }, () => Math.floor(random() * body.length)).sort((a, b) => a - b);
        expect(tapWithCuts(format, SSE, body, cuts), `${file} cut at ${cuts.join(',')}`).to.deep.equal(whole);
      }
    }
  });

  it('reads Chat usage: input excludes cached tokens', () => {
    expect(tapWithCuts('chat', SSE, fixture('openai/text.sse'), [])).to.deep.equal({
      input: 15, output: 7, cacheRead: 4, cacheWrite: 0, reasoning: 0,
    });
    expect(tapWithCuts('chat', 'application/json', fixture('openai/text.json'), [10, 20])).to.deep.equal({
      input: 15, output: 7, cacheRead: 4, cacheWrite: 0, reasoning: 0,
    });
  });

  it('reads JSON Messages usage, cache reads and writes apart', () => {
    expect(tapWithCuts('messages', 'application/json', fixture('anthropic/thinking-tool.json'), [5])).to.deep.equal({
      input: 472, output: 89, cacheRead: 100, cacheWrite: 30, reasoning: 0,
    });
  });

  it('reports nothing when no usage passed, and is not fooled by "usage" inside text', () => {
    const text = 'data: {"choices":[{"delta":{"content":"the \\"usage\\": field"}}]}\n\n';
    expect(tapWithCuts('chat', SSE, Buffer.from(text), [])).to.equal(undefined);
    expect(tapWithCuts('chat', 'application/json', Buffer.from('{"error":{}}'), [])).to.equal(undefined);
    expect(tapWithCuts('chat', 'application/json', Buffer.from('not json'), [])).to.equal(undefined);
  });

  it('handles CRLF line endings and a final line with no newline', () => {
    const crlf = 'data: {"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2}}\r\n\r\n';
    expect(tapWithCuts('chat', SSE, Buffer.from(crlf), [])).to.deep.include({ input: 10, output: 2 });
    const noNewline = 'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}';
    expect(tapWithCuts('chat', SSE, Buffer.from(noNewline), [20])).to.deep.include({ input: 3, output: 4 });
  });
});
