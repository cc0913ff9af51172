// The input-token estimate of Claude Code's 76 KB request sent again by the same key, in-process
// (issue #17, twelfth session): the checked body's elements found among the key's last requests,
// then counted. "text, then count": each element's text gathered and every text's count looked up
// or tokenized (the path before b960c68); "elements keep their counts": the path now, each element
// counted once. Best and median of 300 rounds of 10.
//   node --import ./bin/register.mjs bench/input-estimate.ts
import { readFileSync } from 'node:fs';
import { checkRequest } from '../src/http/request-check.ts';
import { checkedInputTokens, checkedRequestText } from '../src/usage/checked-text.ts';
import { countRequestText, loadTokenizer } from '../src/usage/token-count.ts';
import { BodyBytes } from '../src/http/body-bytes.ts';

const fixture = JSON.parse(readFileSync(new URL('../test/fixtures/claude-code/claude-code-request.json', import.meta.url), 'utf8'));
const raw = Buffer.from(JSON.stringify({ ...fixture, model: 'a/x', stream: false }));
await loadTokenizer();
const body = BodyBytes.of(raw);
const c = checkRequest(body.view(), 'messages', 128);
if (c === null) throw new Error('the check left the request to the full parse');
const tools = c.scan.fields.get('tools');
async function time(name: string, fn: () => unknown): Promise<void> {
  const rounds: number[] = [];
  for (let r = 0; r < 300; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < 10; i++) await fn();
    rounds.push(Number(process.hrtime.bigint() - start) / 10_000);
  }
  rounds.sort((a, b) => a - b);
  console.log(`${name.padEnd(34)} best ${rounds[0]!.toFixed(2)} µs, median ${rounds[150]!.toFixed(2)} µs`);
}
for (let k = 0; k < 2; k++) {
  await time('text, then count', () => countRequestText(checkedRequestText('messages', body, c.elements, 's', tools), 's'));
  await time('elements keep their counts', () => checkedInputTokens('messages', body, c.elements, 's', tools));
}
