import type Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { MAX_BALANCE, picoToUsdText, type Pico } from '../../billing/money.ts';
import {
  KeyNotFoundError,
  type ConfigKeySpec,
  type HoldSpec,
  type InstanceInfo,
  type KeyRecord,
  type LedgerEntry,
  type LedgerRow,
  type NewKeySpec,
  type ReserveResult,
  type SettleResult,
  type Store,
  type UsageQuery,
  type ResponseRecord,
  type AuditEntry,
  type AuditRow,
  type SeriesPoint,
  type SeriesQuery,
} from '../store.ts';
import { openDatabase } from './database.ts';
import { GroupCommit } from './group-commit.ts';
import { MIGRATIONS } from './migrations.ts';
import { instanceStates, interruptedHold, SERIES_GROUP, SERIES_SUMS, toAuditRow, toKeyRecord, toLedgerRow, toResponseRecord, toSeriesPoint, type Row } from '../rows.ts';
import { isoTime } from '../../util/iso-time.ts';

/**
 * The embedded store: SQLite through better-sqlite3, in WAL mode. Every write that moves money is
 * one IMMEDIATE transaction, so holds and settlements are atomic against each other, also across
 * processes sharing the file. `synchronous = NORMAL`: in WAL mode a process crash loses no
 * committed transaction (20 SIGKILLs, engineering-notes.md); only an OS crash can lose the last ones.
 */
export class SqliteStore implements Store {
  readonly #db: Database.Database;
  /** Statements compiled once: preparing one costs more than running it (issue #6 profile). */
  readonly #statements = new Map<string, Database.Statement>();
  readonly #reserveTx: Database.Transaction<(hold: HoldSpec) => ReserveResult>;
  readonly #settleTx: Database.Transaction<(entry: LedgerEntry) => SettleResult>;
  readonly #saveResponseAlone: Database.Transaction<(record: ResponseRecord, itemIds: readonly string[]) => void>;
  /** Holds and settlements share a commit per event-loop turn (group-commit.ts). */
  readonly #writes: GroupCommit;

