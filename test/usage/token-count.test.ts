import { expect } from 'chai';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { countMessagesTokens } from '../../src/usage/token-count.ts';

const claudeCode = JSON.parse(readFileSync(new URL('../fixtures/claude-code/claude-code-request.json', import.meta.url), 'utf8')) as Record<string, unknown>;

/** The Claude Code request padded to about 150 KB, the size issue #4 names. */
function big(): Record<string, unknown> {
  const messages = [...(claudeCode['messages'] as unknown[]), { role: 'user', content: 'function main() { return 42; }\n'.repeat(2400) }];
  return { ...claudeCode, messages };
}

describe('count_tokens by tokenizer', () => {
  it('counts what the model reads with the tokenizer, images and PDFs at fixed rates', async () => {
    const request = {
      system: 'Be brief.',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Describe this.' }, { type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'look', input: { q: 1 } }] },
      ],
      tools: [{ name: 'look', input_schema: { type: 'object' } }],
    };
    const text = ['Be brief.', 'Describe this.', 'look', '{"q":1}', JSON.stringify(request.tools[0])].join('\n');
    expect(await countMessagesTokens(request)).to.equal(countTokens(text) + 1600);
  });

  it('gives the same count on the worker thread as inline, for a 150 KB request', async () => {
    const request = big();
    expect(JSON.stringify(request).length).to.be.within(140_000, 170_000);
    const counted = await countMessagesTokens(request);
    // The same text counted directly: the worker must not change the answer.
    const inlineText = await (async () => {
      const parts: string[] = [];
      for (const b of request['system'] as { text: string }[]) parts.push(b.text);
      for (const m of request['messages'] as { content: unknown }[]) {
        if (typeof m.content === 'string') parts.push(m.content);
        else for (const b of m.content as { type: string; text?: string }[]) parts.push(b.type === 'text' ? (b.text ?? '') : JSON.stringify(b));
      }
      for (const t of request['tools'] as unknown[]) parts.push(JSON.stringify(t));
      return parts.join('\n');
    })();
    expect(counted).to.equal(countTokens(inlineText));
  });

  it('keeps the event loop free while it counts large requests', async () => {
    const request = big();
    await countMessagesTokens(request); // start the worker outside the measurement
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const start = performance.now();
    for (let i = 0; i < 10; i++) await countMessagesTokens(request);
    const perCall = (performance.now() - start) / 10;
    delay.disable();
    // Counted inline, the loop would stall for about a whole call (measured: 11.7 ms p99 for
    // 10 ms calls); on the worker it stays far below (1.7 ms). Relative, so a busy machine that
    // slows both does not decide the outcome.
    expect(delay.percentile(99) / 1e6).to.be.below(perCall / 2);
  });
});
