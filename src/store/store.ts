import type { Pico } from '../billing/money.ts';
import type { TokenUsage } from '../formats/wire.ts';
import type { RateLimits } from '../limits/limiter.ts';

/**
 * The durable store behind keys and money. One interface, two backends: SQLite (embedded, the
 * default) and PostgreSQL (issue #7). Methods are async so that a networked backend fits.
 * Money is bigint pico-dollars throughout (src/billing/money.ts).
 */
export interface Store {
  /** Applies pending schema migrations, in order, each once. */
  migrate(): Promise<void>;

  /**
   * Static keys from the YAML: inserted, updated, and switched off while the file no longer lists
   * them. Listing a key again never undoes an operator's disable.
   */
  syncConfigKeys(keys: readonly ConfigKeySpec[]): Promise<void>;
  createKey(spec: NewKeySpec): Promise<KeyRecord>;
  findKey(sha256: string): Promise<KeyRecord | undefined>;
  keyById(id: number): Promise<KeyRecord | undefined>;
  listKeys(): Promise<KeyRecord[]>;
  topUp(name: string, amount: Pico): Promise<KeyRecord>;
  setDisabled(name: string, disabled: boolean): Promise<KeyRecord>;
  /** Changes whenever any key changes, in this process or another: a cheap poll for cache refreshes. */
  keysVersion(): Promise<string>;

  /** Holds a request's maximum cost, atomically against every other hold on the key. */
  reserve(hold: HoldSpec): Promise<ReserveResult>;
  /**
   * Releases the request's hold (if any), charges what it cost (never below zero) and writes its
   * ledger row. Idempotent per request id, so a failed settlement can be retried.
   */
  settle(entry: LedgerEntry): Promise<SettleResult>;

  /** One request's ledger row, only for the key that made it. */
  generation(requestId: string, keyId: number): Promise<LedgerRow | undefined>;
  /**
   * Responses (issue #14): which upstream made a response, for its key, until it expires. Native
   * routes keep the response upstream; this says where, so a continuation or a GET goes there.
   */
  /** Remembers a response and the ids of its output items, which later input may name (`item_reference`). */
  saveResponse(record: ResponseRecord, itemIds: readonly string[]): Promise<void>;
  /** The key's own response by id, unexpired at `now`; another key's is not found. */
  findResponse(id: string, keyId: number, now: Date): Promise<ResponseRecord | undefined>;
  /** The key's own response that made the output item `itemId`, unexpired at `now`. */
  findResponseOfItem(itemId: string, keyId: number, now: Date): Promise<ResponseRecord | undefined>;
  deleteResponse(id: string, keyId: number): Promise<boolean>;
  /** Removes the responses expired by `now`; returns how many. */
  purgeResponses(now: Date): Promise<number>;
  /** Ledger rows, newest first. */
  usage(query: UsageQuery): Promise<LedgerRow[]>;
  /**
   * The ledger since a time, summed per time bucket and per model, key or provider: what the
   * dashboard charts and its provider health read, without moving every row (issue #16).
   */
  usageSeries(query: SeriesQuery): Promise<SeriesPoint[]>;

  /** Writes one admin action (a key created, topped up, disabled…): who, what, when; never a key. */
  recordAudit(entry: AuditEntry): Promise<void>;
  /** The latest audit rows, newest first. */
  auditLog(limit: number): Promise<AuditRow[]>;

  /** Records this process as alive; holds it leaves behind are reconciled if it dies. */
  registerInstance(instance: InstanceInfo): Promise<void>;
  /**
   * Marks this process alive now. Registers it again if its row is gone: another instance removes
   * the rows of instances silent for a minute (a database outage), and a live instance missing
   * from the list would have its running requests' holds settled as dead (review of issue #7).
   */
  heartbeat(instance: InstanceInfo): Promise<void>;
  /**
   * Settles holds left by processes that died (same host and pid gone, or heartbeat stale):
   * each is charged its estimated input cost, marked `estimated` and `interrupted`.
   */
  reconcile(alive: (instance: InstanceInfo) => boolean, staleBefore: Date): Promise<number>;
  /** Each registered instance's id, and whether it is alive: by `alive`, with a heartbeat since `staleBefore`. */
  instances(alive: (instance: InstanceInfo) => boolean, staleBefore: Date): Promise<Map<string, boolean>>;

  close(): Promise<void>;
}

export interface KeyRecord {
  readonly id: number;
  readonly name: string;
  readonly sha256: string;
  /** The first characters of the key, to recognise it in listings. */
  readonly prefix: string;
  readonly source: 'config' | 'store';
  /** Remaining funds; null means unlimited. */
  readonly balance: Pico | null;
  readonly held: Pico;
  readonly spent: Pico;
  readonly requests: number;
  readonly models: readonly string[] | null;
  /** The key's own limits; auth.default_limits fill in the rest at request time. */
  readonly limits: RateLimits;
  readonly disabled: boolean;
}

export interface ConfigKeySpec {
  readonly name: string;
  readonly sha256: string;
  readonly balance: Pico | null;
  readonly models: readonly string[] | null;
  /** Unlike the balance, limits follow the YAML on every sync. */
  readonly limits: RateLimits;
}

export interface NewKeySpec {
  readonly name: string;
  readonly sha256: string;
  readonly prefix: string;
  readonly balance: Pico | null;
  readonly models: readonly string[] | null;
  readonly limits: RateLimits;
}

