import { interruptedEntry, type AuditRow, type InstanceInfo, type SeriesPoint, type KeyRecord, type LedgerEntry, type LedgerRow, type ResponseRecord } from './store.ts';

/**
 * A row as either backend returns it: better-sqlite3 with safe integers on gives INTEGER columns
 * as bigint; pg (with the int8 parser in postgres/pool.ts) gives BIGINT as bigint and TIMESTAMPTZ
 * as Date.
 */
export type Row = Record<string, unknown>;

const int = (value: unknown): number => Number(value);
// Never through Number: a balance above 2^53 pico-dollars ($9,007) would lose its last digits.
const money = (value: unknown): bigint =>
  typeof value === 'bigint' ? value : typeof value === 'string' ? BigInt(value) : BigInt(Number(value ?? 0));
const date = (value: unknown): Date => (value instanceof Date ? value : new Date(String(value)));
const text = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));
const limit = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

export function toKeyRecord(row: Row): KeyRecord {
  return {
    id: int(row['id']),
    name: String(row['name']),
    sha256: String(row['sha256']),
    prefix: String(row['prefix']),
    source: row['source'] === 'config' ? 'config' : 'store',
    balance: row['balance'] === null ? null : money(row['balance']),
    held: money(row['held']),
    spent: money(row['spent']),
    requests: int(row['requests']),
    models: row['models'] === null ? null : (JSON.parse(String(row['models'])) as string[]),
    limits: { rpm: limit(row['rpm']), tpm: limit(row['tpm']), concurrency: limit(row['concurrency']) },
    // Off either way: disabled by an operator, or a YAML key no longer in the file.
    disabled: int(row['disabled']) === 1 || int(row['removed']) === 1,
  };
}

export function toLedgerRow(row: Row): LedgerRow {
  return {
    requestId: String(row['request_id']),
    keyId: int(row['key_id']),
    keyName: String(row['key_name']),
    endpoint: text(row['endpoint']),
    model: text(row['model']),
    provider: text(row['provider']),
    upstreamModel: text(row['upstream_model']),
    route: text(row['route']),
    usage: {
      input: int(row['input_tokens']),
      output: int(row['output_tokens']),
      cacheRead: int(row['cache_read_tokens']),
      cacheWrite: int(row['cache_write_tokens']),
      reasoning: int(row['reasoning_tokens']),
      // Only where there are any, so a text request's usage reads as before (issue #13).
      ...(int(row['input_image_tokens']) > 0 && { inputImage: int(row['input_image_tokens']) }),
      ...(int(row['output_image_tokens']) > 0 && { outputImage: int(row['output_image_tokens']) }),
      ...(int(row['images']) > 0 && { images: int(row['images']) }),
      ...(int(row['characters']) > 0 && { characters: int(row['characters']) }),
      ...(int(row['input_audio_tokens']) > 0 && { inputAudio: int(row['input_audio_tokens']) }),
      ...(int(row['output_audio_tokens']) > 0 && { outputAudio: int(row['output_audio_tokens']) }),
      ...(int(row['audio_ms']) > 0 && { audioMs: int(row['audio_ms']) }),
    },
    cost: money(row['cost']),
    charged: money(row['charged']),
    uncollected: money(row['uncollected']),
    status: int(row['status']),
    outcome: String(row['outcome']),
    estimated: int(row['estimated']) === 1,
    startedAt: date(row['started_at']),
    firstByteMs: row['first_byte_ms'] === null ? null : Number(row['first_byte_ms']),
    durationMs: Number(row['duration_ms']),
  };
}

/** A `holds` row left by a dead instance, as the ledger entry that settles it. */
export function interruptedHold(row: Row): LedgerEntry {
  return interruptedEntry({
    requestId: String(row['request_id']),
    keyId: int(row['key_id']),
    model: String(row['model']),
    provider: String(row['provider']),
    inputCost: money(row['input_cost']),
    startedAtMs: date(row['created_at']).getTime(),
  });
}

/** Each `instances` row's id, and whether it is alive: by `alive`, and not `stale`. */
export function instanceStates(rows: readonly Row[], alive: (instance: InstanceInfo) => boolean, stale: (row: Row) => boolean): Map<string, boolean> {
  return new Map(rows.map((i) => [String(i['id']), !stale(i) && alive({ id: String(i['id']), host: String(i['host']), pid: int(i['pid']) })]));
}

/** A `responses` row, from either backend (issue #14). */
export function toResponseRecord(row: Row): ResponseRecord {
  return {
    id: text(row['id']) ?? '',
    keyId: int(row['key_id']),
    provider: text(row['provider']) ?? '',
    model: text(row['model']) ?? '',
    contextTokens: int(row['context_tokens']),
    ...(typeof row['body'] === 'string' && { body: row['body'] }),
    createdAt: new Date(row['created_at'] as string | Date),
    expiresAt: new Date(row['expires_at'] as string | Date),
  };
}

/** An `audit` row, from either backend (issue #16). */
export function toAuditRow(row: Row): AuditRow {
  const channel = String(row['channel']);
  return {
    id: int(row['id']),
    at: date(row['at']),
    actor: String(row['actor']),
    channel: channel === 'api' || channel === 'dashboard' ? channel : 'cli',
    client: text(row['client']),
    action: String(row['action']),
    keyName: text(row['key_name']),
    amount: row['amount'] === null || row['amount'] === undefined ? null : money(row['amount']),
    detail: text(row['detail']),
  };
}

/** One bucket of one group, as both backends' `usageSeries` query names its columns. */
export function toSeriesPoint(row: Row): SeriesPoint {
  return {
    bucket: new Date(int(row['bucket']) * 1000),
    group: String(row['grp']),
    requests: int(row['requests']),
    failed: int(row['failed']),
    charged: money(row['charged']),
    tokens: int(row['tokens']),
  };
}

/**
 * The SQL both backends share for `usageSeries`: the grouping column (a fixed expression per
 * `by`, never text from a request) and what a failure is.
 */
export const SERIES_GROUP = { model: "COALESCE(ledger.model, '(none)')", key: 'keys.name', provider: "COALESCE(ledger.provider, '(none)')" } as const;
export const SERIES_SUMS = `COUNT(*) AS requests,
  SUM(CASE WHEN ledger.status >= 500 OR (ledger.status < 400 AND ledger.outcome NOT IN ('ok', 'client_disconnected')) THEN 1 ELSE 0 END) AS failed,
  SUM(ledger.charged) AS charged,
  SUM(ledger.input_tokens + ledger.output_tokens + ledger.cache_read_tokens + ledger.cache_write_tokens) AS tokens`;
