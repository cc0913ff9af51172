import pg from 'pg';
import { MAX_BALANCE, picoToUsdText } from '../../billing/money.ts';
import { instanceStates, interruptedHold, SERIES_GROUP, SERIES_SUMS, toAuditRow, toKeyRecord, toLedgerRow, toResponseRecord, toSeriesPoint, type Row } from '../rows.ts';
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
import { PG_MIGRATIONS } from './migrations.ts';

type Client = pg.Pool | pg.PoolClient;

/** BIGINT (int8) comes back as bigint, not as a string or a rounded number: it is money. */
const INT8_OID = 20;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary' ? (value: string) => BigInt(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};
/** Any fixed number: instances starting together take turns at migrating and syncing keys. */
const SCHEMA_LOCK = 0x6a756e63; // "junc"

/**
 * The shared store (issue #7): PostgreSQL through `pg`, for several processes and machines
 * sharing one ledger. Same behaviour as the SQLite store. A hold is one statement, atomic across
 * every instance: the key row's `held` only grows while `balance - held` covers it. A settlement
 * is one transaction that first locks its key's row, so settlements of one key run one at a time
 * and a retried one finds its ledger row and charges nothing twice.
 */
export class PostgresStore implements Store {
  readonly #pool: pg.Pool;

  constructor(url: string, options: { readonly maxConnections?: number } = {}) {
    this.#pool = new pg.Pool({ connectionString: url, max: options.maxConnections ?? 10, types });
    // An idle connection dropped by the server (a restart, a failover) is discarded by the pool;
    // without a listener its 'error' would end the process. The next query opens a new one.
    this.#pool.on('error', () => undefined);
  }

