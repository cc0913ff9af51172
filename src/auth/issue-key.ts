import { randomBytes } from 'node:crypto';
import type { RateLimits } from '../limits/limiter.ts';
import type { KeyRecord, Store } from '../store/store.ts';
import { sha256 } from './key-store.ts';

export interface KeyRequest {
  readonly name: string;
  /** Starting balance in pico-dollars; null means unlimited. */
  readonly balance: bigint | null;
  readonly models: readonly string[] | null;
  readonly limits: RateLimits;
}

/** A name that is already taken, or otherwise refused. */
export class KeyRequestError extends Error {}

/**
 * Makes a new key: the prefix, then 24 random bytes as 32 URL-safe characters (192 bits, so a fast
 * digest is enough: reliability.md §4.1). Only its SHA-256 is stored; the key is returned this once.
 */
export async function issueKey(store: Store, prefix: string, request: KeyRequest): Promise<{ key: string; record: KeyRecord }> {
  if (!/^[\w.@-]{1,64}$/.test(request.name)) throw new KeyRequestError('a key name is 1 to 64 letters, digits, ".", "_", "@" or "-"');
  if ((await store.listKeys()).some((k) => k.name === request.name)) throw new KeyRequestError(`a key named "${request.name}" already exists`);
  const key = `${prefix}${randomBytes(24).toString('base64url')}`;
  const record = await store.createKey({
    name: request.name,
    sha256: sha256(key).toString('hex'),
    prefix: key.slice(0, prefix.length + 4),
    balance: request.balance,
    models: request.models,
    limits: request.limits,
  });
  return { key, record };
}
