import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { createUsageTap, usageTapFor } from '../../src/usage/tap.ts';
import { SseGuard } from '../../src/proxy/sse-guard.ts';
import { compilePrices, costOf } from '../../src/billing/pricing.ts';
import { seededRandom } from '../support/random.ts';

const fixture = (path: string) => readFileSync(new URL(`../fixtures/${path}`, import.meta.url));

/**
 * Feeds a body to a fresh tap in pieces cut at the given offsets; `guarded`, as a native stream's
 * relay does: each piece through a stream guard first, and to the tap with the text the guard read it as.
 */
function tapWithCuts(format: 'messages' | 'chat', contentType: string, body: Buffer, cuts: number[], guarded = false, whole = true) {
  const tap = createUsageTap(format, contentType);
  const guard = guarded ? new SseGuard(format) : null;
  let start = 0;
  for (const cut of [...cuts, body.length]) {
    const piece = body.subarray(start, cut);
    guard?.push(piece);
    tap.push(piece, guard?.takeText(piece));
    start = cut;
  }
  return tap.finish(whole);
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
        // Fed as a native stream's relay feeds it, with the guard's text of the pieces it read whole (issue #17).
        expect(tapWithCuts(format, SSE, body, cuts, true), `${file} guarded, cut at ${cuts.join(',')}`).to.deep.equal(whole);
      }
    }
  });

  it('reads a Chat usage object however JSON spaces it, and counts a null usage as none', () => {
    for (const [usage, input] of [['"usage":{"prompt_tokens":3}', 3], ['"usage" :\t{"prompt_tokens":4}', 4], ['"usage"\t:\r{"prompt_tokens":5}', 5]] as const) {
      const body = Buffer.from(`data: {"choices":[],"usage":null}\n\ndata: {"choices":[],${usage}}\n\ndata: [DONE]\n\n`);
      for (let cut = 0; cut <= body.length; cut++) expect(tapWithCuts('chat', SSE, body, cut === 0 ? [] : [cut])?.input, `${usage} cut at ${cut}`).to.equal(input);
    }
    // Not usage: null, an array, or an object only below a top-level null; an object after a null counts.
    for (const usage of ['"usage": null', '"usage":[]', '"usage":null,"x":{"usage":{"prompt_tokens":1}}']) {
      expect(tapWithCuts('chat', SSE, Buffer.from(`data: {"choices":[],${usage}}\n\ndata: [DONE]\n\n`), []), usage).to.equal(undefined);
    }
    expect(tapWithCuts('chat', SSE, Buffer.from('data: {"choices":[],"usage":null,"usage":{"prompt_tokens":6}}\n\n'), [])?.input).to.equal(6);
  });

  it('takes a usage that is not an object for none, so the answer is charged by its estimate, never as zero tokens', () => {
    const messagesStream = (usage: string) =>
      Buffer.from(`event: message_start\ndata: {"type":"message_start","message":{"id":"m","usage":${usage}}}\n\nevent: message_delta\ndata: {"type":"message_delta","usage":${usage}}\n\n`);
    for (const usage of ['null', '[]', '7']) {
      expect(tapWithCuts('messages', SSE, messagesStream(usage), []), `Messages stream, usage ${usage}`).to.equal(undefined);
      for (const format of ['messages', 'chat'] as const) {
        expect(tapWithCuts(format, 'application/json', Buffer.from(`{"id":"x","usage":${usage}}`), []), `${format} answer, usage ${usage}`).to.equal(undefined);
      }
    }
    // An object after a null still counts: the null never resets what was seen.
    expect(tapWithCuts('messages', SSE, Buffer.concat([messagesStream('{"input_tokens":9}'), messagesStream('null')]), [])?.input).to.equal(9);
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

  it('reads a whole answer\'s top-level usage alone, whatever else says "usage" (issue #17), and parses whole only what the scan cannot place', () => {
    const usage = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };
    const answer = {
      id: 'c', choices: [{ message: { content: 'the "usage": {"prompt_tokens": 999}', tool_calls: [{ function: { arguments: '{"usage":{"prompt_tokens":5}}' } }] }, usage: { prompt_tokens: 5 } }],
      usage,
    };
    const read = tapWithCuts('chat', 'application/json', Buffer.from(JSON.stringify(answer)), [7]);
    expect(read).to.deep.include({ input: 11, output: 7 });
    // A key written with escapes is no key to the scan: the whole answer is parsed, as before.
    const escaped = JSON.stringify({ id: 'c', usage }).replace('"usage"', '"\\u0075sage"');
    expect(tapWithCuts('chat', 'application/json', Buffer.from(escaped), [])).to.deep.include({ input: 11, output: 7 });
  });

  it('reads a whole answer\'s usage from its end only when told the answer came whole (issue #17, eighteenth session)', () => {
    const answer = Buffer.from('{"id":"x","choices":[],"usage":{"prompt_tokens":11,"completion_tokens":7}}');
    expect(tapWithCuts('chat', 'application/json', answer, [9], false, true)).to.deep.include({ input: 11, output: 7 });
    expect(tapWithCuts('chat', 'application/json', answer, [9], false, false)).to.deep.include({ input: 11, output: 7 });
    // Cut after an inner object with a usage of its own: read from its end, that would be the answer's.
    const full = '{"id":"x","usage":{"prompt_tokens":900,"completion_tokens":5,"details":{"usage":{"prompt_tokens":1,"completion_tokens":2}}},"more":1}';
    const cut = Buffer.from(full.slice(0, full.indexOf('}},"more"') + 1));
    expect(tapWithCuts('chat', 'application/json', cut, [], false, false)).to.equal(undefined);
    // The cut bites: told it was whole, the tap takes the inner usage.
    expect(tapWithCuts('chat', 'application/json', cut, [], false, true)).to.deep.include({ input: 1, output: 2 });
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

describe('transcription usage (issue #13)', () => {
  const read = (contentType: string, body: string) => {
    const tap = usageTapFor('audio_transcriptions', contentType);
    tap?.push(Buffer.from(body));
    return tap?.finish();
  };

  it('reads seconds, a verbose duration, and token counts with audio apart', () => {
    expect(read('application/json', '{"text":"hi","usage":{"type":"duration","seconds":12}}')).to.include({ audioMs: 12_000 });
    expect(read('application/json', '{"text":"hi","duration":8.47,"language":"english"}')).to.include({ audioMs: 8470 });
    expect(read('application/json', '{"text":"hi","usage":{"type":"tokens","input_tokens":120,"input_token_details":{"audio_tokens":100,"text_tokens":20},"output_tokens":4}}')).to.include({ input: 20, inputAudio: 100, output: 4 });
    const sse = 'data: {"type":"transcript.text.delta","delta":"hi"}\n\ndata: {"type":"transcript.text.done","text":"hi","usage":{"type":"tokens","input_tokens":50,"input_token_details":{"audio_tokens":50},"output_tokens":1}}\n\n';
    expect(read('text/event-stream', sse)).to.include({ inputAudio: 50, input: 0, output: 1 });
  });

  it('a text answer has none, and an absurd duration (1e400 parses as Infinity) counts as none rather than breaking the settlement', () => {
    expect(read('text/plain', 'Hello there.\n')).to.equal(undefined);
    const usage = read('application/json', '{"text":"hi","usage":{"type":"duration","seconds":1e400}}');
    expect(usage).to.include({ audioMs: 0 });
    expect(() => costOf(usage!, compilePrices({ input: 0, output: 0, cacheRead: null, cacheWrite: null, reasoning: null, request: null, inputAudio: null, outputAudio: null, inputImage: null, outputImage: null, image: null, characters: null, audioMinute: 0.006 }))).to.not.throw();
  });
});
