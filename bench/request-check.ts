// The byte-level request check on Claude Code's 76 KB request, in-process (issue #17): the figures in
// src/http/request-check.ts's header come from here. Best and median of 300 rounds of 10 checks.
//   node --import ./bin/register.mjs bench/request-check.ts (Junction's own loader, as the server runs)
// Cases: the request seen for the first time (compact JSON, as SDKs send it), with a line break
// escaped in place of every 14th word, pretty-printed (line breaks between tokens), and again from
// the same key (every element known and stepped over).
import { readFileSync } from 'node:fs';
import type { ValueRange } from '../src/http/json-scan.ts';
import { checkRequest, type CheckedRequest, type KnownRequest } from '../src/http/request-check.ts';

const fixture: unknown = JSON.parse(readFileSync(new URL('../test/fixtures/claude-code/claude-code-request.json', import.meta.url), 'utf8'));
const compact = Buffer.from(JSON.stringify(fixture));
const escaped = Buffer.from(compact.toString().replace(/((?:\w+ ){13}\w+) /g, '$1\\n'));
const pretty = Buffer.from(JSON.stringify(fixture, null, 1));

function checked(raw: Buffer, known?: KnownRequest[]): CheckedRequest {
  const result = checkRequest(raw, 'messages', 64, known);
  if (result === null) throw new Error('the check left the request to the full parse');
  return result;
}

const first = checked(compact);
const bytesOf = (range: ValueRange) => ({ bytes: compact.subarray(range.start, range.end) });
const { system } = first.elements;
const tools = first.scan.fields.get('tools');
const known: KnownRequest[] = [{ system: system && bytesOf(system), tools: tools && bytesOf(tools), messages: first.elements.messages.map(bytesOf) }];

function time(name: string, check: () => unknown): void {
  const rounds: number[] = [];
  for (let r = 0; r < 300; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < 10; i++) check();
    rounds.push(Number(process.hrtime.bigint() - start) / 10_000);
  }
  rounds.sort((a, b) => a - b);
  console.log(`${name.padEnd(10)} best ${(rounds[0] as number).toFixed(1)} µs, median ${(rounds[150] as number).toFixed(1)} µs`);
}

console.log(`${compact.length} bytes, ${first.elements.messages.length} messages`);
time('first', () => checked(compact));
time('escaped', () => checked(escaped));
time('pretty', () => checked(pretty));
time('known', () => checked(compact, known));
