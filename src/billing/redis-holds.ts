import type { Redis } from 'ioredis';
import type { Logger } from '../log.ts';
import { interruptedEntry, type HoldSpec, type LedgerEntry, type ReserveResult, type SettleResult, type Store } from '../store/store.ts';
import type { Holds } from './holds.ts';
import { ERR } from '../errors.ts';
import { deadline } from '../store/redis-connection.ts';

/**
 * Balance holds shared through Redis (issue #7). The ledger (the store) stays the truth for money:
 * it is what settlements write, and Redis only keeps, per key, what the store's balance allows
 * (`avail`) and the sum of the holds open on it (`held`), so that "does this request fit?" is one
 * atomic Lua script for every instance, instead of a write to the database.
 *
 * Amounts in Redis are nano-dollars, rounded against the key (holds up, the balance down): Lua
 * numbers are doubles, exact to 2^53 nano-dollars ($9M, the per-key maximum). A key is seeded from
 * the store on first use. Drift is only ever towards refusing: a settlement lowers `avail` by its
 * charge rounded up.
 *
 * Reconciled against the ledger at start-up and every heartbeat (`reconcile`), so no hold leaks:
 * - a hold whose instance is dead is settled in the ledger as `interrupted` (its input estimate,
 *   as the store's own reconciliation does) and released;
 * - a hold the ledger already settled (its release was lost: Redis unreachable at that moment) is
 *   released with the charge the ledger recorded;
 * - each key's `avail` is set again from the store (a top-up reaches Redis this way), unless a
 *   settlement released meanwhile (`gen` changed): never overwritten with an older balance.
 */
const NANO = 1_000n;
/**
 * A hold of an instance that is not registered (one that registered after the reconciler read the
 * list, or a dead one whose row another instance already removed) is left alone until this old, by
 * its instance's clock: enough for clocks a few seconds apart. Holds of registered dead instances
 * are settled at once; those of live ones are checked against the ledger after LEDGER_CHECK_MS.
 */
const UNREGISTERED_GRACE_MS = 10_000;
const LEDGER_CHECK_MS = 60_000;

const RESERVE = `
local avail = redis.call('HGET', KEYS[1], 'avail')
if not avail then return { -1, '0' } end
local held = tonumber(redis.call('HGET', KEYS[1], 'held') or '0')
if avail ~= 'inf' then
  local free = tonumber(avail) - held
  -- %d, not tostring: tostring keeps 14 digits ($100,000 would read 1e+14)
  if free < tonumber(ARGV[2]) then return { 0, string.format('%d', free) } end
end
if ARGV[2] ~= '0' then redis.call('HINCRBY', KEYS[1], 'held', ARGV[2]) end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
return { 1, '0' }
`;
const SEED = `
redis.call('HSETNX', KEYS[1], 'avail', ARGV[1])
redis.call('HSETNX', KEYS[1], 'held', '0')
redis.call('HSETNX', KEYS[1], 'gen', '0')
return 1
`;
// Only a hold still recorded is released: a second release of one request (two reconcilers, or a
// reconciler and a late settlement) changes nothing.
const RELEASE = `
local record = redis.call('HGET', KEYS[2], ARGV[1])
if not record then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
local amount = string.match(record, '^(%d+)|')
if amount ~= '0' then redis.call('HINCRBY', KEYS[1], 'held', '-' .. amount) end
local avail = redis.call('HGET', KEYS[1], 'avail')
if avail and avail ~= 'inf' and ARGV[2] ~= '0' then redis.call('HINCRBY', KEYS[1], 'avail', '-' .. ARGV[2]) end
redis.call('HINCRBY', KEYS[1], 'gen', 1)
return 1
`;
// held is recomputed from the open holds; avail is replaced only if no release happened since ARGV[1] was read.
const RESYNC = `
if not redis.call('HGET', KEYS[1], 'avail') then return 0 end
local held = 0
for _, record in ipairs(redis.call('HVALS', KEYS[2])) do held = held + tonumber(string.match(record, '^(%d+)|')) end
redis.call('HSET', KEYS[1], 'held', string.format('%d', held))
if redis.call('HGET', KEYS[1], 'gen') == ARGV[1] then redis.call('HSET', KEYS[1], 'avail', ARGV[2]) end
return 1
`;

