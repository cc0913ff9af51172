import { expect } from 'chai';
import { leadingError } from '../../src/proxy/first-event.ts';

// The error a native stream opens with (issue #5), read from its first real event only (issue #17).
const first = (text: string, format: 'messages' | 'chat' | 'responses' = 'messages') => leadingError(Buffer.from(text), format, 'up');

describe('leadingError', () => {
  it('finds an error event that opens a Messages stream, after comments, with CRLF or LF', () => {
    const error = 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
    expect(first(error)?.status).to.equal(529);
    expect(first(`: keepalive\r\n\r\n${error.replaceAll('\n', '\r\n')}`)?.status).to.equal(529);
    expect(first(`:\n\n:\n\n${error}`)?.status).to.equal(529);
  });

  it('finds Chat\'s {"error": …} first chunk', () => {
    expect(first('data: {"error":{"message":"rate limited","code":429}}\n\n', 'chat')?.status).to.equal(429);
  });

  it('looks no further than the first real event', () => {
    const start = 'event: message_start\ndata: {"type":"message_start","message":{"id":"m","usage":{"input_tokens":1}}}\n\n';
    const later = 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"x"}}\n\n';
    expect(first(start + later)).to.equal(undefined);
    // A first chunk whose text says "error" is still an answer.
    expect(first('data: {"choices":[{"delta":{"content":"error: none"}}]}\n\ndata: {"error":{"message":"x"}}\n\n', 'chat')).to.equal(undefined);
  });

  it('ignores a malformed or unfinished first event (the guard reports those)', () => {
    expect(first('event: error\ndata: {"type":"err')).to.equal(undefined);
    expect(first('')).to.equal(undefined);
  });
});
