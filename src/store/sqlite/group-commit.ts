import type Database from 'better-sqlite3';

interface Pending {
  readonly run: () => unknown;
  /** The same write without its savepoint, for a batch in which no write throws. */
  readonly bare: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: unknown) => void;
}

interface Outcome {
  readonly ok: boolean;
  readonly value: unknown;
}

/**
 * Group commit for the ledger's per-request writes (issue #6). Every hold and every settlement was
 * its own IMMEDIATE transaction, and the commit, not the statements, was the cost: with a WAL file
 * each commit appends the same hot pages (the key's row, the holds table) again. Writes queued in
 * one turn of the event loop now share one transaction, committed at the next `setImmediate`.
 *
 * Writes run in arrival order, so each sees every earlier write's effect (a hold checks the
 * balance left by the one before it), and a write that throws rolls back only itself. A batch is
 * first run with each write bare; if none throws, that is the commit. If one throws, the whole
 * batch is rolled back and run again with each write alone in a savepoint (a nested better-sqlite3
 * transaction), which rolls back only the write that failed. A write's outcome depends only on the
 * database, so the second run gives what one run with savepoints would; the savepoints' SAVEPOINT
 * and RELEASE cost 4–8 µs per request when every batch paid for them (issue #17). Nobody is
 * answered before the commit: a caller told "held" or "settled" has it on disk, as before.
 */
class WriteFailed {
  constructor(readonly cause: unknown) {}
}

export class GroupCommit {
  readonly #commit: Database.Transaction<(batch: readonly Pending[]) => Outcome[]>;
  readonly #bare: Database.Transaction<(batch: readonly Pending[]) => unknown[]>;
  #queue: Pending[] = [];
  #scheduled = false;

  constructor(db: Database.Database) {
    this.#commit = db.transaction((batch: readonly Pending[]) =>
      batch.map((write): Outcome => {
        try {
          return { ok: true, value: write.run() };
        } catch (err) {
          return { ok: false, value: err };
        }
      }),
    );
    this.#bare = db.transaction((batch: readonly Pending[]) =>
      batch.map((write) => {
        try {
          return write.bare();
        } catch (err) {
          throw new WriteFailed(err);
        }
      }),
    );
  }

  /**
   * Runs `write` (a better-sqlite3 transaction function) in the next batch; `bare`, when given, is
   * the same write without its transaction, run when no write of the batch throws.
   */
  submit<T>(write: () => T, bare: () => T = write): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ run: write, bare, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits what is queued now; also called before the database closes. */
  flush(): void {
    this.#scheduled = false;
    const batch = this.#queue;
    if (batch.length === 0) return;
    this.#queue = [];
    let outcomes: Outcome[];
    try {
      const values = this.#bare.immediate(batch);
      batch.forEach((write, i) => write.resolve(values[i]));
      return;
    } catch (err) {
      if (!(err instanceof WriteFailed)) {
        failed(batch, err);
        return;
      }
    }
    try {
      outcomes = this.#commit.immediate(batch);
    } catch (err) {
      failed(batch, err);
      return;
    }
    batch.forEach((write, i) => {
      const outcome = outcomes[i] as Outcome;
      if (outcome.ok) write.resolve(outcome.value);
      else write.reject(outcome.value);
    });
  }
}

/** The commit itself failed (busy past busy_timeout, disk full): nothing in the batch happened. */
function failed(batch: readonly Pending[], err: unknown): void {
  for (const write of batch) write.reject(err);
}
