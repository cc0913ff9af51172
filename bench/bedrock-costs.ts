// The Bedrock plugin's own costs (issue #15), apart from the network: SigV4 per request (a small
// body and Claude Code's 76 KB one: the body is hashed every time) and event-stream decoding per
// event (a 64-event stream's frames, CRCs checked, base64 and metrics handled). Prints JSON.
// Usage: node --import ./bin/register.mjs bench/bedrock-costs.ts [iterations] (as bench/run.mjs runs it)
import { readFileSync } from 'node:fs';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { SigV4Signer } from '../plugins/bedrock/auth.ts';
import { EventStreamDecoder } from '../plugins/bedrock/event-stream.ts';
import { invokeEvent } from '../plugins/bedrock/invoke.ts';
import type { SseEvent } from '../src/plugin-host/api.ts';

const iterations = Number(process.argv[2] ?? 2000);
const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'bench-session' };
const signer = new SigV4Signer({ region: 'us-east-1', credentials: () => Promise.resolve(credentials), log: silent });
const url = new URL('https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream');
const headers = { 'content-type': 'application/json', 'x-amzn-bedrock-accept': 'application/json' };
const small = Buffer.from(JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] }));
const big = readFileSync(new URL('../test/fixtures/claude-code/claude-code-request.json', import.meta.url));

/**
 * Warmed up for 3,000 signatures: with 200, a signer of about 10 µs was measured while V8 was still
 * optimising it (27 µs at 4,000 iterations, 11 µs at 20,000; the SDK's signer 44 and 31).
 */
async function perSign(body: Buffer): Promise<number> {
  for (let i = 0; i < 3000; i++) await signer.sign({ method: 'POST', url, headers, body });
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) await signer.sign({ method: 'POST', url, headers, body });
  return Number(process.hrtime.bigint() - start) / 1e3 / iterations;
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const str = (value: string) => ({ type: 'string' as const, value });
const events = [{ type: 'message_start', message: { id: 'msg', type: 'message', role: 'assistant', content: [], model: 'sim', usage: { input_tokens: 25, output_tokens: 1 } } }, ...Array.from({ length: 62 }, (_, i) => ({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `word${i} and more ` } })), { type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: 25 } }];
const frames = Buffer.concat(events.map((e) => codec.encode({ headers: { ':event-type': str('chunk'), ':content-type': str('application/json'), ':message-type': str('event') }, body: fromUtf8(JSON.stringify({ bytes: Buffer.from(JSON.stringify(e)).toString('base64') })) })));
// As a socket delivers them: 16 KB reads.
const reads = Array.from({ length: Math.ceil(frames.length / 16384) }, (_, i) => frames.subarray(i * 16384, (i + 1) * 16384));

function perEvent(): number {
  const out: SseEvent[] = [];
  const run = (): void => {
    const decoder = new EventStreamDecoder((type, payload, into) => invokeEvent(type, payload, into, silent));
    for (const read of reads) decoder.push(read, out);
    decoder.end(out);
    out.length = 0;
  };
  for (let i = 0; i < 100; i++) run();
  const start = process.hrtime.bigint();
  const streams = Math.max(1, Math.floor(iterations / 4));
  for (let i = 0; i < streams; i++) run();
  return Number(process.hrtime.bigint() - start) / 1e3 / (streams * events.length);
}

console.log(JSON.stringify({ signSmallUs: await perSign(small), signClaudeCodeUs: await perSign(big), claudeCodeKb: Math.round(big.length / 1024), decodePerEventUs: perEvent(), eventsPerStream: events.length }));