  async migrate(): Promise<void> {
    await this.#tx(async (db) => {
      await db.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
      await db.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)');
      const applied = new Set((await db.query('SELECT version FROM schema_migrations')).rows.map((r: Row) => Number(r['version'])));
      for (const migration of PG_MIGRATIONS) {
        if (applied.has(migration.version)) continue;
        await db.query(migration.sql);
        await db.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, now())', [migration.version]);
      }
    });
  }

  async syncConfigKeys(keys: readonly ConfigKeySpec[]): Promise<void> {
    await this.#tx(async (db) => {
      await db.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
      for (const key of keys) {
        const existing = (await db.query('SELECT id, balance FROM keys WHERE sha256 = $1 FOR UPDATE', [key.sha256])).rows[0] as Row | undefined;
        const { rpm, tpm, concurrency } = key.limits;
        if (!existing) {
          await db.query(
            `INSERT INTO keys (name, sha256, prefix, source, balance, models, rpm, tpm, concurrency, created_at, updated_at)
             VALUES ($1, $2, $3, 'config', $4, $5, $6, $7, $8, now(), now())`,
            [key.name, key.sha256, `sha256:${key.sha256.slice(0, 8)}`, key.balance, json(key.models), rpm, tpm, concurrency],
          );
          continue;
        }
        // balance_usd is a starting balance: set once, never reset by later edits of the YAML.
        const balance = key.balance === null ? null : existing['balance'] === null ? key.balance : (existing['balance'] as bigint);
        await db.query(
          'UPDATE keys SET name = $1, balance = $2, models = $3, rpm = $4, tpm = $5, concurrency = $6, removed = 0, updated_at = now() WHERE id = $7',
          [key.name, balance, json(key.models), rpm, tpm, concurrency, existing['id']],
        );
      }
      await db.query("UPDATE keys SET removed = 1, updated_at = now() WHERE source = 'config' AND removed = 0 AND NOT (sha256 = ANY($1))", [
        keys.map((k) => k.sha256),
      ]);
      await bumpKeys(db);
    });
  }

  async createKey(spec: NewKeySpec): Promise<KeyRecord> {
    await this.#tx(async (db) => {
      await db.query(
        `INSERT INTO keys (name, sha256, prefix, source, balance, models, rpm, tpm, concurrency, created_at, updated_at)
         VALUES ($1, $2, $3, 'store', $4, $5, $6, $7, $8, now(), now())`,
        [spec.name, spec.sha256, spec.prefix, spec.balance, json(spec.models), spec.limits.rpm, spec.limits.tpm, spec.limits.concurrency],
      );
      await bumpKeys(db);
    });
    return keyByName(this.#pool, spec.name);
  }

  async findKey(sha256: string): Promise<KeyRecord | undefined> {
    return oneKey(await this.#pool.query('SELECT * FROM keys WHERE sha256 = $1', [sha256]));
  }

  async keyById(id: number): Promise<KeyRecord | undefined> {
    return oneKey(await this.#pool.query('SELECT * FROM keys WHERE id = $1', [id]));
  }

  async listKeys(): Promise<KeyRecord[]> {
    return (await this.#pool.query('SELECT * FROM keys ORDER BY id')).rows.map(toKeyRecord);
  }

  async topUp(name: string, amount: bigint): Promise<KeyRecord> {
    await this.#tx(async (db) => {
      const key = await keyByName(db, name, 'FOR UPDATE');
      if (key.balance === null) throw new RangeError(`key "${name}" is unlimited; it has no balance to top up`);
      if (key.balance + amount > MAX_BALANCE) throw new RangeError(`the balance would exceed the per-key maximum of $${picoToUsdText(MAX_BALANCE)}`);
      await db.query('UPDATE keys SET balance = balance + $1, updated_at = now() WHERE id = $2', [amount, key.id]);
      await bumpKeys(db);
    });
    return keyByName(this.#pool, name);
  }

  async setDisabled(name: string, disabled: boolean): Promise<KeyRecord> {
    await this.#tx(async (db) => {
      const key = await keyByName(db, name, 'FOR UPDATE');
      await db.query('UPDATE keys SET disabled = $1, updated_at = now() WHERE id = $2', [disabled ? 1 : 0, key.id]);
      await bumpKeys(db);
    });
    return keyByName(this.#pool, name);
  }

  async keysVersion(): Promise<string> {
    return String(((await this.#pool.query("SELECT value FROM meta WHERE name = 'keys_version'")).rows[0] as Row)['value']);
  }

  async reserve(hold: HoldSpec): Promise<ReserveResult> {
    // One statement, so one atomic step: the row lock makes a concurrent hold on the same key wait,
    // then re-check `balance - held` against what that one took.
    const taken = await this.#pool.query(
      `WITH taken AS (
         UPDATE keys SET held = held + $3 WHERE id = $2 AND (balance IS NULL OR balance - held >= $3) RETURNING id
       )
       INSERT INTO holds (request_id, key_id, amount, input_cost, model, provider, instance, created_at)
       SELECT $1, $2, $3, $4, $5, $6, $7, now() FROM taken`,
      [hold.requestId, hold.keyId, hold.amount, hold.inputCost, hold.model, hold.provider, hold.instanceId],
    );
    if (taken.rowCount === 1) return { ok: true };
    const key = (await this.#pool.query('SELECT balance, held FROM keys WHERE id = $1', [hold.keyId])).rows[0] as Row;
    return { ok: false, available: (key['balance'] as bigint) - (key['held'] as bigint) };
  }

  async settle(entry: LedgerEntry): Promise<SettleResult> {
    return this.#tx((db) => settleIn(db, entry));
  }

  async generation(requestId: string, keyId: number): Promise<LedgerRow | undefined> {
    const { rows } = await this.#pool.query(
      'SELECT ledger.*, keys.name AS key_name FROM ledger JOIN keys ON keys.id = ledger.key_id WHERE request_id = $1 AND key_id = $2',
      [requestId, keyId],
    );
    return rows[0] ? toLedgerRow(rows[0] as Row) : undefined;
  }

  async saveResponse(record: ResponseRecord, itemIds: readonly string[]): Promise<void> {
    await this.#pool.query(
      `INSERT INTO responses (id, key_id, provider, model, context_tokens, created_at, expires_at, body) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (id) DO UPDATE SET key_id = EXCLUDED.key_id, provider = EXCLUDED.provider, model = EXCLUDED.model,
         context_tokens = EXCLUDED.context_tokens, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at, body = EXCLUDED.body`,
      [record.id, record.keyId, record.provider, record.model, record.contextTokens, record.createdAt, record.expiresAt, record.body ?? null],
    );
    if (itemIds.length > 0) {
      await this.#pool.query(
        'INSERT INTO response_items (item_id, response_id) SELECT unnest($1::text[]), $2 ON CONFLICT (item_id) DO UPDATE SET response_id = EXCLUDED.response_id',
        [itemIds, record.id],
      );
    }
  }

  async findResponseOfItem(itemId: string, keyId: number, now: Date): Promise<ResponseRecord | undefined> {
    const { rows } = await this.#pool.query(
      'SELECT responses.* FROM response_items JOIN responses ON responses.id = response_items.response_id WHERE item_id = $1 AND key_id = $2 AND expires_at > $3',
      [itemId, keyId, now],
    );
    return rows[0] ? toResponseRecord(rows[0] as Row) : undefined;
  }

  async findResponse(id: string, keyId: number, now: Date): Promise<ResponseRecord | undefined> {
    const { rows } = await this.#pool.query('SELECT * FROM responses WHERE id = $1 AND key_id = $2 AND expires_at > $3', [id, keyId, now]);
    return rows[0] ? toResponseRecord(rows[0] as Row) : undefined;
  }

  async deleteResponse(id: string, keyId: number): Promise<boolean> {
    const { rowCount } = await this.#pool.query('DELETE FROM responses WHERE id = $1 AND key_id = $2', [id, keyId]);
    return (rowCount ?? 0) > 0;
  }

  async purgeResponses(now: Date): Promise<number> {
    const { rowCount } = await this.#pool.query('DELETE FROM responses WHERE expires_at <= $1', [now]);
    return rowCount ?? 0;
  }

  async usage(query: UsageQuery): Promise<LedgerRow[]> {
    const { rows } = await this.#pool.query(
      `SELECT ledger.*, keys.name AS key_name FROM ledger JOIN keys ON keys.id = ledger.key_id
       WHERE ($1::bigint IS NULL OR key_id = $1) AND ($2::timestamptz IS NULL OR started_at >= $2) AND ($3::timestamptz IS NULL OR started_at < $3)
         AND ($5::text IS NULL OR request_id = $5)
       ORDER BY started_at DESC LIMIT $4`,
      [query.keyId ?? null, query.since ?? null, query.until ?? null, query.limit, query.requestId ?? null],
    );
    return rows.map(toLedgerRow);
  }

  async usageSeries(query: SeriesQuery): Promise<SeriesPoint[]> {
    const { rows } = await this.#pool.query(
      `SELECT floor(extract(epoch FROM started_at) / $1::integer)::bigint * $1::integer AS bucket, ${SERIES_GROUP[query.by]} AS grp, ${SERIES_SUMS}
       FROM ledger JOIN keys ON keys.id = ledger.key_id WHERE started_at >= $2 GROUP BY 1, 2 ORDER BY 1, 2`,
      [query.bucketSeconds, query.since],
    );
    return (rows as Row[]).map(toSeriesPoint);
  }

  async recordAudit(entry: AuditEntry): Promise<void> {
    await this.#pool.query(
      'INSERT INTO audit (at, actor, channel, client, action, key_name, amount, detail) VALUES (now(), $1, $2, $3, $4, $5, $6, $7)',
      [entry.actor, entry.channel, entry.client, entry.action, entry.keyName, entry.amount, entry.detail],
    );
  }

  async auditLog(limit: number): Promise<AuditRow[]> {
    return ((await this.#pool.query('SELECT * FROM audit ORDER BY id DESC LIMIT $1', [limit])).rows as Row[]).map(toAuditRow);
  }

  async registerInstance(instance: InstanceInfo): Promise<void> {
    await this.#pool.query(
      `INSERT INTO instances (id, host, pid, started_at, heartbeat_at) VALUES ($1, $2, $3, now(), now())
       ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`,
      [instance.id, instance.host, instance.pid],
    );
  }

  async heartbeat(instance: InstanceInfo): Promise<void> {
    await this.registerInstance(instance);
  }

  async reconcile(alive: (instance: InstanceInfo) => boolean, staleBefore: Date): Promise<number> {
    return this.#tx(async (db) => {
      const states = await instancesIn(db, alive, staleBefore);
      const dead = [...states].filter(([, live]) => !live).map(([id]) => id);
      // Holds of dead instances, and of instances no longer registered at all. Locked, so two
      // instances reconciling at once do not both settle one hold (the second finds it gone).
      const holds = (
        await db.query('SELECT * FROM holds WHERE instance = ANY($1) OR instance NOT IN (SELECT id FROM instances) FOR UPDATE SKIP LOCKED', [dead])
      ).rows as Row[];
      for (const hold of holds) await settleIn(db, interruptedHold(hold));
      await db.query('DELETE FROM instances WHERE id = ANY($1)', [dead]);
      return holds.length;
    });
  }

  instances(alive: (instance: InstanceInfo) => boolean, staleBefore: Date): Promise<Map<string, boolean>> {
    return instancesIn(this.#pool, alive, staleBefore);
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }

  async #tx<T>(work: (db: pg.PoolClient) => Promise<T>): Promise<T> {
    const db = await this.#pool.connect();
    let broken = false;
    try {
      await db.query('BEGIN');
      const result = await work(db);
      await db.query('COMMIT');
      return result;
    } catch (err) {
      await db.query('ROLLBACK').catch(() => (broken = true));
      throw err;
    } finally {
      db.release(broken);
    }
  }
}

