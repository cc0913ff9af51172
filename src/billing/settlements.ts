import type { Logger } from '../log.ts';
import type { LedgerEntry, SettleResult, Store } from '../store/store.ts';
import type { Holds } from './holds.ts';

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
  /** Requests in flight, by id, until their charge is written. */
  readonly #live = new Map<string, Promise<unknown>>();
  /** Settlements being written, by request id: read-your-writes for the billing endpoints. */
  readonly #writing = new Map<string, { readonly keyId: number; readonly written: Promise<unknown> }>();
  #inFlight = 0;
  #idle: (() => void)[] = [];

  readonly #holds: Holds | undefined;

  /** `holds`: where holds live when not in the store (Redis); told of each settlement to release its hold. */
  constructor(store: Store, log: Logger, holds?: Holds) {
    this.#store = store;
    this.#log = log;
    this.#holds = holds;
  }

  /**
   * Runs one request's whole life, counted as in flight until it returns (and its charge is
   * written). The life's own promise, followed by one callback: not an async function awaiting it,
   * a second promise and its turn per request (issue #17).
   */
  track<T>(work: () => Promise<T>, requestId?: string): Promise<T> {
    this.#inFlight++;
    const life = work();
    if (requestId !== undefined) this.#live.set(requestId, life);
    const ended = (): void => {
      if (requestId !== undefined) this.#live.delete(requestId);
      if (--this.#inFlight === 0) for (const wake of this.#idle.splice(0)) wake();
    };
    return life.then(
      (value) => {
        ended();
        return value;
      },
      (err: unknown) => {
        ended();
        throw err;
      },
    );
  }

  /**
   * Writes the charge; if the store refuses, the entry is kept for retry and undefined returned.
   * Promise callbacks, not an async function awaiting the write: two promises and their microtask
   * turns less per request (issue #17). The promise never rejects.
   */
  settle(entry: LedgerEntry): Promise<SettleResult | undefined> {
    const id = entry.requestId;
    const refused = (err: unknown): undefined => {
      this.#writing.delete(id);
      this.#failed.set(id, entry);
      this.#log.error({ req_id: id, err }, 'ledger settlement failed; it will be retried');
      return undefined;
    };
    const written = this.#store.settle(entry).then((result) => {
      const done = (): SettleResult => {
        this.#writing.delete(id);
        return result;
      };
      let released: Promise<void> | undefined;
      try {
        released = this.#holds?.settled(entry, result);
      } catch (err) {
        return refused(err); // not caught by this then()'s own rejection handler
      }
      return released === undefined ? done() : released.then(done, refused);
    }, refused);
    this.#writing.set(id, { keyId: entry.keyId, written });
    return written;
  }

  /**
   * Read-your-writes for the billing endpoints. Writes share a commit per event-loop turn
   * (issue #6), and a request is settled only after its answer ends, so a client that asks for its
   * generation or balance the moment the answer arrives could otherwise find the charge not there.
   * - By request: waits for that request, if still in flight here, to be settled, for at most
   *   `maxWaitMs` (a generation asked for while its own stream runs gets 404 after that).
   * - By key: waits for that key's settlements already being written; never for running requests.
   */
  async written(which: { readonly requestId: string } | { readonly keyId: number }, maxWaitMs = 2_000): Promise<void> {
    const waits: Promise<unknown>[] = [];
    if ('requestId' in which) {
      const life = this.#live.get(which.requestId);
      if (life) waits.push(life);
    } else {
      for (const { keyId, written } of this.#writing.values()) if (keyId === which.keyId) waits.push(written);
    }
    if (waits.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled(waits), new Promise((resolve) => (timer = setTimeout(resolve, maxWaitMs)))]);
    clearTimeout(timer);
  }

  /** Retries the settlements the store refused; each succeeds once (a settled hold is gone). */
  async retryFailed(): Promise<void> {
    for (const [id, entry] of [...this.#failed]) {
      try {
        // Not `holds?.settled(entry, await store.settle(entry))`: without holds, optional chaining
        // would skip the settlement itself.
        const result = await this.#store.settle(entry);
        await this.#holds?.settled(entry, result);
        this.#failed.delete(id);
        this.#log.info({ req_id: id }, 'ledger settlement retried and written');
      } catch (err) {
        this.#log.error({ req_id: id, err }, 'ledger settlement still failing');
      }
    }
  }

  /** Requests being served now (each tracked until its charge is written). */
  get inFlight(): number {
    return this.#inFlight;
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
