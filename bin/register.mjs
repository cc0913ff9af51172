// How Junction's TypeScript runs without a build step: its own sources through source-loader.mjs,
// anything else (a plugin written in TypeScript, the benchmark's scripts) through tsx's loader.
// `node --import ./bin/register.mjs <file.ts>` runs a file as `junction` does (bench/run.mjs).
import module from 'node:module';
import { register } from 'tsx/esm/api';
import { loadSync } from './source-loader.mjs';

// Our hook goes where tsx's go, in-thread or off-thread, and is registered last, so asked first.
// tsx registers in-thread (module.registerHooks) only on newer Nodes (22.22.3+, 24.11.1+, 25.1+):
// there its hook built an off-thread hook's output again, keepNames and all (source-loader.mjs).
// Where Node has registerHooks but tsx stays off-thread, an in-thread hook beside off-thread ones
// breaks CommonJS loading (nodejs/node#57327: ERR_INVALID_RETURN_PROPERTY_VALUE on 22.18). So
// tsx's choice is observed, not guessed from version numbers.
const registerHooks = module.registerHooks;
let tsxInThread = false;
if (typeof registerHooks === 'function') {
  module.registerHooks = (...args) => {
    tsxInThread = true;
    return registerHooks.apply(module, args);
  };
}
try {
  register();
} finally {
  if (typeof registerHooks === 'function') module.registerHooks = registerHooks;
}
if (tsxInThread) registerHooks({ load: loadSync });
else module.register('./source-loader.mjs', import.meta.url);
