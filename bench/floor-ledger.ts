// The floor's ledger (issue #17): its tables and statements, used by the floor itself
// (floor-server.ts) and by bench/ledger-sql.ts, which counts them beside Junction's. Same
// statements and indexes as Junction's ledger, on the narrower rows a floor needs. `prefix` names
// the tables apart when they sit beside Junction's in one file.

export const floorTables = (prefix = ''): string => `
  CREATE TABLE ${prefix}keys (id INTEGER PRIMARY KEY, sha256 TEXT NOT NULL UNIQUE, balance INTEGER, held INTEGER NOT NULL DEFAULT 0, spent INTEGER NOT NULL DEFAULT 0, requests INTEGER NOT NULL DEFAULT 0);
  CREATE TABLE ${prefix}holds (request_id TEXT PRIMARY KEY, key_id INTEGER NOT NULL, amount INTEGER NOT NULL, created_at TEXT NOT NULL);
  CREATE TABLE ${prefix}ledger (request_id TEXT PRIMARY KEY, key_id INTEGER NOT NULL, model TEXT, input_tokens INTEGER, output_tokens INTEGER,
    cost INTEGER NOT NULL, charged INTEGER NOT NULL, status INTEGER NOT NULL, started_at TEXT NOT NULL, duration_ms REAL);
  CREATE INDEX ${prefix}ledger_by_key_time ON ${prefix}ledger (key_id, started_at);
  CREATE INDEX ${prefix}ledger_by_time ON ${prefix}ledger (started_at);
`;

/** A hold is taken and written; a settlement releases it, reads the key, charges it and writes the row. */
export const floorStatements = (prefix = '') => ({
  take: `UPDATE ${prefix}keys SET held = held + ? WHERE id = ? AND (balance IS NULL OR balance - held >= ?)`,
  hold: `INSERT INTO ${prefix}holds VALUES (?, ?, ?, ?)`,
  release: `DELETE FROM ${prefix}holds WHERE request_id = ? RETURNING amount`,
  read: `SELECT balance, held FROM ${prefix}keys WHERE id = ?`,
  charge: `UPDATE ${prefix}keys SET held = held - ?, balance = balance - ?, spent = spent + ?, requests = requests + 1 WHERE id = ?`,
  row: `INSERT INTO ${prefix}ledger VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
});

// Junction's own statements (src/store/sqlite/sqlite-store.ts, word for word), on its migrated
// schema (MIGRATIONS): the rows the product keeps, written with the floor's own group commit
// (FLOOR_LEDGER=rows in floor-server.ts; bench/ledger-sql.ts counts them). A text request's row
// leaves its seven media columns to their defaults, as the store's does.
const LEDGER_COLUMNS = `request_id, key_id, endpoint, model, provider, upstream_model, route, input_tokens, output_tokens,
  cache_read_tokens, cache_write_tokens, reasoning_tokens, cost, charged, uncollected, status, outcome, estimated,
  started_at, first_byte_ms, duration_ms`;
const MEDIA_COLUMNS = 'input_image_tokens, output_image_tokens, images, characters, input_audio_tokens, output_audio_tokens, audio_ms';
export const productStatements = () => ({
  take: 'UPDATE key_counters SET held = held + ? WHERE key_id = ? AND (balance IS NULL OR balance - held >= ?)',
  hold: 'INSERT INTO holds (request_id, key_id, amount, input_cost, model, provider, instance, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  release: 'DELETE FROM holds WHERE request_id = ? RETURNING amount',
  read: 'SELECT balance, held FROM key_counters WHERE key_id = ?',
  charge: 'UPDATE key_counters SET held = held - ?, balance = CASE WHEN balance IS NULL THEN NULL ELSE balance - ? END, spent = spent + ?, requests = requests + 1 WHERE key_id = ?',
  row: `INSERT INTO ledger (${LEDGER_COLUMNS}) VALUES (${Array(21).fill('?').join(', ')})`,
  mediaRow: `INSERT INTO ledger (${LEDGER_COLUMNS}, ${MEDIA_COLUMNS}) VALUES (${Array(28).fill('?').join(', ')})`,
});
