import { expect } from 'chai';
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

  it('is not kept for text with a line break (one data: line must carry it)', () => {
    expect(rawJson(parse({ event: 'ping', data: '{"type":\n"ping"}' }, 'up'))).to.equal(undefined);
  });
});
