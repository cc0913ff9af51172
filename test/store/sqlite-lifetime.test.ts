import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const STORE = fileURLToPath(new URL('../../src/store/sqlite/sqlite-store.ts', import.meta.url));

/**
 * Issue #12: on Node 24.19 and later, better-sqlite3 12 aborts the whole process when the garbage
 * collector frees one of its databases or statements (`Assertion failed: (env) != nullptr` under
 * `Statement::~Statement`; nodejs/node#65446), so the store never lets one be collected
 * (src/store/sqlite/database.ts). A process of its own opens, uses and closes many stores, drops
 * them and collects its garbage: it must exit cleanly. Without the fix, Node 24.21 aborted this
 * every time; Node 20 never does. `.ci/run` runs the suite on both.
 */
describe('SQLite objects and the garbage collector (Node 24)', () => {
  it('a process that opens, closes and drops 200 stores survives garbage collection', function () {
    this.timeout(60_000);
    const script = `
      const { SqliteStore } = await import(${JSON.stringify(STORE)});
      for (let i = 0; i < 200; i++) {
        const store = new SqliteStore(':memory:');
        await store.migrate();
        await store.listKeys();
        await store.close();
      }
      for (let i = 0; i < 5; i++) {
        globalThis.gc();
        await new Promise((resolve) => setImmediate(resolve));
      }
      console.log('collected');`;
    const child = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx/esm', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(child.stderr).not.to.include('Assertion failed');
    expect({ status: child.status, signal: child.signal }).to.deep.equal({ status: 0, signal: null });
    expect(child.stdout.trim()).to.equal('collected');
  });
});
