#!/usr/bin/env node
// The `junction` command. Junction runs its TypeScript sources directly through tsx's loader,
// so there is no build step to forget between editing and running.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
const code = await main(process.argv.slice(2));
if (code !== null) process.exitCode = code;
