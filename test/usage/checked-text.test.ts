import { expect } from 'chai';
import { BodyBytes } from '../../src/http/body-bytes.ts';
import { checkRequest } from '../../src/http/request-check.ts';
import { checkedInputTokens, checkedRequestText, checkedTextHeld, checkedTextReads, limitCheckedText, recentElements } from '../../src/usage/checked-text.ts';
import { chatRequestText, messagesRequestText, responsesRequestText } from '../../src/usage/request-text.ts';
import { countRequestText, tokenizedTexts } from '../../src/usage/token-count.ts';

const body = (messages: unknown[], system = 'You are terse.') => Buffer.from(JSON.stringify({ model: 'm', max_tokens: 8, system, messages, tools: [{ name: 't' }] }));
const turn1 = [{ role: 'user', content: 'What is 2+2?' }];
const turn2 = [...turn1, { role: 'assistant', content: [{ type: 'text', text: '4' }] }, { role: 'user', content: 'And 3+3?' }];
const textOf = (raw: Buffer, scope: string) => {
  const checked = checkRequest(raw, 'messages', 128);
  if (!checked) throw new Error('not checked');
  return checkedRequestText('messages', BodyBytes.of(raw), checked.elements, scope, checked.scan.fields.get('tools'));
};

describe("a checked body's input text (issue #17)", () => {
  it('is the system prompt, then each message, then the tools as sent', () => {
    expect(textOf(body(turn2), 'order')).to.deep.equal({ parts: ['You are terse.', 'What is 2+2?', '4', 'And 3+3?', '[{"name":"t"}]'], fixed: 0 });
  });

  it("reads only what differs from the key's earlier requests at the same place", () => {
    const reads = (run: () => unknown): number => {
      const before = checkedTextReads();
      run();
      return checkedTextReads() - before;
    };
    expect(reads(() => textOf(body(turn1), 'turns')), 'system, one message, tools').to.equal(3);
    expect(reads(() => textOf(body(turn2), 'turns')), 'the two new messages').to.equal(2);
    expect(reads(() => textOf(body(turn2), 'turns')), 'nothing new').to.equal(0);
    const changed = body(turn2, 'You are verbose.');
    expect(reads(() => expect(textOf(changed, 'turns').parts).to.deep.equal(['You are verbose.', 'What is 2+2?', '4', 'And 3+3?', '[{"name":"t"}]'])), 'the new system prompt').to.equal(1);
    // Another key reads everything itself.
    expect(reads(() => textOf(body(turn1), 'another key')), 'system, one message, tools').to.equal(3);
  });

  it('of a Responses body: the instructions, then the input string or each item, then the tools as sent, as responsesRequestText reads the whole body', () => {
    const responses = (body: Record<string, unknown>, scope: string) => {
      const raw = Buffer.from(JSON.stringify(body));
      const checked = checkRequest(raw, 'responses', 128);
      if (!checked) throw new Error('not checked');
      const tools = checked.scan.fields.get('tools');
      const text = checkedRequestText('responses', BodyBytes.of(raw), checked.elements, scope, tools);
      expect(text).to.deep.equal(responsesRequestText(body, tools ? raw.toString('utf8', tools.start, tools.end) : undefined));
      return text;
    };
    expect(responses({ model: 'm', instructions: 'Be brief.', input: 'Hi', tools: [{ type: 'function', name: 'f' }] }, 'r')).to.deep.equal({ parts: ['Be brief.', 'Hi', '[{"type":"function","name":"f"}]'], fixed: 0 });
    const items = [
      { role: 'user', content: [{ type: 'input_text', text: 'Look' }, { type: 'input_image', image_url: 'data:' }] },
      { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Thinking' }], encrypted_content: 'abcdefgh' },
      { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
      { type: 'item_reference', id: 'msg_1' },
    ];
    expect(responses({ model: 'm', instructions: null, input: items }, 'r')).to.deep.equal({ parts: ['Look', 'Thinking', 'f', '{}', '{"type":"item_reference","id":"msg_1"}'], fixed: 1602 });
    // The next turn reads only its new item.
    const before = checkedTextReads();
    responses({ model: 'm', instructions: null, input: [...items, { role: 'user', content: 'and?' }] }, 'r');
    expect(checkedTextReads() - before).to.equal(1);
  });

  it('reads the same bytes again under another format: each format reads a message by its own rules', () => {
    const message = { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:' } }] };
    const text = (format: 'messages' | 'chat') => {
      const raw = Buffer.from(JSON.stringify({ model: 'm', max_tokens: 8, messages: [message] }));
      const checked = checkRequest(raw, format === 'messages' ? 'messages' : 'chat_completions', 128);
      if (!checked) throw new Error('not checked');
      return checkedRequestText(format, BodyBytes.of(raw), checked.elements, 'both formats', undefined);
    };
    // A Messages block of that type is text; a Chat part of that type is an image.
    expect(text('messages')).to.deep.equal(messagesRequestText({ messages: [message] }));
    expect(text('chat')).to.deep.equal(chatRequestText({ messages: [message] }));
    expect(text('chat').fixed).to.equal(1600);
  });

  it('finds an element the check stepped over by identity, without comparing its bytes again', () => {
    const compared = (run: () => unknown): number => {
      const equals = BodyBytes.prototype.equals;
      let calls = 0;
      BodyBytes.prototype.equals = function (this: BodyBytes, ...args: Parameters<typeof equals>) {
        calls++;
        return equals.apply(this, args);
      };
      try {
        run();
      } finally {
        BodyBytes.prototype.equals = equals;
      }
      return calls;
    };
    const raw = body(turn2);
    const expected = textOf(raw, 'identity');
    const textAfter = (known: boolean) => {
      const checked = checkRequest(raw, 'messages', 128, known ? recentElements('messages', 'identity') : undefined);
      if (!checked) throw new Error('not checked');
      return checkedRequestText('messages', BodyBytes.of(raw), checked.elements, 'identity', checked.scan.fields.get('tools'));
    };
    // Checked with the key's recent elements: each is stepped over, and then found by identity.
    expect(compared(() => expect(textAfter(true)).to.deep.equal(expected))).to.equal(0);
    // Checked without them: each is found by its bytes, as before.
    expect(compared(() => expect(textAfter(false)).to.deep.equal(expected))).to.equal(5);
  });

  it('stays within its bound', () => {
    const previous = limitCheckedText(100);
    try {
      textOf(body(turn2), 'key-c');
      expect(checkedTextHeld()).to.be.at.most(100);
      // Still right when nothing can be kept.
      expect(textOf(body(turn2), 'key-c').parts).to.deep.equal(['You are terse.', 'What is 2+2?', '4', 'And 3+3?', '[{"name":"t"}]']);
    } finally {
      limitCheckedText(previous);
    }
  });

  it("keeps a key's last four requests, newest first, and lets the least recently used key's go first", () => {
    const system = (i: number) => `Prompt number ${i}.`;
    const systemOf = (known: ReturnType<typeof recentElements>, i: number) => known?.[i]?.system?.bytes.toString();
    const previous = limitCheckedText(0); // forget every other test's keys: only these below are held
    limitCheckedText(previous);
    expect(checkedTextHeld()).to.equal(0);
    // Each request's elements as sent: its system prompt, its one message, its tools.
    const oneRequest = Buffer.byteLength(JSON.stringify(system(1))) + Buffer.byteLength(JSON.stringify(turn1[0])) + Buffer.byteLength('[{"name":"t"}]');
    try {
      for (let i = 1; i <= 5; i++) textOf(body(turn1, system(i)), 'lru-a');
      // The oldest of the five is no longer counted.
      expect(checkedTextHeld()).to.equal(4 * oneRequest);
      const a = recentElements('messages', 'lru-a');
      expect(a).to.have.length(4);
      expect([0, 1, 2, 3].map((i) => systemOf(a, i))).to.deep.equal([5, 4, 3, 2].map((i) => JSON.stringify(system(i))));
      // b after a, then a again (twice: the second time a is the newest already): b is the oldest.
      textOf(body(turn1, system(6)), 'lru-b');
      textOf(body(turn1, system(7)), 'lru-a');
      textOf(body(turn1, system(8)), 'lru-a');
      const held = checkedTextHeld();
      limitCheckedText(held - 1);
      expect(recentElements('messages', 'lru-b')).to.equal(undefined);
      expect(systemOf(recentElements('messages', 'lru-a'), 0)).to.equal(JSON.stringify(system(8)));
      // A bound below one request's size forgets a too.
      limitCheckedText(1);
      expect(recentElements('messages', 'lru-a')).to.equal(undefined);
      expect(checkedTextHeld()).to.equal(0);
    } finally {
      limitCheckedText(previous);
    }
    // Forgotten keys come back as new.
    const before = checkedTextReads();
    textOf(body(turn1, system(8)), 'lru-a');
    expect(checkedTextReads() - before).to.equal(3);
  });

  describe('its input-token estimate', () => {
    const tokensOf = (raw: Buffer, scope: string) => {
      const checked = checkRequest(raw, 'messages', 128);
      if (!checked) throw new Error('not checked');
      return checkedInputTokens('messages', BodyBytes.of(raw), checked.elements, scope, checked.scan.fields.get('tools'));
    };
    /** Each element's own RequestText, as a request holding that element alone reads it. */
    const elementsOf = (messages: unknown[], system: string) => [
      messagesRequestText({ system }),
      ...messages.map((m) => messagesRequestText({ messages: [m] })),
      { parts: ['[{"name":"t"}]'], fixed: 0 },
    ];
    const counted = async (run: () => number | Promise<number>): Promise<{ tokens: number; texts: number }> => {
      const before = tokenizedTexts();
      const tokens = await run();
      return { tokens, texts: tokenizedTexts() - before };
    };

    it("is the sum of each element's count, each element's short texts joined within it", async () => {
      const long = 'a long answer that is more than sixty-four characters, so it is counted on its own';
      const messages = [...turn2, { role: 'assistant', content: [{ type: 'text', text: 'Yes.' }, { type: 'text', text: long }, { type: 'image', source: { type: 'url', url: 'u' } }] }];
      let expected = 0;
      for (const element of elementsOf(messages, 'You are terse.')) expected += await countRequestText(element, 'sum-reference');
      expect(await tokensOf(body(messages), 'sum')).to.equal(expected);
      expect(expected).to.be.above(1600); // the image's fixed count is in it
    });

    it('counts an element once while it is remembered, and only the new ones of a next turn', async () => {
      const first = await counted(() => tokensOf(body(turn1), 'once'));
      expect(first.texts, 'the joined short texts of each of system, message and tools').to.equal(3);
      const again = await counted(() => tokensOf(body(turn1), 'once'));
      expect(again).to.deep.equal({ tokens: first.tokens, texts: 0 });
      // Known at once: a number, not a promise, so the hold's path waits for nothing.
      expect(tokensOf(body(turn1), 'once')).to.equal(first.tokens);
      const next = await counted(() => tokensOf(body(turn2), 'once'));
      expect(next.texts, 'the two new messages').to.equal(2);
      let expected = 0;
      for (const element of elementsOf(turn2, 'You are terse.')) expected += await countRequestText(element, 'once-reference');
      expect(next.tokens).to.equal(expected);
      // Another key counts everything itself.
      expect((await counted(() => tokensOf(body(turn2), 'once, another key'))).texts).to.equal(5);
    });

    it('is right when nothing can be remembered', async () => {
      const previous = limitCheckedText(0);
      try {
        const a = await counted(() => tokensOf(body(turn2), 'unremembered'));
        const b = await counted(() => tokensOf(body(turn2), 'unremembered'));
        expect(b.tokens).to.equal(a.tokens);
        expect(b.texts, 'counted again').to.equal(5);
      } finally {
        limitCheckedText(previous);
      }
    });
  });
});
