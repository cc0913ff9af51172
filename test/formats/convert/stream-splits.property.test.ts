import { expect } from 'chai';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { chatChunksToMessagesEvents } from '../../../src/formats/canonical/pairs.ts';
import { messagesEventsToChatChunks } from '../../../src/formats/canonical/pairs.ts';
import { ToolNames } from '../../../src/formats/convert/tool-names.ts';
import { chatChunksFromSse, messagesEventsFromSse } from '../../../src/formats/upstream-events.ts';
import { decodeSse } from '../../../src/sse/decode.ts';

type Json = Record<string, unknown>;
const fixture = (path: string) => readFileSync(new URL(`../../fixtures/${path}`, import.meta.url));

/** A chat stream with multi-byte UTF-8 in text and tool arguments, and CRLF line endings. */
const UNICODE_CHAT = Buffer.from(
  [
    { choices: [{ index: 0, delta: { role: 'assistant', content: 'Café ✓ 日本語 — ' }, finish_reason: null }] },
    { choices: [{ index: 0, delta: { content: '😀 done' }, finish_reason: null }] },
    { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_é', type: 'function', function: { name: 'f', arguments: '{"q":"naïve' } }] }, finish_reason: null }] },
    { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: ' 東京"}' } }] }, finish_reason: 'tool_calls' }] },
    { choices: [], usage: { prompt_tokens: 12, completion_tokens: 8 } },
  ]
    .map((c) => `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', ...c })}\r\n\r\n`)
    .join('') + 'data: [DONE]\r\n\r\n',
);

async function* pieces(body: Buffer, cuts: number[]): AsyncGenerator<Uint8Array> {
  let start = 0;
  for (const cut of [...cuts, body.length]) {
    if (cut > start) yield body.subarray(start, cut);
    start = Math.max(start, cut);
  }
}

async function collect(iterable: AsyncIterable<Json>): Promise<Json[]> {
  const out: Json[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

const chatToMessages = (body: Buffer, cuts: number[]) =>
  collect(
    chatChunksToMessagesEvents(chatChunksFromSse(decodeSse(pieces(body, cuts), (e) => e as Error), 'up'), {
      messageId: 'msg_1', model: 'm', inputTokensEstimate: 1, toolNames: new ToolNames(), provider: 'up',
    }),
  );
const messagesToChat = (body: Buffer, cuts: number[]) =>
  collect(messagesEventsToChatChunks(messagesEventsFromSse(decodeSse(pieces(body, cuts), (e) => e as Error), 'up'), { id: 'c', created: 1, includeUsage: true, jsonTool: null }));

const cutsOf = (body: Buffer) => fc.uniqueArray(fc.integer({ min: 1, max: body.length - 1 }), { maxLength: 40 }).map((cuts) => cuts.sort((a, b) => a - b));

describe('translated streams split at arbitrary byte boundaries (fast-check)', () => {
  const cases: [string, Buffer, (body: Buffer, cuts: number[]) => Promise<Json[]>][] = [
    ['Chat tool stream → Messages', fixture('openai/tool-call.sse'), chatToMessages],
    ['OpenRouter reasoning stream → Messages', fixture('openai/openrouter-reasoning.sse'), chatToMessages],
    ['Chat stream with multi-byte text and CRLF → Messages', UNICODE_CHAT, chatToMessages],
    ['Messages thinking+tool stream → Chat', fixture('anthropic/thinking-tool.sse'), messagesToChat],
    ['Messages text stream → Chat', fixture('anthropic/text.sse'), messagesToChat],
  ];
  for (const [name, body, run] of cases) {
    it(`${name}: the same client events however the bytes arrive`, async () => {
      const whole = await run(body, []);
      expect(whole.length).to.be.greaterThan(3);
      await fc.assert(
        fc.asyncProperty(cutsOf(body), async (cuts) => {
          expect(await run(body, cuts)).to.deep.equal(whole);
        }),
        { seed: 20261122, numRuns: 150 },
      );
      // And one byte at a time.
      expect(await run(body, Array.from({ length: body.length - 1 }, (_, i) => i + 1))).to.deep.equal(whole);
    });
  }

  it('keeps multi-byte characters intact', async () => {
    const events = await chatToMessages(UNICODE_CHAT, [3, 17, 18, 19]);
    const text = events
      .filter((e) => e['type'] === 'content_block_delta')
      .map((e) => JSON.stringify(e['delta']))
      .join('');
    expect(text).to.include('Café ✓ 日本語 — ').and.to.include('😀 done').and.to.include('naïve').and.to.include('東京');
  });
});
