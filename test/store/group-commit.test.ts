import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { usdToPico } from '../../src/billing/money.ts';
import { openDatabase } from '../../src/store/sqlite/database.ts';
import { GroupCommit } from '../../src/store/sqlite/group-commit.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';

const file = (): string => path.join(mkdtempSync(path.join(tmpdir(), 'junction-group-')), 'ledger.db');

describe('group commit (issue #6)', () => {
  it('runs a turn’s writes in arrival order, and a write that throws rolls back only itself', async () => {
    const db = openDatabase(':memory:');
    db.exec('CREATE TABLE t (n INTEGER)');
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)');
    const write = (n: number, fail = false) =>
      db.transaction(() => {
        insert.run(n);
        if (fail) throw new Error(`write ${n} refused`);
        return n;
      });
    const group = new GroupCommit(db);
    const results = await Promise.allSettled([1, 2, 3].map((n) => group.submit(write(n, n === 2))));
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason.message).to.equal('write 2 refused');
    expect(db.prepare('SELECT n FROM t ORDER BY rowid').all()).to.deep.equal([{ n: 1 }, { n: 3 }]);
  });

  it('runs a batch bare when no write throws, and again with savepoints when one does, with the same outcome (issue #17)', async () => {
    const db = openDatabase(':memory:');
    db.exec('CREATE TABLE t (n INTEGER)');
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)');
    const calls = { bare: 0, savepoint: 0 };
    // A write that changes the table and then may throw, as a hold's UPDATE then INSERT may.
    const body = (n: number, fail: boolean) => (): number => {
      insert.run(n);
      insert.run(n * 10);
      if (fail) throw new Error(`write ${n} refused`);
      return n;
    };
    const submit = (group: GroupCommit, n: number, fail = false) => {
      const run = body(n, fail);
      const inSavepoint = db.transaction(run);
      return group.submit(
        () => {
          calls.savepoint++;
          return inSavepoint();
        },
        () => {
          calls.bare++;
          return run();
        },
      );
    };
    const group = new GroupCommit(db);
    expect(await Promise.all([1, 2].map((n) => submit(group, n)))).to.deep.equal([1, 2]);
    expect(calls).to.deep.equal({ bare: 2, savepoint: 0 });
    const results = await Promise.allSettled([3, 4, 5].map((n) => submit(group, n, n === 4)));
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason.message).to.equal('write 4 refused');
    // The bare run got as far as write 4, then the batch ran again, each write in its savepoint.
    expect(calls).to.deep.equal({ bare: 4, savepoint: 3 });
    expect(db.prepare('SELECT n FROM t ORDER BY rowid').all().map((r) => (r as { n: number }).n)).to.deep.equal([1, 10, 2, 20, 3, 30, 5, 50]);
  });

  it('answers nobody until the commit, and fails the whole batch when the commit cannot happen', async () => {
    const where = file();
    const db = openDatabase(where);
    db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 0');
    db.exec('CREATE TABLE t (n INTEGER)');
    // Another connection (another process, in production) holds the write lock.
    const other = openDatabase(where);
    other.exec('BEGIN IMMEDIATE');
    const group = new GroupCommit(db);
    let answered = false;
    const pending = Promise.allSettled([1, 2].map((n) => group.submit(() => db.prepare('INSERT INTO t (n) VALUES (?)').run(n)))).then((r) => {
      answered = true;
      return r;
    });
    await Promise.resolve();
    expect(answered).to.equal(false);
    const results = await pending;
    expect(results.map((r) => r.status)).to.deep.equal(['rejected', 'rejected']);
    expect(String((results[0] as PromiseRejectedResult).reason)).to.match(/locked|busy/i);
    other.exec('ROLLBACK');
    expect(db.prepare('SELECT count(*) AS c FROM t').get()).to.deep.equal({ c: 0 });
    other.close();
    db.close();
  });

  it('never lets concurrent holds overspend: each sees the one before it in the same batch', async () => {
    const store = new SqliteStore(file());
    await store.migrate();
    const key = await store.createKey({ name: 'k', sha256: 'a'.repeat(64), prefix: 'sk-jct-ab', balance: usdToPico(3), models: null, limits: { rpm: null, tpm: null, concurrency: null } });
    const holds = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        store.reserve({ requestId: `r${i}`, keyId: key.id, amount: usdToPico(1), inputCost: 0n, model: 'm', provider: 'p', instanceId: 'i' }),
      ),
    );
    expect(holds.map((h) => h.ok)).to.deep.equal([true, true, true, false, false]);
    expect((await store.keyById(key.id))?.held).to.equal(usdToPico(3));
    await store.close();
  });

  it('writes what is queued before the database closes', async () => {
    const where = file();
    const store = new SqliteStore(where);
    await store.migrate();
    const key = await store.createKey({ name: 'k', sha256: 'b'.repeat(64), prefix: 'sk-jct-ab', balance: usdToPico(3), models: null, limits: { rpm: null, tpm: null, concurrency: null } });
    const hold = store.reserve({ requestId: 'last', keyId: key.id, amount: usdToPico(1), inputCost: 0n, model: 'm', provider: 'p', instanceId: 'i' });
    await store.close();
    expect((await hold).ok).to.equal(true);
    const reopened = new SqliteStore(where);
    expect((await reopened.keyById(key.id))?.held).to.equal(usdToPico(1));
    await reopened.close();
  });
});
