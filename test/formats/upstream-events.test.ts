import { expect } from 'chai';
import { CODECS } from '../../src/formats/canonical/codecs.ts';
import type { Json } from '../../src/formats/convert/json.ts';
import { parse, rawJson } from '../../src/formats/upstream-events.ts';
import { messagesEventFrame } from '../../src/sse/encode.ts';

// An event passed on unchanged is written as the upstream's own text; a changed one never is (issue #17).
describe('upstream events: the text an event came from', () => {
  const data = '{"type":"content_block_delta", "index":0,"delta":{"type":"text_delta","text":"Hi"}}';

  it('is kept for the parsed object, and written back as it came', () => {
    const event = parse({ event: 'content_block_delta', data }, 'up');
    expect(rawJson(event)).to.equal(data);
    expect(messagesEventFrame(event as { type: string })).to.equal(`event: content_block_delta\ndata: ${data}\n\n`);
  });

  it('is not carried by a copy, and never serialised or listed', () => {
    const event = parse({ event: 'content_block_delta', data }, 'up');
    const copy = { ...event, index: 1 };
    expect(rawJson(copy)).to.equal(undefined);
    expect(JSON.stringify(event)).to.equal(JSON.stringify(JSON.parse(data)));
    expect(Object.keys(event)).to.deep.equal(['type', 'index', 'delta']);
  });

  it("is kept by the parsers of a stream passed on in its own format, not by those of a translated one", () => {
    const chat = '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}';
    const cases = [
      ['messages', { event: 'content_block_delta', data }],
      ['chat', { event: undefined, data: chat }],
      ['responses', { event: 'response.output_text.delta', data: '{"type":"response.output_text.delta","delta":"Hi"}' }],
    ] as const;
    for (const [format, event] of cases) {
      const parser = CODECS[format].eventParser;
      if (!parser) throw new Error(`${format} has no event parser`);
      const kept: Json[] = [];
      const converted: Json[] = [];
      parser('up').push(event, kept);
      parser('up', false).push(event, converted);
      expect(rawJson(kept[0] as object), format).to.equal(event.data);
      expect(rawJson(converted[0] as object), format).to.equal(undefined);
      expect(converted[0], format).to.deep.equal(JSON.parse(event.data));
    }
    expect(rawJson(parse({ event: 'content_block_delta', data }, 'up', false))).to.equal(undefined);
  });

  it('is not kept for text with a line break (one data: line must carry it)', () => {
    expect(rawJson(parse({ event: 'ping', data: '{"type":\n"ping"}' }, 'up'))).to.equal(undefined);
  });
});
