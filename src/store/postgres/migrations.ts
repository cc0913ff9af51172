/**
 * PostgreSQL's schema (issue #7): the SQLite schema's tables and columns, in PostgreSQL's types.
 * Money is BIGINT pico-dollars (read back as bigint), times are TIMESTAMPTZ, flags are SMALLINT
 * 0/1 so both backends share one row mapper (../rows.ts). Applied in order, each once, under an
 * advisory lock, so instances starting together migrate once. Never edit a shipped migration.
 */
export const PG_MIGRATIONS: readonly { readonly version: number; readonly sql: string }[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE keys (
        id BIGSERIAL PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        sha256 TEXT NOT NULL UNIQUE,
        prefix TEXT NOT NULL,
        source TEXT NOT NULL CHECK (source IN ('config', 'store')),
        balance BIGINT CHECK (balance IS NULL OR balance >= 0),
        held BIGINT NOT NULL DEFAULT 0 CHECK (held >= 0),
        spent BIGINT NOT NULL DEFAULT 0,
        requests BIGINT NOT NULL DEFAULT 0,
        models TEXT,
        rpm INTEGER,
        tpm INTEGER,
        concurrency INTEGER,
        disabled SMALLINT NOT NULL DEFAULT 0,
        removed SMALLINT NOT NULL DEFAULT 0,
        created_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL
      );
      CREATE TABLE holds (
        request_id TEXT PRIMARY KEY,
        key_id BIGINT NOT NULL REFERENCES keys(id),
        amount BIGINT NOT NULL CHECK (amount >= 0),
        input_cost BIGINT NOT NULL,
        model TEXT NOT NULL,
        provider TEXT NOT NULL,
        instance TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL
      );
      CREATE INDEX holds_by_instance ON holds (instance);
      CREATE TABLE ledger (
        request_id TEXT PRIMARY KEY,
        key_id BIGINT NOT NULL REFERENCES keys(id),
        endpoint TEXT,
        model TEXT,
        provider TEXT,
        upstream_model TEXT,
        route TEXT,
        input_tokens BIGINT NOT NULL,
        output_tokens BIGINT NOT NULL,
        cache_read_tokens BIGINT NOT NULL,
        cache_write_tokens BIGINT NOT NULL,
        reasoning_tokens BIGINT NOT NULL,
        cost BIGINT NOT NULL,
        charged BIGINT NOT NULL,
        uncollected BIGINT NOT NULL,
        status INTEGER NOT NULL,
        outcome TEXT NOT NULL,
        estimated SMALLINT NOT NULL,
        started_at TIMESTAMPTZ NOT NULL,
        first_byte_ms DOUBLE PRECISION,
        duration_ms DOUBLE PRECISION NOT NULL
      );
      CREATE INDEX ledger_by_key_time ON ledger (key_id, started_at);
      CREATE TABLE instances (
        id TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        started_at TIMESTAMPTZ NOT NULL,
        heartbeat_at TIMESTAMPTZ NOT NULL
      );
      CREATE TABLE meta (name TEXT PRIMARY KEY, value BIGINT NOT NULL);
      INSERT INTO meta (name, value) VALUES ('keys_version', 0);
    `,
  },
  {
    // Image and audio tokens, images drawn and characters spoken, each at its own price (issue #13); 0 for text.
    version: 2,
    sql: `
      ALTER TABLE ledger ADD COLUMN input_image_tokens BIGINT NOT NULL DEFAULT 0;
      ALTER TABLE ledger ADD COLUMN output_image_tokens BIGINT NOT NULL DEFAULT 0;
      ALTER TABLE ledger ADD COLUMN images INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE ledger ADD COLUMN characters BIGINT NOT NULL DEFAULT 0;
      ALTER TABLE ledger ADD COLUMN input_audio_tokens BIGINT NOT NULL DEFAULT 0;
      ALTER TABLE ledger ADD COLUMN output_audio_tokens BIGINT NOT NULL DEFAULT 0;
    `,
  },
  {
    // Milliseconds of audio transcribed, for models priced by the minute (issue #13).
    version: 3,
    sql: `ALTER TABLE ledger ADD COLUMN audio_ms BIGINT NOT NULL DEFAULT 0;`,
  },
  {
    // Which upstream holds each response a key made natively (issue #14).
    version: 4,
    sql: `
      CREATE TABLE responses (
        id TEXT PRIMARY KEY,
        key_id BIGINT NOT NULL REFERENCES keys(id),
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        context_tokens BIGINT NOT NULL DEFAULT 0,
        created_at TIMESTAMPTZ NOT NULL,
        expires_at TIMESTAMPTZ NOT NULL
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
    version: 5,
    sql: `ALTER TABLE responses ADD COLUMN body TEXT;`,
  },
  {
    // The dashboard (issue #16): every admin action as its own row (who, what, when; never a
    // key), and the ledger by time, which its charts and request list read newest first.
    version: 6,
    sql: `
      CREATE TABLE audit (
        id BIGSERIAL PRIMARY KEY,
        at TIMESTAMPTZ NOT NULL,
        actor TEXT NOT NULL,
        channel TEXT NOT NULL CHECK (channel IN ('api', 'dashboard', 'cli')),
        client TEXT,
        action TEXT NOT NULL,
        key_name TEXT,
        amount BIGINT,
        detail TEXT
      );
      CREATE INDEX ledger_by_time ON ledger (started_at);
    `,
  },
];
