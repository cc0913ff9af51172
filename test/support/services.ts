import pg from 'pg';
import { randomUUID } from 'node:crypto';

/**
 * The external services some suites need (issue #7). Each is used only when its variable is set;
 * `.ci/run` sets both. Without them those suites are skipped, and say so once each, so a green
 * `npm test` never hides what it did not run.
 */
export const POSTGRES_URL = process.env['JUNCTION_TEST_POSTGRES_URL'] || undefined;
export const REDIS_URL = process.env['JUNCTION_TEST_REDIS_URL'] || undefined;

const told = new Set<string>();
/** Prints, once per service, which suites are skipped and how to run them. */
export function saySkipped(service: 'PostgreSQL' | 'Redis', suite: string): void {
  const variable = service === 'PostgreSQL' ? 'JUNCTION_TEST_POSTGRES_URL' : 'JUNCTION_TEST_REDIS_URL';
  const example = service === 'PostgreSQL' ? 'postgres://postgres@127.0.0.1:5432/test' : 'redis://127.0.0.1:6379';
  if (told.has(`${service}:${suite}`)) return;
  told.add(`${service}:${suite}`);
  console.log(`  skipped: ${suite} (${service}): set ${variable}=${example} to run it`);
}

/**
 * A fresh, empty schema in the test database, and a URL whose connections use it: each test gets
 * its own tables without creating a database. `drop()` removes it.
 */
export async function freshPostgresSchema(base: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const schema = `t_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`DROP SCHEMA ${schema} CASCADE`);
      await client.end();
    },
  };
}

/**
 * The ledgers an end-to-end suite runs against: SQLite always, PostgreSQL when configured. `use()`
 * is called first inside the suite's `describe`: it registers hooks that create (and drop) a
 * fresh PostgreSQL schema, and gives the YAML that points the gateway at it.
 */
export function ledgerBackends(suite: string): { readonly name: string; use: () => { storageYaml: () => string } }[] {
  const sqlite = { name: 'SQLite', use: () => ({ storageYaml: () => '' }) };
  const base = POSTGRES_URL;
  if (!base) {
    saySkipped('PostgreSQL', suite);
    return [sqlite];
  }
  const postgres = {
    name: 'PostgreSQL',
    use: () => {
      let schema: { url: string; drop: () => Promise<void> } | undefined;
      before(async () => {
        schema = await freshPostgresSchema(base);
      });
      after(async () => {
        await schema?.drop();
      });
      return {
        storageYaml: () => {
          if (!schema) throw new Error('storageYaml() used before the before() hook ran');
          return `\nstorage: { url: "${schema.url}" }\n`;
        },
      };
    },
  };
  return [sqlite, postgres];
}

/**
 * The rate limiters an end-to-end suite runs against: each process's memory always, Redis when
 * configured, under a prefix of this run's own whose keys are deleted afterwards.
 */
export function limiterBackends(suite: string): { readonly name: string; readonly yaml: () => string }[] {
  const memory = { name: 'in-memory', yaml: () => '' };
  if (!REDIS_URL) {
    saySkipped('Redis', suite);
    return [memory];
  }
  const prefix = `junction-test:${randomUUID()}:`;
  after(async () => {
    const { Redis } = await import('ioredis');
    const redis = new Redis(REDIS_URL);
    await deleteRedisKeys(redis, prefix);
    await redis.quit();
  });
  // A prefix per gateway: each test gateway's ledger numbers its keys from 1, as separate
  // deployments would, and deployments sharing a Redis keep apart by prefix.
  let gateways = 0;
  return [memory, { name: 'Redis', yaml: () => `\nredis: { url: "${REDIS_URL}", prefix: "${prefix}${gateways++}:" }\n` }];
}

/** Deletes every key under a test's prefix. */
export async function deleteRedisKeys(redis: { keys(pattern: string): Promise<string[]>; del(...keys: string[]): Promise<number> }, prefix: string): Promise<void> {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
}
