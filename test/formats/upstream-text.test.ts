import { expect } from 'chai';
import { parse, rawJson } from '../../src/formats/upstream-events.ts';
import { messagesEventFrame } from '../../src/sse/encode.ts';

/**
 * The text an upstream event came from rides on the parsed event itself (issue #17): a chunk's
 * events are all parsed before the first is written, so each must find its own text then, and a
 * copy, another object or another stream's event never does.
 */
describe('upstream events: each keeps its own text', () => {
  const text = (i: number): string => `{"type":"content_block_delta", "index":0,"delta":{"type":"text_delta","text":"\\u00e9${i}"}}`;

  it('every one of many events parsed before any is written is written as it came, in any order', () => {
    const events = Array.from({ length: 1000 }, (_, i) => parse({ event: 'content_block_delta', data: text(i) }, 'up'));
    for (const i of [999, 0, 500, 1, 998]) expect(messagesEventFrame(events[i] as { type: string })).to.equal(`event: content_block_delta\ndata: ${text(i)}\n\n`);
    events.forEach((event, i) => expect(rawJson(event)).to.equal(text(i)));
  });

  it('is invisible: not listed, not serialised, not copied, and the event still equals a plain object', () => {
    const event = parse({ event: 'content_block_delta', data: text(1) }, 'up');
    expect(Object.getOwnPropertyNames(event)).to.deep.equal(['type', 'index', 'delta']);
    expect(Object.getOwnPropertySymbols(event)).to.deep.equal([]);
    expect(JSON.stringify(event)).to.equal(JSON.stringify(JSON.parse(text(1))));
    expect(rawJson({ ...event })).to.equal(undefined);
    expect(rawJson(structuredClone(event))).to.equal(undefined);
    expect(event).to.deep.equal(JSON.parse(text(1)));
    expect(rawJson(JSON.parse(text(1)) as object)).to.equal(undefined);
  });
});