/** Releases the hold, charges what the key can pay, writes the ledger row: once per request id. */
async function settleIn(db: pg.PoolClient, entry: LedgerEntry): Promise<SettleResult> {
  // The key's row lock first: every settlement of this key waits its turn from here on.
  const key = (await db.query('SELECT balance, held FROM keys WHERE id = $1 FOR UPDATE', [entry.keyId])).rows[0] as Row | undefined;
  if (!key) throw new Error(`settlement for unknown key id ${entry.keyId}`);
  const done = (await db.query('SELECT charged, uncollected FROM ledger WHERE request_id = $1', [entry.requestId])).rows[0] as Row | undefined;
  if (done) return { charged: done['charged'] as bigint, uncollected: done['uncollected'] as bigint };
  const released = (await db.query('DELETE FROM holds WHERE request_id = $1 RETURNING amount', [entry.requestId])).rows[0] as Row | undefined;
  const held = (key['held'] as bigint) - ((released?.['amount'] as bigint | undefined) ?? 0n);
  const balance = key['balance'] as bigint | null;
  // Never below zero: what the key cannot pay is recorded as uncollected, not taken from other holds.
  const free = balance === null ? entry.cost : max0(balance - held);
  const charged = entry.cost < free ? entry.cost : free;
  await db.query(
    'UPDATE keys SET held = $1, balance = CASE WHEN balance IS NULL THEN NULL ELSE balance - $2 END, spent = spent + $2, requests = requests + 1 WHERE id = $3',
    [held, charged, entry.keyId],
  );
  const u = entry.usage;
  await db.query(
    `INSERT INTO ledger (request_id, key_id, endpoint, model, provider, upstream_model, route, input_tokens, output_tokens,
       cache_read_tokens, cache_write_tokens, reasoning_tokens, cost, charged, uncollected, status, outcome, estimated,
       started_at, first_byte_ms, duration_ms, input_image_tokens, output_image_tokens, images, characters, input_audio_tokens, output_audio_tokens, audio_ms)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28)`,
    [
      entry.requestId, entry.keyId, entry.endpoint, entry.model, entry.provider, entry.upstreamModel, entry.route,
      u.input, u.output, u.cacheRead, u.cacheWrite, u.reasoning, entry.cost, charged, entry.cost - charged,
      entry.status, entry.outcome, entry.estimated ? 1 : 0, new Date(entry.startedAtMs), entry.firstByteMs, entry.durationMs,
      u.inputImage ?? 0, u.outputImage ?? 0, u.images ?? 0, u.characters ?? 0, u.inputAudio ?? 0, u.outputAudio ?? 0, u.audioMs ?? 0,
    ],
  );
  return { charged, uncollected: entry.cost - charged };
}

