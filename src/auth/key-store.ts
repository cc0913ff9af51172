import { hash } from 'node:crypto';
import type { RateLimits } from '../limits/limiter.ts';
import type { KeyRecord, Store } from '../store/store.ts';
import { compileModelGlobs, type ModelMatcher } from './model-glob.ts';

/** An authenticated caller. The key itself is not in it: the cache keeps only its SHA-256 digest. */
export interface ApiKey {
  readonly id: number;
  readonly name: string;
  /** Null when the key may use every model. */
  readonly allowsModel: ModelMatcher | null;
  readonly disabled: boolean;
  /** The key's own limits; auth.default_limits are applied by the rate-limit middleware. */
  readonly limits: RateLimits;
}

/**
 * The key a connection last presented, on the connection itself (its socket), as the passthrough
 * keeps each request's hooks on the request. A keep-alive client sends the same key on every
 * request: hashing it each time cost a Messages stream about 12 µs of the gateway's CPU on Node 20
 * in a contended A/B (issue #17, twenty-first session), where a warm loop times the call at 0.7 µs;
 * in a profile, the call's own samples were mostly OpenSSL's set-up for each digest. The secret
 * stays with the connection that sent it, whose own buffers held it, and goes when the connection
 * does; the key cache itself still keeps only digests.
 */
const LAST_KEY = Symbol('junction.lastKey');
interface LastKey {
  readonly presented: string;
  readonly key: ApiKey;
  /** The cache it was found in: a reload replaces it, and with it every connection's answer. */
  readonly from: ReadonlyMap<string, ApiKey>;
}
/** A connection that can carry its last key (a request's socket). */
export type KeyedConnection = object & { [LAST_KEY]?: LastKey | undefined };

/** How often the store is asked whether keys changed: changes made elsewhere apply within this. */
const POLL_MS = 250;

/** One-shot `crypto.hash` (Node ≥ 20.12): no Hash object per request (issue #6 profile). */
export function sha256(text: string): Buffer {
  return hash('sha256', text, 'buffer');
}

/** The digest keys are stored and looked up by. */
const sha256Hex = (text: string): string => hash('sha256', text, 'hex');

/**
 * Keys, looked up by the SHA-256 of what the client presented, as hex. The lookup is on the
 * digest, not the secret, so its timing tells an attacker nothing useful (reliability.md §4.1: "the
 * index equality is on the hash"); a hit is an exact match of the whole digest, so no second
 * comparison follows. The digest is made as hex directly: `crypto.hash` to a Buffer, then to hex,
 * took 1.2 µs a request against 0.44 (issue #17). Keys are cached and the cache is
 * reloaded when the store's keys version changes, so a key created, topped up or disabled by the
 * CLI in another process applies within a second, without a restart (issue #4).
 */
export class KeyStore {
  readonly #store: Store;
  readonly #digest: (presented: string) => string;
  #byDigest = new Map<string, ApiKey>();
  #version = '';
  #timer: NodeJS.Timeout | undefined;

  /** `digest`: the SHA-256 as hex, but for tests that count how often it is taken. */
  constructor(store: Store, digest: (presented: string) => string = sha256Hex) {
    this.#store = store;
    this.#digest = digest;
  }

  async start(): Promise<void> {
    await this.#reload();
    this.#timer = setInterval(() => void this.#refresh(), POLL_MS);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** Reads the keys again now, not at the next poll: a reload's keys apply at once (issue #16). */
  async refresh(): Promise<void> {
    await this.#reload();
  }

  /**
   * The key as cached, without waiting; undefined when it is not (then `authenticate` looks it up).
   * On a connection that presented the same secret since the cache was last loaded, the key found
   * then, without hashing again; compared in constant time, so how fast a wrong key is refused
   * says nothing of how much of it matched (one connection may carry many clients' requests,
   * behind a proxy). Any other answer replaces what the connection remembered, or clears it when
   * no key matched: a connection does not keep a secret that no longer opens anything.
   */
  known(presented: string, connection?: KeyedConnection): ApiKey | undefined {
    const last = connection?.[LAST_KEY];
    if (last !== undefined && last.from === this.#byDigest && sameSecret(last.presented, presented)) return last.key;
    const key = this.#byDigest.get(this.#digest(presented));
    // Assigned, never deleted: the sockets keep one shape.
    if (connection !== undefined && (key !== undefined || last !== undefined)) {
      connection[LAST_KEY] = key === undefined ? undefined : { presented, key, from: this.#byDigest };
    }
    return key;
  }

  /** The key, or undefined when none matches. A disabled key is returned; the caller refuses it. */
  async authenticate(presented: string): Promise<ApiKey | undefined> {
    const hex = this.#digest(presented);
    let key = this.#byDigest.get(hex);
    if (!key) {
      // Created since the last reload: look it up now rather than wait for the poll.
      const record = await this.#store.findKey(hex);
      if (!record) return undefined;
      key = cached(record);
      this.#byDigest.set(hex, key);
    }
    return key;
  }

  async #refresh(): Promise<void> {
    try {
      if ((await this.#store.keysVersion()) !== this.#version) await this.#reload();
    } catch {
      // The store is briefly unavailable (a busy file, a restarting database): keep the cache.
    }
  }

  async #reload(): Promise<void> {
    const version = await this.#store.keysVersion();
    const next = new Map<string, ApiKey>();
    for (const record of await this.#store.listKeys()) next.set(record.sha256, cached(record));
    this.#byDigest = next;
    this.#version = version;
  }
}

/**
 * Whether `presented` is `kept`, in time that depends on the presented key's length only: neither
 * how much of it matched nor the kept key's length shows (reliability.md §4.1 compares digests
 * with timingSafeEqual for the same reason; these are strings, which it does not take).
 */
function sameSecret(kept: string, presented: string): boolean {
  let diff = kept.length ^ presented.length;
  // Past the kept key's end charCodeAt is NaN, which `^` reads as 0: the presented code stays.
  for (let i = 0; i < presented.length; i++) diff |= kept.charCodeAt(i) ^ presented.charCodeAt(i);
  return diff === 0;
}

function cached(record: KeyRecord): ApiKey {
  return {
    id: record.id,
    name: record.name,
    allowsModel: record.models === null ? null : compileModelGlobs(record.models),
    disabled: record.disabled,
    limits: record.limits,
  };
}
