// How Junction's TypeScript runs without a build step: its own sources through source-loader.mjs,
// anything else (a plugin written in TypeScript, the benchmark's scripts) through tsx's loader.
// `node --import ./bin/register.mjs <file.ts>` runs a file as `junction` does (bench/run.mjs).
import module from 'node:module';
import { register } from 'tsx/esm/api';
import { loadSync } from './source-loader.mjs';

register();
// Registered last, so asked first. In-thread where Node has it (22.15+, 24), as tsx's own hooks
// are there: an off-thread hook's result went through tsx's in-thread one again (source-loader.mjs).
if (typeof module.registerHooks === 'function') module.registerHooks({ load: loadSync });
else module.register('./source-loader.mjs', import.meta.url);
