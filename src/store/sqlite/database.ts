import Database from 'better-sqlite3';

/**
 * Every better-sqlite3 object the process makes, kept until it exits: the garbage collector must
 * never free one. better-sqlite3 12 builds its Database and Statement on node::ObjectWrap, which
 * Node 24.19 and later compiles with an environment cleanup hook that the object's destructor
 * removes; run from a garbage collection, that removal finds no current environment and Node aborts
 * the whole process (`Assertion failed: (env) != nullptr` in RemoveEnvironmentCleanupHook, under
 * `Statement::~Statement` or `Database::~Database`; nodejs/node#65446). Closing a database first does
 * not help: the abort is in the destructor itself. Kept objects cost only their wrappers: `close()`
 * still frees everything SQLite holds. better-sqlite3 13 (Node-API) no longer has the problem, but
 * needs Node 22.
 */
const kept: object[] = [];

const keep = <T extends object>(value: T): T => {
  kept.push(value);
  return value;
};

/**
 * Opens a better-sqlite3 database that is never garbage collected, nor is any statement prepared on
 * it (see `kept`). Its `pragma()` prepares through the same path; `iterate()` and `backup()`, whose
 * objects would not be kept, are not used in this project.
 */
export function openDatabase(file: string, options?: Database.Options): Database.Database {
  const db = keep(new Database(file, options));
  const prepare = db.prepare.bind(db);
  db.prepare = ((source: string) => keep(prepare(source))) as Database.Database['prepare'];
  db.pragma = (source: string, pragmaOptions?: Database.PragmaOptions): unknown => {
    const statement = db.prepare(`PRAGMA ${source}`);
    if (!statement.reader) {
      statement.run();
      return pragmaOptions?.simple ? undefined : [];
    }
    return pragmaOptions?.simple ? statement.pluck().get() : statement.all();
  };
  return db;
}
