// How Junction's TypeScript runs without a build step: its own sources through source-loader.mjs,
// anything else (a plugin written in TypeScript, the benchmark's scripts) through tsx's loader.
// `node --import ./bin/register.mjs <file.ts>` runs a file as `junction` does (bench/run.mjs).
import { register as registerHooks } from 'node:module';
import { register } from 'tsx/esm/api';

register();
// Registered last, so asked first.
registerHooks('./source-loader.mjs', import.meta.url);
