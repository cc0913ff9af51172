import { SqliteStore } from './sqlite/sqlite-store.ts';
import type { Store } from './store.ts';

/** Opens the store a config's `storage.url` names (already made absolute by the config loader). */
export async function openStore(url: string): Promise<Store> {
  if (url.startsWith('sqlite://')) {
    const store = new SqliteStore(url.slice('sqlite://'.length));
    await store.migrate();
    return store;
  }
  throw new Error(`storage.url: ${url.split(':')[0]} storage is not available yet (PostgreSQL arrives with issue #7); use sqlite://`);
}