interface HoldCommands {
  jctHoldTake(balance: string, holds: string, requestId: string, amount: string, record: string): Promise<[number, string]>;
  jctHoldSeed(balance: string, holds: string, avail: string): Promise<number>;
  jctHoldRelease(balance: string, holds: string, requestId: string, charged: string): Promise<number>;
  jctHoldResync(balance: string, holds: string, gen: string, avail: string): Promise<number>;
}

export interface RedisHoldsOptions {
  readonly prefix: string;
  readonly log: Logger;
  /** The registered instances, and whether each is alive (heartbeating, process present). */
  readonly instances: () => Promise<ReadonlyMap<string, boolean>>;
}

export class RedisHolds implements Holds {
  readonly #redis: Redis & HoldCommands;
  readonly #store: Store;
  readonly #options: RedisHoldsOptions;

  constructor(redis: Redis, store: Store, options: RedisHoldsOptions) {
    redis.defineCommand('jctHoldTake', { numberOfKeys: 2, lua: RESERVE });
    redis.defineCommand('jctHoldSeed', { numberOfKeys: 2, lua: SEED });
    redis.defineCommand('jctHoldRelease', { numberOfKeys: 2, lua: RELEASE });
    redis.defineCommand('jctHoldResync', { numberOfKeys: 2, lua: RESYNC });
    this.#redis = redis as Redis & HoldCommands;
    this.#store = store;
    this.#options = options;
  }

  async reserve(hold: HoldSpec): Promise<ReserveResult> {
    const [balance, holds] = this.#keys(hold.keyId);
    const amount = ceilNano(hold.amount);
    const record = [amount, hold.instanceId, hold.inputCost, Date.now(), hold.model, hold.provider].join('|');
    for (let attempt = 0; attempt < 2; attempt++) {
      // Fails closed: if Redis cannot answer, the request is refused with 503 (#take).
      const [state, free] = await this.#take(balance, holds, hold.requestId, String(amount), record);
      if (state === 1) return { ok: true };
      if (state === 0) return { ok: false, available: BigInt(free) * NANO };
      await this.#seed(hold.keyId);
    }
    throw new Error(`could not seed key ${hold.keyId}'s balance in Redis`);
  }

