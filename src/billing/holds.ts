import type { HoldSpec, LedgerEntry, ReserveResult, SettleResult, Store } from '../store/store.ts';

/**
 * Where a request's maximum cost is held before it goes upstream (issue #4). In the store by
 * default: the hold is a row beside the balance, and the settlement releases it in the same
 * transaction. With Redis (issue #7), in Redis: the ledger stays the truth for money, and Redis
 * only answers "does this fit?" quickly for every instance (redis-holds.ts).
 */
export interface Holds {
  reserve(hold: HoldSpec): Promise<ReserveResult>;
  /**
   * After the store settled the request: releases a hold kept outside the store. Nothing to wait
   * for (undefined) where holds live in the store: a promise per request less (issue #17).
   */
  settled(entry: LedgerEntry, result: SettleResult): Promise<void> | undefined;
  /** Settles and releases holds left by dead instances, and releases those the ledger already settled. */
  reconcile(): Promise<number>;
  /** Pico-dollars held on each key outside the store (whose own `held` counts the rest); absent keys hold nothing there. */
  heldOutsideStore(keyIds: readonly number[]): Promise<ReadonlyMap<number, bigint>>;
}

/**
 * Keys as the store has them, with what is held on them wherever holds live (issue #12): the
 * admin API, `/v1/balance` and `junction keys list` show the real amount held.
 */
export async function withAllHolds<K extends { readonly id: number; readonly held: bigint }>(keys: readonly K[], outside: Holds['heldOutsideStore']): Promise<K[]> {
  const held = await outside(keys.map((k) => k.id));
  return keys.map((k) => {
    const more = held.get(k.id);
    return more === undefined ? k : { ...k, held: k.held + more };
  });
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
  settled(): undefined {
    return undefined; // the settlement released it in the same transaction
  }
  async reconcile(): Promise<number> {
    return 0;
  }
  async heldOutsideStore(): Promise<ReadonlyMap<number, bigint>> {
    return new Map();
  }
}
