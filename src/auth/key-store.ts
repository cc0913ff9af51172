import { createHash, timingSafeEqual } from 'node:crypto';
import type { StaticKeyConfig } from '../config/types.ts';
import { compileModelGlobs, type ModelMatcher } from './model-glob.ts';

/** An authenticated caller. The key itself is never kept: only its SHA-256 digest. */
export interface ApiKey {
  readonly name: string;
  /** Null when the key may use every model. */
  readonly allowsModel: ModelMatcher | null;
  /** Starting balance from the YAML; enforced by the ledger (issue #4). */
  readonly balanceUsd: number | null;
}

interface StoredKey extends ApiKey {
  readonly digest: Buffer;
}

export function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/**
 * Looks keys up by the SHA-256 of what the client presented. The map lookup is on the digest, not
 * the secret, so its timing tells an attacker nothing useful; the final comparison is still
 * constant-time on equal-length digests (reliability.md §4.1).
 */
export class KeyStore {
  readonly #byDigest = new Map<string, StoredKey>();

  constructor(keys: readonly StaticKeyConfig[]) {
    for (const key of keys) {
      this.#byDigest.set(key.sha256, {
        name: key.name,
        digest: Buffer.from(key.sha256, 'hex'),
        allowsModel: key.models === null ? null : compileModelGlobs(key.models),
        balanceUsd: key.balanceUsd,
      });
    }
  }

  authenticate(presented: string): ApiKey | undefined {
    const digest = sha256(presented);
    const stored = this.#byDigest.get(digest.toString('hex'));
    return stored !== undefined && timingSafeEqual(stored.digest, digest) ? stored : undefined;
  }
}
