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
