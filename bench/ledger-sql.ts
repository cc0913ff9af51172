// The ledger's SQL per request, by schema, in instructions (issue #17, twenty-fifth session).
// Junction's main thread ran 16–18k instructions a request more than the floor's inside SQLite and
// better-sqlite3 (bench/instructions.mjs, with KEEP), with as many statements and commits each.
// This runs one request's hold and settlement (two transactions, as at concurrency 1) on each
// schema under callgrind, at two request counts, and reports the difference per request: what the
// rows' width costs, with startup and compilation taken out.
//
//   node --import ./bin/register.mjs bench/ledger-sql.ts            the table (about 5 minutes)
//   node --import ./bin/register.mjs bench/ledger-sql.ts <arm> <n>   one arm, n requests (what callgrind runs)
//
// Arms: `junction` (its migrations and statements, foreign keys on, as sqlite-store.ts runs them),
// and the same with foreign keys off (`junction-no-fk`) or the seven media columns left to their
// defaults (`junction-media-defaults`); `junction-v8` (the schema before migration 9, the counters
// on the keys row itself, as the twenty-fifth session measured it); `floor` (bench/floor-server.ts's
// tables and statements); `floor+ledger` (the floor's with Junction's ledger table and every
// ledger column bound).
// Counted: instructions inside better-sqlite3's addon, SQLite included; what they call in libc
// (memcpy, malloc) is not, so wider rows cost somewhat more than the table says.
import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MIGRATIONS } from '../src/store/sqlite/migrations.ts';
import { isoTime } from '../src/util/iso-time.ts';
import { floorStatements, floorTables, productStatements } from './floor-ledger.ts';

const ARMS = ['junction', 'junction-no-fk', 'junction-media-defaults', 'junction-v8', 'floor', 'floor+ledger'] as const;
type Arm = (typeof ARMS)[number];
type Request = (id: string) => void;

// sqlite-store.ts's statements, word for word (floor-ledger.ts).
const product = productStatements();
/** A key's counters: in key_counters since migration 9, on the keys row before it. */
const onKeysRow = (sql: string): string => sql.replace('key_counters', 'keys').replace('WHERE key_id =', 'WHERE id =');
const counters = (v8: boolean) => (v8 ? { take: onKeysRow(product.take), read: onKeysRow(product.read), charge: onKeysRow(product.charge) } : product);

function open(arm: Arm, file: string): Request {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.defaultSafeIntegers(true);
  const v8 = arm === 'junction-v8';
  for (const migration of MIGRATIONS) if (!v8 || migration.version <= 8) db.exec(migration.sql);
  // The floor's own tables, beside Junction's, under names of their own.
  db.exec(floorTables('f_'));
  db.exec("INSERT INTO f_keys (sha256, balance) VALUES ('x', 1000000000000000)");
  db.prepare(`INSERT INTO keys (name, sha256, prefix, source, created_at, updated_at) VALUES ('k', 'x', 'p', 'store', 't', 't')`).run();
  if (v8) db.prepare('UPDATE keys SET balance = ?').run(10n ** 15n);
  else db.prepare('INSERT INTO key_counters (key_id, balance) VALUES (1, ?)').run(10n ** 15n);
  const junction = arm.startsWith('junction');
  if (arm !== 'junction-no-fk' && junction) db.pragma('foreign_keys = ON');
  const junctionRow = junction || arm === 'floor+ledger';
  const media = arm !== 'junction-media-defaults';
  const q = (sql: string): Database.Statement => db.prepare(sql);
  // The floor's own statements on its own tables; Junction's releases a hold with the same words.
  const sql = floorStatements('f_');
  const own = counters(v8);
  const take = q(junction ? own.take : sql.take);
  const hold = q(junction ? product.hold : sql.hold);
  const release = q(junction ? product.release : sql.release);
  const read = q(junction ? own.read : sql.read);
  const charge = q(junction ? own.charge : sql.charge);
  const row = q(junctionRow ? (media ? product.mediaRow : product.row) : sql.row);
  const reserve = db.transaction((id: string) => {
    take.run(300n, 1n, 300n);
    if (junction) hold.run(id, 1n, 300n, 100n, 'claude-sonnet-4', 'anthropic', 'instance-0123456789', isoTime(Date.now()));
    else hold.run(id, 1n, 300n, isoTime(Date.now()));
  });
  const settle = db.transaction((id: string) => {
    release.get(id);
    read.get(1n);
    charge.run(300n, 30n, 30n, 1n);
    const started = isoTime(Date.now());
    const columns = [id, 1n, 'chat_completions', 'claude-sonnet-4', 'anthropic', 'claude-sonnet-4-20250514', 'default', 10, 20, 0, 0, 0, 30n, 30n, 0n, 200, 'ok', 0, started, 0.5, 1.5];
    if (junctionRow && media) row.run(...columns, 0, 0, 0, 0, 0, 0, 0);
    else if (junctionRow) row.run(...columns);
    else row.run(id, 1n, 'claude-sonnet-4', 10, 20, 30n, 30n, 200, started, 1.5);
  });
  return (id) => {
    reserve(id);
    settle(id);
  };
}

const [armArg, countArg] = process.argv.slice(2);
const isArm = (name: string): name is Arm => (ARMS as readonly string[]).includes(name);
if (armArg !== undefined) {
  if (!isArm(armArg)) throw new Error(`unknown arm "${armArg}": one of ${ARMS.join(', ')}`);
  const dir = mkdtempSync(path.join(tmpdir(), 'ledger-sql-'));
  const request = open(armArg, path.join(dir, 'ledger.db'));
  for (let i = 0; i < Number(countArg); i++) request(`req_${i.toString(36)}_0123456789abcdef`);
  rmSync(dir, { recursive: true, force: true });
} else {
  if (spawnSync('valgrind', ['--version']).status !== 0) throw new Error('valgrind is not installed (apt-get install valgrind)');
  const script = fileURLToPath(import.meta.url);
  const root = path.resolve(path.dirname(script), '..');
  const out = mkdtempSync(path.join(tmpdir(), 'ledger-sql-cg-'));
  /** Instructions run inside better-sqlite3's addon (SQLite included) for `count` requests. */
  const inAddon = (arm: Arm, count: number): number => {
    const file = path.join(out, `${arm}-${count}.out`);
    const run = spawnSync('valgrind', ['--tool=callgrind', `--callgrind-out-file=${file}`, process.execPath, '--import', './bin/register.mjs', script, arm, String(count)], { cwd: root, encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`${arm}: ${run.stderr.slice(-2000)}`);
    const annotated = spawnSync('callgrind_annotate', ['--inclusive=no', '--threshold=100', file], { encoding: 'utf8', maxBuffer: 1 << 28 });
    let sum = 0;
    for (const line of annotated.stdout.split('\n')) if (line.includes('better_sqlite3.node]')) sum += Number(line.trim().split(' ')[0]?.replaceAll(',', ''));
    return sum;
  };
  const [few, many] = [1000, 3000];
  const rows: [Arm, number][] = ARMS.map((arm) => [arm, (inAddon(arm, many) - inAddon(arm, few)) / (many - few)]);
  const floor = rows.find(([arm]) => arm === 'floor')?.[1] ?? 0;
  console.log('| schema | instructions a request in SQLite and better-sqlite3 | above the floor |\n|---|---|---|');
  for (const [arm, perRequest] of rows) console.log(`| ${arm} | ${Math.round(perRequest)} | ${Math.round(perRequest - floor)} |`);
  rmSync(out, { recursive: true, force: true });
}