  heldOutsideStore(keyIds: readonly number[]): Promise<ReadonlyMap<number, bigint>> {
    return redisHeld(this.#redis, this.#options.prefix, keyIds);
  }

  /**
   * One hold script. If Redis does not answer (in time, or at all), whether the hold was taken is
   * unknown: it is released (a release of a hold not taken changes nothing), and the request is
   * refused with 503, never sent upstream unheld (fail closed).
   */
  async #take(balance: string, holds: string, requestId: string, amount: string, record: string): Promise<[number, string]> {
    try {
      return await deadline(this.#redis.jctHoldTake(balance, holds, requestId, amount, record));
    } catch (err) {
      this.#options.log.error({ req_id: requestId, err: errText(err) }, 'redis hold failed; the request is refused');
      this.#redis.jctHoldRelease(balance, holds, requestId, '0').catch(() => undefined); // the reconciler heals what this misses
      throw ERR.holdUnavailable();
    }
  }

  async settled(entry: LedgerEntry, result: SettleResult): Promise<void> {
    try {
      await this.#release(entry.keyId, entry.requestId, result.charged);
    } catch (err) {
      // The ledger has the charge; the reconciler releases the hold against it later.
      this.#options.log.error({ req_id: entry.requestId, err: errText(err) }, 'redis hold release failed; the reconciler will release it');
    }
  }

  async reconcile(): Promise<number> {
    // Ages of unregistered instances' holds count from when the list was read: one that registered
    // after it must not look dead however long this pass takes (review of issue #7).
    const listedAt = Date.now();
    const instances = await this.#options.instances();
    let released = 0;
    for (const holdsKey of await this.#scan(`${this.#options.prefix}hh:*`)) {
      const keyId = Number(/\{(\d+)\}$/.exec(holdsKey)?.[1]);
      if (!Number.isInteger(keyId)) continue;
      const records = await deadline(this.#redis.hgetall(holdsKey));
      for (const [requestId, record] of Object.entries(records)) {
        const [amount, instance, inputCost, at, model, provider] = record.split('|');
        if (amount === undefined || instance === undefined) continue;
        const age = Date.now() - Number(at);
        const alive = instances.get(instance);
        if (alive === false || (alive === undefined && listedAt - Number(at) > UNREGISTERED_GRACE_MS)) {
          const result = await this.#store.settle(
            interruptedEntry({ requestId, keyId, model: model ?? null, provider: provider ?? null, inputCost: BigInt(inputCost ?? '0'), startedAtMs: Number(at) }),
          );
          released += await this.#release(keyId, requestId, result.charged);
        } else if (alive === true && age > LEDGER_CHECK_MS) {
          const row = await this.#store.generation(requestId, keyId);
          if (row) released += await this.#release(keyId, requestId, row.charged);
        }
      }
    }
    await this.#resync();
    return released;
  }

  /** Sets each seeded key's `avail` from the store again: top-ups arrive, rounding drift goes. */
  async #resync(): Promise<void> {
    for (const balanceKey of await this.#scan(`${this.#options.prefix}hb:*`)) {
      const keyId = Number(/\{(\d+)\}$/.exec(balanceKey)?.[1]);
      if (!Number.isInteger(keyId)) continue;
      const gen = await deadline(this.#redis.hget(balanceKey, 'gen'));
      const key = await this.#store.keyById(keyId);
      if (gen === null || key === undefined) continue;
      const [balance, holds] = this.#keys(keyId);
      await deadline(this.#redis.jctHoldResync(balance, holds, gen, availOf(key.balance)));
    }
  }

  async #seed(keyId: number): Promise<void> {
    const key = await this.#store.keyById(keyId);
    if (!key) throw new Error(`no key with id ${keyId}`);
    const [balance, holds] = this.#keys(keyId);
    await deadline(this.#redis.jctHoldSeed(balance, holds, availOf(key.balance)));
  }

  #release(keyId: number, requestId: string, charged: bigint): Promise<number> {
    const [balance, holds] = this.#keys(keyId);
    return deadline(this.#redis.jctHoldRelease(balance, holds, requestId, String(ceilNano(charged))));
  }

  async #scan(pattern: string): Promise<string[]> {
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await deadline(this.#redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500));
      found.push(...keys);
      cursor = next;
    } while (cursor !== '0');
    return found;
  }

  #keys(keyId: number): [string, string] {
    return holdKeys(this.#options.prefix, keyId);
  }
}

/** A key's balance hash and holds hash. One hash tag per key: both in one Redis Cluster slot, as a script's keys must be. */
const holdKeys = (prefix: string, keyId: number): [string, string] => [`${prefix}hb:{${keyId}}`, `${prefix}hh:{${keyId}}`];

/**
 * What is held on each key in Redis, in pico-dollars (issue #12: `held_usd` showed 0 while a stream
 * ran, because the hold is not in the store). One round trip for any number of keys; a key never
 * seeded holds nothing. Also used by `junction keys list`, which has no RedisHolds of its own.
 */
export async function redisHeld(redis: Redis, prefix: string, keyIds: readonly number[]): Promise<ReadonlyMap<number, bigint>> {
  const held = new Map<number, bigint>();
  if (keyIds.length === 0) return held;
  const pipeline = redis.pipeline();
  for (const id of keyIds) pipeline.hget(holdKeys(prefix, id)[0], 'held');
  const replies = (await deadline(pipeline.exec())) ?? [];
  keyIds.forEach((id, i) => {
    const [err, value] = replies[i] ?? [new Error('no reply'), null];
    if (err) throw err;
    if (typeof value === 'string' && value !== '0') held.set(id, BigInt(value) * NANO);
  });
  return held;
}

const ceilNano = (pico: bigint): bigint => (pico + NANO - 1n) / NANO;
/** What the key may still spend, in nano-dollars rounded down; unlimited keys are `inf`. */
const availOf = (balance: bigint | null): string => (balance === null ? 'inf' : String(balance / NANO));
const errText = (err: unknown): string => (err instanceof Error ? err.message : String(err));
