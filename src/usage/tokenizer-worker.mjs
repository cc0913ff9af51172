// The tokenizer's thread: counts tokens of large texts so the gateway's event loop never waits on
// them (issue #4). Plain JavaScript, so it loads without the TypeScript loader.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';

// Counting is background work: when this thread and the event loop share a core, the event loop
// must win, or every other request waits out the count (issue #6: the event loop lagged 26 ms p99
// during count_tokens with both on one core). On Linux a thread has its own nice value, set
// through its thread id; elsewhere this is skipped.
try {
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isInteger(tid) && tid > 0) setPriority(tid, 19);
} catch {
  // not Linux, or not permitted: counting still works at normal priority
}

// Special-token text counted as text, as on the event loop (token-count.ts AS_TEXT).
const AS_TEXT = { disallowedSpecial: new Set() };
parentPort.on('message', ({ id, texts }) => {
  parentPort.postMessage({ id, counts: texts.map((text) => countTokens(text, AS_TEXT)) });
});
