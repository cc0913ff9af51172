import { expect } from 'chai';
import { checkRequest } from '../../src/http/request-check.ts';
import { checkedRequestText, checkedTextHeld, limitCheckedText } from '../../src/usage/checked-text.ts';

const body = (messages: unknown[]) => Buffer.from(JSON.stringify({ model: 'm', max_tokens: 8, system: 'You are terse.', messages }));
const turn1 = [{ role: 'user', content: 'What is 2+2?' }];
const turn2 = [...turn1, { role: 'assistant', content: [{ type: 'text', text: '4' }] }, { role: 'user', content: 'And 3+3?' }];
const textOf = (raw: Buffer, scope: string) => {
  const checked = checkRequest(raw, 'messages', 128);
  if (!checked) throw new Error('not checked');
  return checkedRequestText('messages', raw, checked.elements, scope, undefined);
};

describe("a checked body's input text", () => {
  it('is the system prompt, then each message, in order', () => {
    expect(textOf(body(turn2), 'order')).to.deep.equal({ parts: ['You are terse.', 'What is 2+2?', '4', 'And 3+3?'], fixed: 0 });
  });

  it('remembers each element by its bytes: a later turn reads only its new messages', () => {
    const before = checkedTextHeld();
    const first = textOf(body(turn1), 'turns');
    const held = checkedTextHeld();
    expect(held).to.be.greaterThan(before);
    const second = textOf(body(turn2), 'turns');
    // The system prompt and the first message are the same strings as before: not read again.
    expect(second.parts[0]).to.equal(first.parts[0]);
    expect(second.parts[1]).to.equal(first.parts[1]);
    // Only the two new messages were added.
    const added = checkedTextHeld() - held;
    expect(added).to.equal(JSON.stringify(turn2[1]).length + '4'.length + JSON.stringify(turn2[2]).length + 'And 3+3?'.length);
  });

  it('keeps API keys apart, and stays within its bound', () => {
    textOf(body(turn1), 'key-a');
    const held = checkedTextHeld();
    textOf(body(turn1), 'key-b');
    expect(checkedTextHeld()).to.be.greaterThan(held);
    const previous = limitCheckedText(100);
    try {
      textOf(body(turn2), 'key-c');
      expect(checkedTextHeld()).to.be.at.most(100);
      // Still right when nothing can be remembered for long.
      expect(textOf(body(turn2), 'key-c').parts).to.deep.equal(['You are terse.', 'What is 2+2?', '4', 'And 3+3?']);
    } finally {
      limitCheckedText(previous);
    }
  });
});
