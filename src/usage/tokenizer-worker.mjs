// The tokenizer's thread: counts tokens of large texts so the gateway's event loop never waits on
// them (issue #4). Plain JavaScript, so it loads without the TypeScript loader.
import { parentPort } from 'node:worker_threads';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';

parentPort.on('message', ({ id, texts }) => {
  parentPort.postMessage({ id, counts: texts.map((text) => countTokens(text)) });
});
