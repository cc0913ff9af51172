// Module hooks for Junction's own TypeScript sources (issue #17). tsx runs everything else, but it
// builds every file with esbuild's `keepNames`, which wraps each named closure in a `__name` call
// that defines its `name` property: on the request path, where closures are made per request,
// that was about 4% of the gateway's CPU (bench/RESULTS.md, "Issue #17, round two"). Junction's
// own files under src/ and plugins/ are built here with the same esbuild and the project's own
// compiler settings, minus keepNames; files anywhere else (a third-party plugin) go on to tsx.
//
// Two forms of one hook: `load` for module.register() (hooks on a worker thread), and `loadSync`
// for module.registerHooks() (in-thread). register.mjs puts it where tsx put its own hooks: where
// tsx is in-thread (Node 24.11.1+, 22.22.3+), its hook built an off-thread one's output again,
// keepNames and all, so there this loader bought nothing until it ran in-thread too.
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { transform, transformSync } from 'esbuild';

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const OWN = ['src', 'plugins'].map((dir) => `${pathToFileURL(path.join(ROOT, dir)).href}/`);
// What tsconfig.json sets that changes emitted code; types are only stripped.
const TSCONFIG = { compilerOptions: { target: 'ES2022', verbatimModuleSyntax: true } };

const isOwn = (url) => url.endsWith('.ts') && OWN.some((dir) => url.startsWith(dir));
const options = (file) => ({
  loader: 'ts',
  format: 'esm',
  target: `node${process.versions.node}`,
  sourcefile: file,
  // Stack traces name the .ts file and line, as under tsx.
  sourcemap: 'inline',
  tsconfigRaw: TSCONFIG,
});

export async function load(url, context, nextLoad) {
  if (!isOwn(url)) return nextLoad(url, context);
  const file = fileURLToPath(url);
  const { code } = await transform(await readFile(file, 'utf8'), options(file));
  return { format: 'module', source: code, shortCircuit: true };
}

export function loadSync(url, context, nextLoad) {
  if (!isOwn(url)) return nextLoad(url, context);
  const file = fileURLToPath(url);
  const { code } = transformSync(readFileSync(file, 'utf8'), options(file));
  return { format: 'module', source: code, shortCircuit: true };
}
