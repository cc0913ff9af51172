import type Database from 'better-sqlite3';

interface Pending {
  readonly run: () => unknown;
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
 * Each write still runs alone in a savepoint (a nested better-sqlite3 transaction), in arrival
 * order, so it sees every earlier write's effect (a hold checks the balance left by the one before
 * it) and a write that throws rolls back only itself. Nobody is answered before the commit: a
 * caller told "held" or "settled" has it on disk, as before.
 */
export class GroupCommit {
  readonly #commit: Database.Transaction<(batch: readonly Pending[]) => Outcome[]>;
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
  }

  /** Runs `write` (a better-sqlite3 transaction function) in the next batch. */
  submit<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ run: write, resolve: resolve as (value: unknown) => void, reject });
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
      outcomes = this.#commit.immediate(batch);
    } catch (err) {
      // The commit itself failed (busy past busy_timeout, disk full): nothing in the batch happened.
      for (const write of batch) write.reject(err);
      return;
    }
    batch.forEach((write, i) => {
      const outcome = outcomes[i] as Outcome;
      if (outcome.ok) write.resolve(outcome.value);
      else write.reject(outcome.value);
    });
  }
}
