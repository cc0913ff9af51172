// A translated stream's upstream events read in-process (issue #17): the format's parser as a
// translated stream uses it (event templates, src/formats/event-template.ts) against JSON.parse of
// every event alone, over the simulator's 64-event streams, medians of alternating runs.
//
//   node --import ./bin/register.mjs bench/event-parse.ts [runs=12]
import { CODECS } from '../src/formats/canonical/codecs.ts';
import { parse } from '../src/formats/upstream-events.ts';
import type { Json } from '../src/formats/convert/json.ts';
import type { SseEvent } from '../src/plugin-host/api.ts';

const runs = Number(process.argv[2] ?? 12);
const chunk = (delta: object, finish: string | null = null): string =>
  JSON.stringify({ id: 'chatcmpl-sim', object: 'chat.completion.chunk', created: 1, model: 'sim', choices: [{ index: 0, delta, finish_reason: finish }] });
const words = Array.from({ length: 60 }, (_, i) => `word${i} and more `);
// The simulator's streams (bench/upstream.mjs), less their terminators.
const STREAMS: Record<'chat' | 'messages', [string | undefined, string][]> = {
  chat: [[undefined, chunk({ role: 'assistant', content: '' })], ...words.map((w): [undefined, string] => [undefined, chunk({ content: w })]), [undefined, chunk({}, 'stop')]],
  messages: [
    ['content_block_start', JSON.stringify({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } })],
    ...words.map((w): [string, string] => ['content_block_delta', JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: w } })]),
    ['content_block_stop', JSON.stringify({ type: 'content_block_stop', index: 0 })],
  ],
};

/** Fresh strings for every stream, cut from one text as the SSE decoder cuts them. */
function streams(format: 'chat' | 'messages', count: number): SseEvent[][] {
  return Array.from({ length: count }, (_, n) => {
    const text = STREAMS[format].map(([, data]) => `${data}\n${n}`).join('\n');
    let at = 0;
    return STREAMS[format].map(([event, data]) => {
      const cut = text.slice(at, at + data.length);
      at += data.length + 2 + String(n).length;
      return { event, data: cut };
    });
  });
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1] ?? NaN;

for (const format of ['chat', 'messages'] as const) {
  const sets = streams(format, 50);
  const arms = {
    parser: (events: SseEvent[]): void => {
      const parser = CODECS[format].eventParser?.('bench', false);
      const out: Json[] = [];
      for (const event of events) parser?.push(event, out);
    },
    'JSON.parse alone': (events: SseEvent[]): void => {
      for (const event of events) parse(event, 'bench', false);
    },
  };
  const times: Record<string, number[]> = {};
  for (let run = 0; run < runs + 2; run++) {
    for (const [name, arm] of Object.entries(arms)) {
      for (let i = 0; i < 200; i++) arm(sets[i % sets.length] ?? []);
      const started = process.hrtime.bigint();
      for (let i = 0; i < 1500; i++) arm(sets[i % sets.length] ?? []);
      // The first two runs warm up.
      if (run >= 2) (times[name] ??= []).push(Number(process.hrtime.bigint() - started) / 1500 / 1000);
    }
  }
  const parser = median(times['parser'] ?? []);
  const alone = median(times['JSON.parse alone'] ?? []);
  console.log(`${format}: ${sets[0]?.length} events, parser ${parser.toFixed(1)} µs a stream, JSON.parse alone ${alone.toFixed(1)} µs; ${(parser / alone).toFixed(2)}×`);
}
