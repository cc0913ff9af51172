import type { HoldSpec, LedgerEntry, ReserveResult, SettleResult, Store } from '../store/store.ts';

/**
 * Where a request's maximum cost is held before it goes upstream (issue #4). In the store by
 * default: the hold is a row beside the balance, and the settlement releases it in the same
 * transaction. With Redis (issue #7), in Redis: the ledger stays the truth for money, and Redis
 * only answers "does this fit?" quickly for every instance (redis-holds.ts).
 */
export interface Holds {
  reserve(hold: HoldSpec): Promise<ReserveResult>;
  /** After the store settled the request: releases a hold kept outside the store. */
  settled(entry: LedgerEntry, result: SettleResult): Promise<void>;
  /** Settles and releases holds left by dead instances, and releases those the ledger already settled. */
  reconcile(): Promise<number>;
}

/** Holds as rows of the store: released by the settlement itself, reconciled by the store. */
export class StoreHolds implements Holds {
  readonly #store: Store;
  constructor(store: Store) {
    this.#store = store;
  }
  reserve(hold: HoldSpec): Promise<ReserveResult> {
    return this.#store.reserve(hold);
  }
  async settled(): Promise<void> {}
  async reconcile(): Promise<number> {
    return 0;
  }
}
