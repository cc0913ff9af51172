import { SqliteStore } from './sqlite/sqlite-store.ts';
import type { Store } from './store.ts';

/** Opens the store a config's `storage.url` names (already made absolute by the config loader), migrated. */
export async function openStore(url: string): Promise<Store> {
  const store = await storeFor(url);
  try {
    await store.migrate();
  } catch (err) {
    await store.close().catch(() => undefined);
    throw err;
  }
  return store;
}

async function storeFor(url: string): Promise<Store> {
  if (url.startsWith('sqlite://')) return new SqliteStore(url.slice('sqlite://'.length));
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    // Loaded on use: a SQLite deployment (the default) never pays for the PostgreSQL client.
    const { PostgresStore } = await import('./postgres/postgres-store.ts');
    return new PostgresStore(url);
  }
  throw new Error(`storage.url: ${url.split(':')[0]} storage is not supported; use sqlite://<path> or postgres://…`);
}
