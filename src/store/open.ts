import { PostgresStore } from './postgres/postgres-store.ts';
import { SqliteStore } from './sqlite/sqlite-store.ts';
import type { Store } from './store.ts';

/** Opens the store a config's `storage.url` names (already made absolute by the config loader), migrated. */
export async function openStore(url: string): Promise<Store> {
  const store = storeFor(url);
  try {
    await store.migrate();
  } catch (err) {
    await store.close().catch(() => undefined);
    throw err;
  }
  return store;
}

function storeFor(url: string): Store {
  if (url.startsWith('sqlite://')) return new SqliteStore(url.slice('sqlite://'.length));
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return new PostgresStore(url);
  throw new Error(`storage.url: ${url.split(':')[0]} storage is not supported; use sqlite://<path> or postgres://…`);
}
