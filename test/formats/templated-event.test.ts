import { expect } from 'chai';
import fc from 'fast-check';
import { ChatStreamEncoder, TextChunk, TextChunkShape } from '../../src/formats/canonical/chat-stream-encode.ts';
import { MessagesStreamEncoder, TextDelta } from '../../src/formats/canonical/messages-stream-encode.ts';
import type { CanonicalEvent } from '../../src/formats/canonical/stream.ts';
import type { Json } from '../../src/formats/convert/json.ts';
import { rawJson } from '../../src/formats/upstream-events.ts';
import { chatChunkFrame, messagesEventFrame } from '../../src/sse/encode.ts';

/**
 * Issue #17: a translated stream's text deltas are written from templates. Every template must
 * give the bytes JSON.stringify gives for the same event, whatever the text holds (quotes,
 * backslashes, control characters, astral and lone surrogates), and a copy that changed must not
 * go out in the old text.
 */
const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit: fc.constantFrom('"', '\\', '\n', '\u2028', '\ud83d', '\ude00', '\u0000', 'é', 'a') }));

describe('templated stream events', () => {
  it('a Messages text delta is the bytes JSON.stringify gives', () => {
    fc.assert(
      fc.property(fc.nat(1000), text, (index, t) => {
        const event = new TextDelta(index, t);
        const plain = { type: 'content_block_delta', index, delta: { type: 'text_delta', text: t } };
        expect(event.json()).to.equal(JSON.stringify(plain));
        expect(JSON.stringify(event)).to.equal(JSON.stringify(plain));
        expect(messagesEventFrame(event)).to.equal(`event: content_block_delta\ndata: ${JSON.stringify(plain)}\n\n`);
        // What the stream writer takes from it instead of reading its properties (send-result.ts).
        expect(event.frame()).to.equal(messagesEventFrame(plain));
        expect(event.outputChars()).to.equal(t.length);
      }),
      { numRuns: 2000 },
    );
  });

  it('a Chat text or refusal chunk is the bytes JSON.stringify gives, with and without usage: null', () => {
    fc.assert(
      fc.property(text, fc.nat(), text, fc.constantFrom('content', 'refusal'), text, fc.boolean(), (id, created, model, field, t, includeUsage) => {
        const chunk = new TextChunk(new TextChunkShape(id, created, model, includeUsage), field, t);
        const plain = { id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta: { [field]: t }, finish_reason: null, logprobs: null }], ...(includeUsage && { usage: null }) };
        expect(chunk.json()).to.equal(JSON.stringify(plain));
        expect(JSON.stringify(chunk)).to.equal(JSON.stringify(plain));
        expect(chatChunkFrame(chunk)).to.equal(`data: ${JSON.stringify(plain)}\n\n`);
        expect(chunk.frame()).to.equal(chatChunkFrame(plain));
        expect(chunk.outputChars()).to.equal(t.length);
      }),
      { numRuns: 2000 },
    );
  });

  it("a Chat encoder's text chunks carry the model the upstream named, in their objects and their text alike", () => {
    const chat = new ChatStreamEncoder({ id: 'chatcmpl-1', created: 7, model: 'asked-for', includeUsage: true });
    const out: Json[] = [];
    const events: CanonicalEvent[] = [
      { type: 'start', model: 'named-by-upstream' },
      { type: 'block', index: 0, block: { type: 'text' } },
      { type: 'text', index: 0, text: 'Hel' },
      { type: 'text', index: 0, text: 'lo "you"' },
      { type: 'block_stop', index: 0 },
      { type: 'block', index: 1, block: { type: 'refusal' } },
      { type: 'text', index: 1, text: 'no' },
    ];
    for (const event of events) chat.push(event, out);
    const texts = out.filter((chunk) => chunk instanceof TextChunk);
    expect(texts).to.have.length(3);
    for (const chunk of out) {
      expect(chunk['model']).to.equal('named-by-upstream');
      expect(chatChunkFrame(chunk)).to.equal(`data: ${JSON.stringify({ ...chunk })}\n\n`);
    }
    expect(JSON.parse(rawJson(texts[2] as object) ?? '')).to.deep.include({ model: 'named-by-upstream', usage: null });
  });

  it('a spread copy with a change is stringified, not written from the template', () => {
    const chunk = new TextChunk(new TextChunkShape('chatcmpl-1', 1, 'm', true), 'content', 'Hi');
    const changed = { ...chunk, usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2, cost: 0.5 } };
    expect(rawJson(changed)).to.equal(undefined);
    expect(chatChunkFrame(changed)).to.include('"cost":0.5');
    const delta = new TextDelta(0, 'Hi');
    const moved = { ...delta, index: 3 };
    expect(rawJson(moved)).to.equal(undefined);
    expect(messagesEventFrame(moved)).to.include('"index":3');
  });

  it("a plugin decoder's malformed text event is stringified as before, never templated", () => {
    // A third-party format's stream decoder feeds the encoders unchecked (plugin-codec.ts).
    const odd = [
      { type: 'text', index: Number.NaN, text: 'x' },
      { type: 'text', index: 0, text: undefined },
      { type: 'text', index: '1', text: 'x' },
    ] as unknown as CanonicalEvent[];
    const messages = new MessagesStreamEncoder({ messageId: 'msg_1', model: 'm', inputTokensEstimate: 1 });
    const chat = new ChatStreamEncoder({ id: 'chatcmpl-1', created: 1, model: 'm', includeUsage: false });
    for (const event of odd) {
      for (const encoder of [messages, chat]) {
        const out: Json[] = [];
        encoder.push(event, out);
        for (const written of out) {
          if (event.type === 'text' && typeof event.text !== 'string') expect(written).to.not.be.instanceOf(TextChunk);
          if (event.type === 'text' && !Number.isInteger(event.index)) expect(written).to.not.be.instanceOf(TextDelta);
          const frame = encoder === messages ? messagesEventFrame(written as { type: string }) : chatChunkFrame(written);
          expect(frame).to.include(JSON.stringify(written));
        }
      }
    }
  });
});
