import { expect } from 'chai';
import { applyChatChunk, applyMessagesEvent, emptyUsage, isUsage } from '../../src/usage/normalize.ts';

describe('usage normalisation', () => {
  it('counts only a usage object as usage: null, an array or a number is none (charged by estimate, not as zero)', () => {
    for (const value of [null, [], 7, 'usage']) {
      expect(isUsage(value), JSON.stringify(value)).to.equal(false);
      expect(applyMessagesEvent(emptyUsage(), { type: 'message_delta', usage: value }), `message_delta ${JSON.stringify(value)}`).to.equal(false);
      expect(applyMessagesEvent(emptyUsage(), { type: 'message_start', message: { usage: value } }), `message_start ${JSON.stringify(value)}`).to.equal(false);
      expect(applyChatChunk(emptyUsage(), { choices: [], usage: value }), `chat ${JSON.stringify(value)}`).to.equal(false);
    }
    const usage = emptyUsage();
    expect(applyMessagesEvent(usage, { type: 'message_delta', usage: { output_tokens: 3 } })).to.equal(true);
    expect(usage.output).to.equal(3);
    expect(applyChatChunk(emptyUsage(), { usage: {} })).to.equal(true); // an empty object is usage: zero tokens, as reported
  });
});
