/**
 * Versioned schema migrations, applied in order, each once, in a transaction. Never edit a
 * migration that has shipped: add the next one. Money columns are INTEGER pico-dollars.
 */
export const MIGRATIONS: readonly { readonly version: number; readonly sql: string }[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE keys (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        sha256 TEXT NOT NULL UNIQUE,
        prefix TEXT NOT NULL,
        source TEXT NOT NULL CHECK (source IN ('config', 'store')),
        balance INTEGER,
        held INTEGER NOT NULL DEFAULT 0 CHECK (held >= 0),
        spent INTEGER NOT NULL DEFAULT 0,
        requests INTEGER NOT NULL DEFAULT 0,
        models TEXT,
        rpm INTEGER,
        disabled INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        CHECK (balance IS NULL OR balance >= 0)
      );
      CREATE TABLE holds (
        request_id TEXT PRIMARY KEY,
        key_id INTEGER NOT NULL REFERENCES keys(id),
        amount INTEGER NOT NULL CHECK (amount >= 0),
        input_cost INTEGER NOT NULL,
        model TEXT NOT NULL,
        provider TEXT NOT NULL,
        instance TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE TABLE ledger (
        request_id TEXT PRIMARY KEY,
        key_id INTEGER NOT NULL REFERENCES keys(id),
        endpoint TEXT,
        model TEXT,
        provider TEXT,
        upstream_model TEXT,
        route TEXT,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        cache_read_tokens INTEGER NOT NULL,
        cache_write_tokens INTEGER NOT NULL,
        reasoning_tokens INTEGER NOT NULL,
        cost INTEGER NOT NULL,
        charged INTEGER NOT NULL,
        uncollected INTEGER NOT NULL,
        status INTEGER NOT NULL,
        outcome TEXT NOT NULL,
        estimated INTEGER NOT NULL,
        started_at TEXT NOT NULL,
        first_byte_ms REAL,
        duration_ms REAL NOT NULL
      );
      CREATE INDEX ledger_by_key_time ON ledger (key_id, started_at);
      CREATE TABLE instances (
        id TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        started_at TEXT NOT NULL,
        heartbeat_at TEXT NOT NULL
      );
      CREATE TABLE meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
      INSERT INTO meta (name, value) VALUES ('keys_version', 0);
    `,
  },
  {
    // A YAML key taken out of the file is switched off apart from an operator's \`disabled\`, so
    // putting it back does not undo a disable (a leaked key stays off across restarts).
    version: 2,
    sql: `ALTER TABLE keys ADD COLUMN removed INTEGER NOT NULL DEFAULT 0;`,
  },
  {
    // Per-key limits beside v1's rpm (issue #5); null means the limit does not apply.
    version: 3,
    sql: `
      ALTER TABLE keys ADD COLUMN tpm INTEGER;
      ALTER TABLE keys ADD COLUMN concurrency INTEGER;
    `,
  },
  {
    // Image and audio tokens, images drawn and characters spoken, each at its own price (issue #13); 0 for text.
    version: 4,
    sql: `
      ALTER TABLE ledger ADD COLUMN input_image_tokens INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE ledger ADD COLUMN output_image_tokens INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE ledger ADD COLUMN images INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE ledger ADD COLUMN characters INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE ledger ADD COLUMN input_audio_tokens INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE ledger ADD COLUMN output_audio_tokens INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    // Milliseconds of audio transcribed, for models priced by the minute (issue #13).
    version: 5,
    sql: `ALTER TABLE ledger ADD COLUMN audio_ms INTEGER NOT NULL DEFAULT 0;`,
  },
  {
    // Which upstream holds each response a key made natively (issue #14).
    version: 6,
    sql: `
      CREATE TABLE responses (
        id TEXT PRIMARY KEY,
        key_id INTEGER NOT NULL REFERENCES keys(id),
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        context_tokens INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
      );
      CREATE INDEX responses_expiry ON responses (expires_at);
      CREATE TABLE response_items (
        item_id TEXT PRIMARY KEY,
        response_id TEXT NOT NULL REFERENCES responses(id) ON DELETE CASCADE
      );
      CREATE INDEX response_items_response ON response_items (response_id);
    `,
  },
  {
    // The input and output of each response Junction keeps itself, for translated routes (issue #14).
    version: 7,
    sql: `ALTER TABLE responses ADD COLUMN body TEXT;`,
  },
  {
    // The dashboard (issue #16): every admin action as its own row (who, what, when; never a
    // key), and the ledger by time, which its charts and request list read newest first.
    version: 8,
    sql: `
      CREATE TABLE audit (
        id INTEGER PRIMARY KEY,
        at TEXT NOT NULL,
        actor TEXT NOT NULL,
        channel TEXT NOT NULL CHECK (channel IN ('api', 'dashboard', 'cli')),
        client TEXT,
        action TEXT NOT NULL,
        key_name TEXT,
        amount INTEGER,
        detail TEXT
      );
      CREATE INDEX ledger_by_time ON ledger (started_at);
    `,
  },
  {
    // The counters every request changes, in a narrow table of their own. SQLite rewrites a whole
    // row on UPDATE, and a request's hold and settlement each updated the keys row, 17 columns with
    // its name, hash and settings: 5.3k instructions a request more than a narrow row's
    // (issue #17, bench/ledger-sql.ts). The old columns are renamed rather than dropped (SQLite
    // cannot drop a column a CHECK names) and cleared, so nothing reads a stale balance: an older
    // Junction opened on this file fails at its first hold (no such column) instead of spending.
    version: 9,
    sql: `
      CREATE TABLE key_counters (
        key_id INTEGER PRIMARY KEY REFERENCES keys(id),
        balance INTEGER CHECK (balance IS NULL OR balance >= 0),
        held INTEGER NOT NULL DEFAULT 0 CHECK (held >= 0),
        spent INTEGER NOT NULL DEFAULT 0,
        requests INTEGER NOT NULL DEFAULT 0
      );
      INSERT INTO key_counters (key_id, balance, held, spent, requests) SELECT id, balance, held, spent, requests FROM keys;
      ALTER TABLE keys RENAME COLUMN balance TO retired_balance;
      ALTER TABLE keys RENAME COLUMN held TO retired_held;
      ALTER TABLE keys RENAME COLUMN spent TO retired_spent;
      ALTER TABLE keys RENAME COLUMN requests TO retired_requests;
      UPDATE keys SET retired_balance = NULL, retired_held = 0, retired_spent = 0, retired_requests = 0;
    `,
  },
];
