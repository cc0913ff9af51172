import type { Logger } from '../log.ts';
import type { LedgerEntry, SettleResult, Store } from '../store/store.ts';

/**
 * The gateway's side of settling holds (issue #4): it counts requests from arrival until their
 * charge is written, so a shutdown can wait for them before the store closes (peers lose spend
 * rows there: reliability.md §2.6), and it keeps settlements the store refused (a busy or
 * unreachable database) to retry on each heartbeat and at shutdown, rather than leave their
 * holds until a restart.
 */
export class Settlements {
  readonly #store: Store;
  readonly #log: Logger;
  readonly #failed = new Map<string, LedgerEntry>();
  #inFlight = 0;
  #idle: (() => void)[] = [];

  constructor(store: Store, log: Logger) {
    this.#store = store;
    this.#log = log;
  }

  /** Runs one request's whole life, counted as in flight until it returns. */
  async track<T>(work: () => Promise<T>): Promise<T> {
    this.#inFlight++;
    try {
      return await work();
    } finally {
      if (--this.#inFlight === 0) for (const wake of this.#idle.splice(0)) wake();
    }
  }

  /** Writes the charge; if the store refuses, the entry is kept for retry and undefined returned. */
  async settle(entry: LedgerEntry): Promise<SettleResult | undefined> {
    try {
      return await this.#store.settle(entry);
    } catch (err) {
      this.#failed.set(entry.requestId, entry);
      this.#log.error({ req_id: entry.requestId, err }, 'ledger settlement failed; it will be retried');
      return undefined;
    }
  }

  /** Retries the settlements the store refused; each succeeds once (a settled hold is gone). */
  async retryFailed(): Promise<void> {
    for (const [id, entry] of [...this.#failed]) {
      try {
        await this.#store.settle(entry);
        this.#failed.delete(id);
        this.#log.info({ req_id: id }, 'ledger settlement retried and written');
      } catch (err) {
        this.#log.error({ req_id: id, err }, 'ledger settlement still failing');
      }
    }
  }

  get pending(): number {
    return this.#failed.size;
  }

  /** Resolves when no request is in flight, or after `timeoutMs`; false if requests remain. */
  async idle(timeoutMs: number): Promise<boolean> {
    if (this.#inFlight === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const done = await Promise.race([
      new Promise<boolean>((resolve) => this.#idle.push(() => resolve(true))),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
    ]);
    clearTimeout(timer);
    return done;
  }
}