  constructor(file: string) {
    if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true });
    this.#db = openDatabase(file);
    this.#db.defaultSafeIntegers(true);
    // busy_timeout first: switching a new file to WAL takes a lock another process may hold.
    this.#db.pragma('busy_timeout = 5000');
    useWal(this.#db);
    this.#db.pragma('synchronous = NORMAL');
    this.#db.pragma('foreign_keys = ON');
    this.#reserveTx = this.#db.transaction((hold: HoldSpec) => this.#reserve(hold));
    this.#settleTx = this.#db.transaction((entry: LedgerEntry) => this.#settle(entry));
    this.#saveResponseAlone = this.#db.transaction((record: ResponseRecord, itemIds: readonly string[]) => this.#saveResponseTx(record, itemIds));
    this.#writes = new GroupCommit(this.#db);
  }

  #sql(text: string): Database.Statement {
    let statement = this.#statements.get(text);
    if (statement === undefined) {
      statement = this.#db.prepare(text);
      this.#statements.set(text, statement);
    }
    return statement;
  }

  async migrate(): Promise<void> {
    // One IMMEDIATE transaction, versions read inside it: processes opening a new file together
    // (`serve --workers`) take turns, and each sees what the one before applied.
    this.#db
      .transaction(() => {
        this.#db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
        const applied = new Set(this.#db.prepare('SELECT version FROM schema_migrations').all().map((r) => Number((r as Row)['version'])));
        for (const migration of MIGRATIONS) {
          if (applied.has(migration.version)) continue;
          this.#db.exec(migration.sql);
          this.#db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(migration.version, now());
        }
      })
      .immediate();
  }

  async syncConfigKeys(keys: readonly ConfigKeySpec[]): Promise<void> {
    const db = this.#db;
    db.transaction(() => {
      const listed = new Set(keys.map((k) => k.sha256));
      for (const key of keys) {
        const existing = this.#sql('SELECT keys.id, c.balance FROM keys JOIN key_counters c ON c.key_id = keys.id WHERE sha256 = ?').get(key.sha256) as Row | undefined;
        if (!existing) {
          this.#insertKey({ ...key, prefix: `sha256:${key.sha256.slice(0, 8)}` }, 'config');
          continue;
        }
        // balance_usd is a starting balance: set once, never reset by later edits of the YAML. Removing
        // it makes the key unlimited; adding it to an unlimited key starts its balance.
        const balance = key.balance === null ? null : existing['balance'] === null ? key.balance : (existing['balance'] as bigint);
        this.#sql(
          'UPDATE keys SET name = ?, models = ?, rpm = ?, tpm = ?, concurrency = ?, removed = 0, updated_at = ? WHERE id = ?',
        ).run(key.name, json(key.models), key.limits.rpm, key.limits.tpm, key.limits.concurrency, now(), existing['id']);
        this.#sql('UPDATE key_counters SET balance = ? WHERE key_id = ?').run(balance, existing['id']);
      }
      for (const row of this.#sql("SELECT id, sha256 FROM keys WHERE source = 'config' AND removed = 0").all() as Row[]) {
        if (!listed.has(String(row['sha256']))) this.#sql('UPDATE keys SET removed = 1, updated_at = ? WHERE id = ?').run(now(), row['id']);
      }
      this.#bumpKeys();
    }).immediate();
  }

  async createKey(spec: NewKeySpec): Promise<KeyRecord> {
    this.#db.transaction(() => {
      this.#insertKey(spec, 'store');
      this.#bumpKeys();
    }).immediate();
    return this.#keyByName(spec.name);
  }

  /** A new key and its counters row (migration 9), in the caller's transaction: KEY_ROWS finds neither without the other. */
  #insertKey(spec: NewKeySpec, source: 'config' | 'store'): void {
    const added = this.#sql(
      `INSERT INTO keys (name, sha256, prefix, source, models, rpm, tpm, concurrency, disabled, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)`,
    ).run(spec.name, spec.sha256, spec.prefix, source, json(spec.models), spec.limits.rpm, spec.limits.tpm, spec.limits.concurrency, now(), now());
    this.#sql('INSERT INTO key_counters (key_id, balance) VALUES (?, ?)').run(added.lastInsertRowid, spec.balance);
  }

  async findKey(sha256: string): Promise<KeyRecord | undefined> {
    const row = this.#sql(`${KEY_ROWS} WHERE sha256 = ?`).get(sha256) as Row | undefined;
    return row ? toKeyRecord(row) : undefined;
  }

  async keyById(id: number): Promise<KeyRecord | undefined> {
    const row = this.#sql(`${KEY_ROWS} WHERE keys.id = ?`).get(id) as Row | undefined;
    return row ? toKeyRecord(row) : undefined;
  }

  async listKeys(): Promise<KeyRecord[]> {
    return (this.#sql(`${KEY_ROWS} ORDER BY keys.id`).all() as Row[]).map(toKeyRecord);
  }

  async topUp(name: string, amount: Pico): Promise<KeyRecord> {
    this.#db.transaction(() => {
      const key = this.#keyByName(name);
      if (key.balance === null) throw new RangeError(`key "${name}" is unlimited; it has no balance to top up`);
      if (key.balance + amount > MAX_BALANCE) throw new RangeError(`the balance would exceed the per-key maximum of $${picoToUsdText(MAX_BALANCE)}`);
      this.#sql('UPDATE key_counters SET balance = balance + ? WHERE key_id = ?').run(amount, key.id);
      this.#sql('UPDATE keys SET updated_at = ? WHERE id = ?').run(now(), key.id);
      this.#bumpKeys();
    }).immediate();
    return this.#keyByName(name);
  }

  async setDisabled(name: string, disabled: boolean): Promise<KeyRecord> {
    this.#db.transaction(() => {
      const key = this.#keyByName(name);
      this.#sql('UPDATE keys SET disabled = ?, updated_at = ? WHERE id = ?').run(disabled ? 1 : 0, now(), key.id);
      this.#bumpKeys();
    }).immediate();
    return this.#keyByName(name);
  }

  async keysVersion(): Promise<string> {
    return String((this.#sql("SELECT value FROM meta WHERE name = 'keys_version'").get() as Row)['value']);
  }

  // Not async functions: the group commit's own promise is the answer. An async wrapper returning
  // it added a promise and two microtask turns to every hold and every settlement (issue #17).
  reserve(hold: HoldSpec): Promise<ReserveResult> {
    return this.#writes.submit(() => this.#reserveTx(hold), () => this.#reserve(hold));
  }

  settle(entry: LedgerEntry): Promise<SettleResult> {
    return this.#writes.submit(() => this.#settleTx(entry), () => this.#settle(entry));
  }

  #reserve(hold: HoldSpec): ReserveResult {
    const taken = this.#sql('UPDATE key_counters SET held = held + ? WHERE key_id = ? AND (balance IS NULL OR balance - held >= ?)').run(hold.amount, hold.keyId, hold.amount);
    if (taken.changes === 0) {
      const key = this.#sql('SELECT balance, held FROM key_counters WHERE key_id = ?').get(hold.keyId) as Row;
      return { ok: false, available: (key['balance'] as bigint) - (key['held'] as bigint) };
    }
    this.#sql('INSERT INTO holds (request_id, key_id, amount, input_cost, model, provider, instance, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)').run(
      hold.requestId, hold.keyId, hold.amount, hold.inputCost, hold.model, hold.provider, hold.instanceId, now(),
    );
    return { ok: true };
  }

  #settle(entry: LedgerEntry): SettleResult {
    // Four statements where there were seven (issue #17): the hold is taken with RETURNING, and the
    // key's held and balance change in one UPDATE. A request's hold and its ledger row never exist
    // together (both change in this one transaction), so only a request without a hold can be a
    // retried settlement: the idempotency check runs only then. Idempotent as before: a retried
    // settlement that was in fact written returns what it charged.
    const hold = this.#sql('DELETE FROM holds WHERE request_id = ? RETURNING amount').get(entry.requestId) as Row | undefined;
    if (!hold) {
      const done = this.#sql('SELECT charged, uncollected FROM ledger WHERE request_id = ?').get(entry.requestId) as Row | undefined;
      if (done) return { charged: done['charged'] as bigint, uncollected: done['uncollected'] as bigint };
    }
    const released = hold ? (hold['amount'] as bigint) : 0n;
    const key = this.#sql('SELECT balance, held FROM key_counters WHERE key_id = ?').get(entry.keyId) as Row;
    const balance = key['balance'] as bigint | null;
    // Never below zero: what the key cannot pay is recorded as uncollected, not taken from other holds.
    const free = balance === null ? entry.cost : max0(balance - ((key['held'] as bigint) - released));
    const charged = entry.cost < free ? entry.cost : free;
    this.#sql('UPDATE key_counters SET held = held - ?, balance = CASE WHEN balance IS NULL THEN NULL ELSE balance - ? END, spent = spent + ?, requests = requests + 1 WHERE key_id = ?').run(
      released, charged, charged, entry.keyId,
    );
    const u = entry.usage;
    const started = isoTime(entry.startedAtMs);
    const uncollected = entry.cost - charged;
    const estimated = entry.estimated ? 1 : 0;
    // A text request's media counts are all 0, the columns' default: its row leaves them out, seven
    // values fewer to bind and convert (issue #17, twenty-eighth session). Arguments, not an array:
    // better-sqlite3 reads an array's elements one API call at a time.
    if (!u.inputImage && !u.outputImage && !u.images && !u.characters && !u.inputAudio && !u.outputAudio && !u.audioMs) {
      this.#sql(TEXT_LEDGER_ROW).run(
        entry.requestId, entry.keyId, entry.endpoint, entry.model, entry.provider, entry.upstreamModel, entry.route, u.input, u.output, u.cacheRead,
        u.cacheWrite, u.reasoning, entry.cost, charged, uncollected, entry.status, entry.outcome, estimated, started, entry.firstByteMs, entry.durationMs,
      );
    } else {
      this.#sql(LEDGER_ROW).run(
        entry.requestId, entry.keyId, entry.endpoint, entry.model, entry.provider, entry.upstreamModel, entry.route, u.input, u.output, u.cacheRead,
        u.cacheWrite, u.reasoning, entry.cost, charged, uncollected, entry.status, entry.outcome, estimated, started, entry.firstByteMs, entry.durationMs,
        u.inputImage ?? 0, u.outputImage ?? 0, u.images ?? 0, u.characters ?? 0, u.inputAudio ?? 0, u.outputAudio ?? 0, u.audioMs ?? 0,
      );
    }
    return { charged, uncollected };
  }

  async generation(requestId: string, keyId: number): Promise<LedgerRow | undefined> {
    const row = this.#sql('SELECT ledger.*, keys.name AS key_name FROM ledger JOIN keys ON keys.id = ledger.key_id WHERE request_id = ? AND key_id = ?')
      .get(requestId, keyId) as Row | undefined;
    return row ? toLedgerRow(row) : undefined;
  }

  async saveResponse(record: ResponseRecord, itemIds: readonly string[]): Promise<void> {
    // In the turn's shared commit, as holds and settlements are: one per request on Responses (issue #14).
    // In its own savepoint when the batch runs again after a failure, as a hold is: a failed item
    // INSERT must not leave the response row behind.
    await this.#writes.submit(() => this.#saveResponseAlone(record, itemIds), () => this.#saveResponseTx(record, itemIds));
  }

  #saveResponseTx(record: ResponseRecord, itemIds: readonly string[]): void {
    // A response id is saved once (an upstream's, or one minted per request), and its items'
    // REPLACE re-points any that moved: no delete first, one statement less per response.
    this.#sql('INSERT OR REPLACE INTO responses (id, key_id, provider, model, context_tokens, body, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)').run(
      record.id, record.keyId, record.provider, record.model, record.contextTokens, record.body ?? null, record.createdAt.toISOString(), record.expiresAt.toISOString(),
    );
    for (const itemId of itemIds) this.#sql('INSERT OR REPLACE INTO response_items (item_id, response_id) VALUES (?, ?)').run(itemId, record.id);
  }

  async findResponse(id: string, keyId: number, now: Date): Promise<ResponseRecord | undefined> {
    const row = this.#sql('SELECT * FROM responses WHERE id = ? AND key_id = ? AND expires_at > ?').get(id, keyId, now.toISOString()) as Row | undefined;
    return row ? toResponseRecord(row) : undefined;
  }

  async findResponseOfItem(itemId: string, keyId: number, now: Date): Promise<ResponseRecord | undefined> {
    const row = this.#sql(
      'SELECT responses.* FROM response_items JOIN responses ON responses.id = response_items.response_id WHERE item_id = ? AND key_id = ? AND expires_at > ?',
    ).get(itemId, keyId, now.toISOString()) as Row | undefined;
    return row ? toResponseRecord(row) : undefined;
  }

  async deleteResponse(id: string, keyId: number): Promise<boolean> {
    const owned = this.#sql('SELECT 1 FROM responses WHERE id = ? AND key_id = ?').get(id, keyId) !== undefined;
    if (!owned) return false;
    this.#sql('DELETE FROM response_items WHERE response_id = ?').run(id);
    return this.#sql('DELETE FROM responses WHERE id = ? AND key_id = ?').run(id, keyId).changes > 0;
  }

  async purgeResponses(now: Date): Promise<number> {
    this.#sql('DELETE FROM response_items WHERE response_id IN (SELECT id FROM responses WHERE expires_at <= ?)').run(now.toISOString());
    return this.#sql('DELETE FROM responses WHERE expires_at <= ?').run(now.toISOString()).changes;
  }

  async usage(query: UsageQuery): Promise<LedgerRow[]> {
    const rows = this.#sql(
        `SELECT ledger.*, keys.name AS key_name FROM ledger JOIN keys ON keys.id = ledger.key_id
         WHERE (@keyId IS NULL OR key_id = @keyId) AND (@since IS NULL OR started_at >= @since) AND (@until IS NULL OR started_at < @until)
           AND (@requestId IS NULL OR request_id = @requestId)
         ORDER BY started_at DESC LIMIT @limit`,
      )
      .all({
        keyId: query.keyId ?? null, since: query.since?.toISOString() ?? null, until: query.until?.toISOString() ?? null,
        requestId: query.requestId ?? null, limit: query.limit,
      });
    return (rows as Row[]).map(toLedgerRow);
  }

  async usageSeries(query: SeriesQuery): Promise<SeriesPoint[]> {
    // started_at is ISO 8601 text, which strftime reads (the Z included). The width is bound as a
    // bigint, an INTEGER, so that the division truncates: a number would bind as a REAL.
    const rows = this.#sql(
      `SELECT CAST(strftime('%s', started_at) AS INTEGER) / @bucket * @bucket AS bucket, ${SERIES_GROUP[query.by]} AS grp, ${SERIES_SUMS}
       FROM ledger JOIN keys ON keys.id = ledger.key_id WHERE started_at >= @since GROUP BY 1, 2 ORDER BY 1, 2`,
    ).all({ bucket: BigInt(query.bucketSeconds), since: query.since.toISOString() });
    return (rows as Row[]).map(toSeriesPoint);
  }

  async recordAudit(entry: AuditEntry): Promise<void> {
    this.#sql('INSERT INTO audit (at, actor, channel, client, action, key_name, amount, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)').run(
      now(), entry.actor, entry.channel, entry.client, entry.action, entry.keyName, entry.amount, entry.detail,
    );
  }

  async auditLog(limit: number): Promise<AuditRow[]> {
    return (this.#sql('SELECT * FROM audit ORDER BY id DESC LIMIT ?').all(limit) as Row[]).map(toAuditRow);
  }

  async registerInstance(instance: InstanceInfo): Promise<void> {
    this.#sql(
      `INSERT INTO instances (id, host, pid, started_at, heartbeat_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`,
    ).run(instance.id, instance.host, instance.pid, now(), now());
  }

  async heartbeat(instance: InstanceInfo): Promise<void> {
    await this.registerInstance(instance);
  }

  async reconcile(alive: (instance: InstanceInfo) => boolean, staleBefore: Date): Promise<number> {
    return this.#db.transaction(() => {
      const states = this.#instanceStates(alive, staleBefore);
      const dead = [...states].filter(([, live]) => !live).map(([id]) => id);
      // Holds of dead instances, and of instances no longer registered at all.
      const holds = (this.#sql('SELECT * FROM holds').all() as Row[]).filter((h) => states.get(String(h['instance'])) !== true);
      for (const hold of holds) this.#settle(interruptedHold(hold));
      for (const id of dead) this.#sql('DELETE FROM instances WHERE id = ?').run(id);
      return holds.length;
    }).immediate();
  }

  async instances(alive: (instance: InstanceInfo) => boolean, staleBefore: Date): Promise<Map<string, boolean>> {
    return this.#instanceStates(alive, staleBefore);
  }

  #instanceStates(alive: (instance: InstanceInfo) => boolean, staleBefore: Date): Map<string, boolean> {
    const stale = staleBefore.toISOString();
    return instanceStates(this.#sql('SELECT id, host, pid, heartbeat_at FROM instances').all() as Row[], alive, (i) => String(i['heartbeat_at']) < stale);
  }

  async close(): Promise<void> {
    this.#writes.flush();
    this.#db.close();
  }

  #keyByName(name: string): KeyRecord {
    const row = this.#sql(`${KEY_ROWS} WHERE name = ?`).get(name) as Row | undefined;
    if (!row) throw new KeyNotFoundError(name);
    return toKeyRecord(row);
  }

  #bumpKeys(): void {
    this.#sql("UPDATE meta SET value = value + 1 WHERE name = 'keys_version'").run();
  }
}

