import type { Logger } from '../log.ts';
import type { LedgerEntry, SettleResult, Store } from '../store/store.ts';
import type { Holds } from './holds.ts';
import { LinkedList, type Linked } from '../util/linked-list.ts';

/**
 * A request's place in the list of those in flight (from `track`) or being written (from
 * `settle`), for the billing endpoints' read-your-writes. One node a request, linked in and out:
 * two maps keyed by its fresh id string hashed it twice and rehashed as requests came and went,
 * about 1.5 µs a request in a cpu-profile of the server (issue #17, thirty-fifth session). A
 * lookup walks the list, which only the billing endpoints do.
 */
export interface Tracking extends Linked<Tracking> {
  /** @internal */
  readonly requestId: string | undefined;
  /** @internal the tracked work, until it ends */
  life: Promise<unknown> | undefined;
  /** @internal the settlement being written, until it is */
  written: Promise<unknown> | undefined;
  /** @internal its key, once settling */
  keyId: number;
}

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
  /** Requests in flight until their charge is written, and settlements being written. */
  readonly #list = new LinkedList<Tracking>();
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
   * a second promise and its turn per request (issue #17). `work` is given the request's place, to
   * hand to `settle`.
   */
  track<T>(work: (tracking: Tracking) => Promise<T>, requestId?: string): Promise<T> {
    this.#inFlight++;
    const tracking = this.#link(requestId);
    const life = work(tracking);
    tracking.life = life;
    const ended = (): void => {
      tracking.life = undefined;
      if (tracking.written === undefined) this.#list.remove(tracking);
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
   * turns less per request (issue #17). The promise never rejects. `tracking`: the request's place
   * from `track`, when it has one.
   */
  settle(entry: LedgerEntry, tracking: Tracking = this.#link(entry.requestId)): Promise<SettleResult | undefined> {
    const id = entry.requestId;
    const over = (): void => {
      tracking.written = undefined;
      if (tracking.life === undefined) this.#list.remove(tracking);
    };
    const refused = (err: unknown): undefined => {
      over();
      this.#failed.set(id, entry);
      this.#log.error({ req_id: id, err }, 'ledger settlement failed; it will be retried');
      return undefined;
    };
    const written = this.#store.settle(entry).then((result) => {
      const done = (): SettleResult => {
        over();
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
    tracking.keyId = entry.keyId;
    tracking.written = written;
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
    for (let at = this.#list.head; at !== undefined; at = at.next) {
      if ('requestId' in which) {
        if (at.requestId === which.requestId && at.life !== undefined) waits.push(at.life);
      } else if (at.written !== undefined && at.keyId === which.keyId) {
        waits.push(at.written);
      }
    }
    if (waits.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled(waits), new Promise((resolve) => (timer = setTimeout(resolve, maxWaitMs)))]);
    clearTimeout(timer);
  }

  #link(requestId: string | undefined): Tracking {
    return this.#list.add({ requestId, life: undefined, written: undefined, keyId: -1, prev: undefined, next: undefined });
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

  /** Requests and settlements the billing endpoints could wait for now: each is let go when done. */
  get listed(): number {
    return this.#list.size;
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
