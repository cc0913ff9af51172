// A child process for the store tests: opens (and migrates) a SQLite ledger at a given instant,
// so several processes meet a new file at once. Prints "ok" or "FAIL <message>".
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';

const [file, at] = [process.argv[2] as string, Number(process.argv[3])];
while (Date.now() < at) {
  // wait for the shared start instant
}
try {
  const store = new SqliteStore(file);
  await store.migrate();
  await store.syncConfigKeys([]);
  await store.close();
  console.log('ok');
} catch (err) {
  console.log(`FAIL ${err instanceof Error ? err.message : String(err)}`);
}