/**
 * Switches the file to WAL (it stays so: later opens find it set). Processes opening a new file at
 * the same instant (`serve --workers`) can be refused the switch at once, without the busy
 * handler's wait: retried for up to 5 s (review of issue #7).
 */
function useWal(db: Database.Database): void {
  for (let attempt = 0; ; attempt++) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if (attempt >= 50 || !(err instanceof Error) || !/database is locked|SQLITE_BUSY/i.test(`${err.message} ${(err as { code?: string }).code ?? ''}`)) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  }
}

/**
 * A key's row with its counters (migration 9), as toKeyRecord reads it. An inner join: a key
 * without its counters row is no key at all (refused as unknown), so keys are added only by
 * #insertKey, which writes both.
 */
const KEY_ROWS = `SELECT keys.id, name, sha256, prefix, source, models, rpm, tpm, concurrency, disabled, removed, c.balance, c.held, c.spent, c.requests
  FROM keys JOIN key_counters c ON c.key_id = keys.id`;

/**
 * A ledger row, and a text request's row, which leaves the media counts (issue #13) at their
 * default 0. Made once: #sql finds a statement by its text, and a string built per call would be
 * hashed afresh each time.
 */
const LEDGER_COLUMNS = `request_id, key_id, endpoint, model, provider, upstream_model, route, input_tokens, output_tokens, cache_read_tokens,
  cache_write_tokens, reasoning_tokens, cost, charged, uncollected, status, outcome, estimated, started_at, first_byte_ms, duration_ms`;
const LEDGER_VALUES = Array.from({ length: 21 }, () => '?').join(', ');
const TEXT_LEDGER_ROW = `INSERT INTO ledger (${LEDGER_COLUMNS}) VALUES (${LEDGER_VALUES})`;
const LEDGER_ROW = `INSERT INTO ledger (${LEDGER_COLUMNS}, input_image_tokens, output_image_tokens, images, characters, input_audio_tokens, output_audio_tokens,
  audio_ms) VALUES (${LEDGER_VALUES}, ?, ?, ?, ?, ?, ?, ?)`;
/** The store's timestamps (a hold's `created_at` on every request among them): toISOString's text, formatted once a second (util/iso-time.ts). */
const now = (): string => isoTime(Date.now());
const json = (value: readonly string[] | null): string | null => (value === null ? null : JSON.stringify(value));
const max0 = (value: bigint): bigint => (value > 0n ? value : 0n);
