#!/usr/bin/env node
// The `junction` command. Junction runs its TypeScript sources directly, so there is no build
// step to forget between editing and running (register.mjs).
import './register.mjs';
const { main } = await import('../src/cli/main.ts');
const code = await main(process.argv.slice(2));
if (code !== null) process.exitCode = code;
