import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import path from 'node:path';
// @ts-expect-error: a plain JavaScript module of bin/, without type declarations
import { load } from '../../bin/source-loader.mjs';

type Load = (url: string, context: object, next: (url: string, context: object) => Promise<unknown>) => Promise<{ format: string; source: string; shortCircuit?: boolean }>;
const loadTs = load as Load;
const root = path.resolve(import.meta.dirname, '../..');
const urlOf = (file: string): string => pathToFileURL(path.join(root, file)).href;

describe('the source loader (issue #17)', () => {
  it("builds Junction's own sources without tsx's __name wrappers, with a source map", async () => {
    const loaded = await loadTs(urlOf('src/proxy/passthrough.ts'), {}, () => Promise.reject(new Error('not for tsx')));
    expect(loaded.format).to.equal('module');
    expect(loaded.shortCircuit).to.equal(true);
    expect(loaded.source).to.include('class Passthrough');
    expect(loaded.source).to.not.include('__name(');
    expect(loaded.source).to.include('sourceMappingURL=data:application/json');
  });

  it('leaves every other file to the next loader (tsx)', async () => {
    const seen: string[] = [];
    const next = async (url: string) => {
      seen.push(url);
      return { format: 'module', source: '' };
    };
    await loadTs(urlOf('test/support/gateway.ts'), {}, next);
    await loadTs(urlOf('bench/load.mjs'), {}, next);
    await loadTs('node:fs', {}, next);
    expect(seen).to.deep.equal([urlOf('test/support/gateway.ts'), urlOf('bench/load.mjs'), 'node:fs']);
  });

  // On newer Nodes tsx hooks in-thread, and an off-thread hook's output went through it again and
  // came back with keepNames; where Node has in-thread hooks but tsx stays off-thread (22.18), an
  // in-thread hook beside them broke every CommonJS import (nodejs/node#57327). CI runs this on
  // Node 20, 22.18 and 24.
  it('is what actually runs src/ under `--import ./bin/register.mjs` on this Node, with CommonJS packages loading', () => {
    const probe = [
      "const koa = await import('koa');",
      "const m = await import('./src/proxy/native-relay.ts');",
      "process.stdout.write(typeof koa.default + ' ' + String(m.relayNative.toString().includes('__name(')));",
    ].join(' ');
    const out = execFileSync(process.execPath, ['--import', './bin/register.mjs', '--input-type=module', '-e', probe], { cwd: root, encoding: 'utf8' });
    expect(out).to.equal('function false');
  });
});