export interface HoldSpec {
  readonly requestId: string;
  readonly keyId: number;
  readonly amount: Pico;
  /** What the input alone would cost: charged if the process dies before settling. */
  readonly inputCost: Pico;
  readonly model: string;
  readonly provider: string;
  readonly instanceId: string;
}

export type ReserveResult = { readonly ok: true } | { readonly ok: false; readonly available: Pico };

export interface LedgerEntry {
  readonly requestId: string;
  readonly keyId: number;
  readonly endpoint: string | null;
  readonly model: string | null;
  readonly provider: string | null;
  readonly upstreamModel: string | null;
  /** native, translated, in-process, local */
  readonly route: string | null;
  readonly usage: TokenUsage;
  readonly cost: Pico;
  readonly status: number;
  /** `ok`, an error code, `client_disconnected`… */
  readonly outcome: string;
  readonly estimated: boolean;
  /** When the request arrived, in Unix milliseconds: a number, not a `Date` made for each request (issue #17). */
  readonly startedAtMs: number;
  readonly firstByteMs: number | null;
  readonly durationMs: number;
}

export interface SettleResult {
  readonly charged: Pico;
  /** Cost the key could not pay (the hold underestimated): the gateway's loss, recorded. */
  readonly uncollected: Pico;
}

export interface LedgerRow extends Omit<LedgerEntry, 'startedAtMs'> {
  readonly startedAt: Date;
  readonly keyName: string;
  readonly charged: Pico;
  readonly uncollected: Pico;
}

export interface ResponseRecord {
  /** The upstream's `resp_…` id. */
  readonly id: string;
  readonly keyId: number;
  /** The provider whose upstream holds the response. */
  readonly provider: string;
  /** The catalogue model it answered. */
  readonly model: string;
  /**
   * The tokens a continuation carries in from it: its input and output. The upstream bills them
   * again on the next turn, so that turn's hold counts them (review of issue #14).
   */
  readonly contextTokens: number;
  /**
   * For a response Junction keeps itself (a translated or in-process route, whose upstream keeps
   * nothing): `{ input, response }` as JSON, the items a continuation replays. Absent when the
   * upstream keeps it.
   */
  readonly body?: string;
  readonly createdAt: Date;
  readonly expiresAt: Date;
}

export interface UsageQuery {
  readonly keyId?: number;
  /** One request's row, whichever key made it (the dashboard's search). */
  readonly requestId?: string;
  readonly since?: Date;
  readonly until?: Date;
  readonly limit: number;
}

export interface SeriesQuery {
  readonly since: Date;
  /** Bucket width; buckets start at multiples of it since the Unix epoch (UTC). */
  readonly bucketSeconds: number;
  readonly by: 'model' | 'key' | 'provider';
}

export interface SeriesPoint {
  readonly bucket: Date;
  /** The model, key name or provider; `(none)` for rows without one (an interrupted hold). */
  readonly group: string;
  readonly requests: number;
  /** Answers of 5xx, and answers that broke after they started (a cut stream, an interrupted hold). */
  readonly failed: number;
  readonly charged: Pico;
  /** Input and output tokens, cache reads and writes included. */
  readonly tokens: number;
}

/** Who did an admin action: the admin key (over the API or the dashboard), or an OS user (the CLI). */
export interface AuditActor {
  /** `admin` for the admin key; the OS user for the CLI. */
  readonly actor: string;
  readonly channel: 'api' | 'dashboard' | 'cli';
  /** The client's IP address (HTTP) or the host name (CLI). */
  readonly client: string | null;
}

export interface AuditEntry extends AuditActor {
  /** `key.create`, `key.topup`, `key.disable`, `key.enable`, `session.login`, `session.logout`. */
  readonly action: string;
  readonly keyName: string | null;
  /** A top-up, or a new key's starting balance. */
  readonly amount: Pico | null;
  /** Anything else worth knowing (a new key's models and limits); never a key. */
  readonly detail: string | null;
}

export interface AuditRow extends AuditEntry {
  readonly id: number;
  readonly at: Date;
}

export interface InstanceInfo {
  readonly id: string;
  readonly host: string;
  readonly pid: number;
}

/**
 * The ledger entry for a hold whose instance died mid-request (every reconciler's, issue #4/#7):
 * the prompt reached the upstream, which bills input on any started request, and what came back is
 * unknown, so the input estimate is charged and marked estimated and `interrupted`.
 */
export function interruptedEntry(hold: {
  readonly requestId: string;
  readonly keyId: number;
  readonly model: string | null;
  readonly provider: string | null;
  readonly inputCost: Pico;
  readonly startedAtMs: number;
}): LedgerEntry {
  return {
    requestId: hold.requestId,
    keyId: hold.keyId,
    endpoint: null,
    model: hold.model,
    provider: hold.provider,
    upstreamModel: null,
    route: null,
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
    cost: hold.inputCost,
    status: 0,
    outcome: 'interrupted',
    estimated: true,
    startedAtMs: hold.startedAtMs,
    firstByteMs: null,
    durationMs: 0,
  };
}

/** A named key that does not exist. */
export class KeyNotFoundError extends Error {
  constructor(name: string) {
    super(`no key named "${name}"`);
    this.name = 'KeyNotFoundError';
  }
}