async function keyByName(db: Client, name: string, lock = ''): Promise<KeyRecord> {
  const key = oneKey(await db.query(`SELECT * FROM keys WHERE name = $1 ${lock}`, [name]));
  if (!key) throw new KeyNotFoundError(name);
  return key;
}

/**
 * Instances, and whether each heartbeat is older than $1 ms by the database's clock, which wrote
 * it: a gateway whose own clock runs ahead must not judge every instance dead (review of issue #7).
 */
async function instancesIn(db: Client, alive: (instance: InstanceInfo) => boolean, staleBefore: Date): Promise<Map<string, boolean>> {
  const staleForMs = Math.max(0, Date.now() - staleBefore.getTime());
  const { rows } = await db.query("SELECT id, host, pid, heartbeat_at < now() - ($1::bigint * interval '1 millisecond') AS stale FROM instances", [staleForMs]);
  return instanceStates(rows as Row[], alive, (i) => i['stale'] === true);
}
const oneKey = (result: pg.QueryResult): KeyRecord | undefined => (result.rows[0] ? toKeyRecord(result.rows[0] as Row) : undefined);
const bumpKeys = (db: Client): Promise<unknown> => db.query("UPDATE meta SET value = value + 1 WHERE name = 'keys_version'");
const json = (value: readonly string[] | null): string | null => (value === null ? null : JSON.stringify(value));
const max0 = (value: bigint): bigint => (value > 0n ? value : 0n);
