import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql, type CompiledQuery, type LogEvent, type Transaction } from 'kysely';
import type pg from 'pg';
import { CurrentSchemaPostgresDialect } from './postgres-introspector.js';
import { listenPostgres, listenSqlite, type NotificationHandlers, type Subscription } from './notifications.js';
import type { Database } from './schema.js';
import { registerFold } from './sqlite-fold.js';

export type Db = Kysely<Database>;
/** Repositories take either the database or a transaction. */
export type DbOrTrx = Kysely<Database> | Transaction<Database>;

export type DialectName = 'sqlite' | 'postgres';

/** What differs between the engines, as flags rather than `if (dialect === …)` in the code. */
export interface DialectCapabilities {
  /** `SELECT … FOR UPDATE` row locks (PostgreSQL); SQLite serialises writers instead. */
  readonly rowLocks: boolean;
  /**
   * `FOR UPDATE SKIP LOCKED` (PostgreSQL): background jobs on several instances take disjoint
   * batches of work instead of queueing on the same rows. SQLite has one writer at a time and
   * claims with conditional updates.
   */
  readonly skipLocked: boolean;
  /**
   * Several writes in one statement (PostgreSQL's data-modifying `WITH`, see write-batch.ts):
   * a transaction's independent writes cost one round trip. SQLite runs them one by one (its
   * statements are local calls).
   */
  readonly writesInOneStatement: boolean;
}

export interface DatabaseHandle {
  readonly db: Db;
  readonly dialect: DialectName;
  readonly capabilities: DialectCapabilities;
  /** PostgreSQL: the schema the tables live in (the migrator's bookkeeping goes there too). */
  readonly schema?: string;
  /** Cheap round trip for readiness checks. */
  ping(): Promise<void>;
  /**
   * Hears what is announced on `channel` (PostgreSQL `LISTEN`/`NOTIFY`; on SQLite, temporary
   * triggers of the server's connection, see listenSqlite), so an instance can keep a database
   * answer in memory and drop it when another instance, or a trigger, says it changed. Optional:
   * a handle without it keeps nothing.
   */
  listen?(channel: string, handlers: NotificationHandlers): Subscription;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** `postgres://…`, or null for SQLite. */
  url: string | null;
  /** SQLite file path when `url` is null (`:memory:` allowed). */
  sqliteFile?: string;
  /** PostgreSQL schema to use (created when missing); tests give each run its own. */
  pgSchema?: string;
  poolSize?: number;
  log?: (event: LogEvent) => void;
}

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.url) return openPostgres(options.url, options);
  return openSqlite(options.sqliteFile ?? ':memory:', options);
}

async function openPostgres(url: string, options: DatabaseOptions): Promise<DatabaseHandle> {
  // Loaded here, not at start: a server on SQLite never needs the driver's code in its memory.
  const { default: pg } = await import('pg');
  // int8 (bigint) columns hold sizes and counts far below 2^53: read them as numbers.
  pg.types.setTypeParser(20, (value) => Number(value));
  const schema = options.pgSchema;
  if (schema && !/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`invalid schema name ${schema}`);
  if (schema) {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      // Two connections creating it at once: one of them sees a unique violation, and the schema exists.
      await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`).catch((error: { code?: string }) => {
        if (error.code !== '23505') throw error;
      });
    } finally {
      await admin.end();
    }
  }
  const connection: pg.ClientConfig = { connectionString: url, ...(schema ? { options: `-c search_path=${schema}` } : {}) };
  const pool = new pg.Pool({ ...connection, max: options.poolSize ?? 10 });
  const db = new Kysely<Database>({ dialect: new CurrentSchemaPostgresDialect({ pool: withNamedStatements(pool) }), log: options.log });
  const current = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  return {
    db,
    dialect: 'postgres',
    schema: current.rows[0]?.schema ?? schema,
    capabilities: { rowLocks: true, skipLocked: true, writesInOneStatement: true },
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    listen: (channel, handlers) => listenPostgres(pg.Client, connection, channel, handlers),
    close: () => db.destroy(),
  };
}

/** The page cache of the SQLite connection, in KiB (docs/performance.md, zip archives). */
export const SQLITE_CACHE_KIB = 2000;

async function openSqlite(file: string, options: DatabaseOptions): Promise<DatabaseHandle> {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const database = new SQLite(file);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('busy_timeout = 5000');
  database.pragma('foreign_keys = ON');
  // SQLite's temporary files (statement journals, sorts and recursive queues that outgrow the
  // cache) are created and unlinked on the event loop; creating an inode costs hundreds of
  // microseconds on ext4 once many files were deleted recently (it skips every inode deleted in
  // the last seconds). One in seven uploads made one: they stay in memory instead.
  database.pragma('temp_store = MEMORY');
  // SQLite's own default page cache (2 MB), where better-sqlite3 builds it with 16 MB: one large
  // read (an archive of 100,000 files) filled it, and it stays resident for the server's life,
  // while the operating system's cache serves those pages as well.
  database.pragma(`cache_size = -${SQLITE_CACHE_KIB}`);
  registerFold(database);
  const statements = withStatementCache(database);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: statements }), log: options.log });
  immediateRunners.set(db.getExecutor().adapter, (target, query) => {
    // Another caller's transaction holds the one connection: wait for it through Kysely.
    if (database.inTransaction && !target.isTransaction) return undefined;
    const started = performance.now();
    const statement = statements.prepare(query.sql);
    const rows = statement.reader ? statement.all(query.parameters as unknown[]) : (statement.run(query.parameters as unknown[]), []);
    options.log?.({ level: 'query', query, queryDurationMillis: performance.now() - started });
    return rows;
  });
  return {
    db,
    dialect: 'sqlite',
    capabilities: { rowLocks: false, skipLocked: false, writesInOneStatement: false },
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    listen: (channel, handlers) => listenSqlite(database, channel, handlers),
    close: () => db.destroy(),
  };
}

/** What a query runs on: a database or one of its transactions, of any schema. */
export type QueryTarget = Pick<Kysely<unknown>, 'getExecutor' | 'isTransaction'>;

type ImmediateRunner = (db: QueryTarget, query: CompiledQuery) => unknown[] | undefined;

/** By dialect adapter (shared by a database and its transactions): how to run a query at once. */
const immediateRunners = new WeakMap<object, ImmediateRunner>();

/**
 * The rows of `query` run synchronously on the connection, skipping Kysely's executor, or
 * undefined when it has to go through Kysely. On SQLite a small indexed read costs a few
 * microseconds while the executor's connection mutex, plugins and promise hops cost more than
 * that; the one connection is used directly unless another caller's transaction holds it.
 * PostgreSQL queries always go through Kysely (a pool, a round trip each).
 */
export function runImmediately<R>(db: QueryTarget, query: CompiledQuery<R>): R[] | undefined {
  return immediateRunners.get(db.getExecutor().adapter)?.(db, query) as R[] | undefined;
}

/** Statements kept prepared; past this, the least recently used is dropped. */
const STATEMENT_CACHE_SIZE = 1000;

/** What Kysely's SQLite driver uses of a prepared statement. */
interface DriverStatement {
  readonly reader: boolean;
  readonly busy: boolean;
  all(parameters: unknown[]): unknown[];
  run(parameters: unknown[]): SQLite.RunResult;
  iterate(parameters: unknown[]): IterableIterator<unknown>;
}

/**
 * A statement whose rows come as objects built by one function compiled for its columns.
 * better-sqlite3 builds each row object in C++ one property at a time (a V8 map transition per
 * column and row): for a page of 100 folders that cost more than the query. Raw arrays, turned
 * into objects by an object literal of the statement's shape, take about half the time.
 */
function withRowBuilder(statement: SQLite.Statement): DriverStatement {
  if (!statement.reader) return statement as unknown as DriverStatement;
  const builderFor = () => {
    const names = statement.columns().map((column) => column.name);
    // A literal key `__proto__` would set the prototype: such a statement keeps the default rows.
    if (names.includes('__proto__')) return null;
    const build = new Function('r', `return {${names.map((name, i) => `${JSON.stringify(name)}: r[${i}]`).join(', ')}};`) as (
      raw: unknown[],
    ) => unknown;
    return { width: names.length, build };
  };
  let builder = builderFor();
  if (!builder) return statement as unknown as DriverStatement;
  statement.raw(true);
  const toRow = (raw: unknown[]) => {
    // A `select *` over a table that gained or lost columns since (SQLite prepares the
    // statement again by itself) answers rows of another width: build for the new columns.
    if (raw.length !== builder!.width) builder = builderFor() ?? builder;
    return builder!.build(raw);
  };
  return {
    reader: true,
    get busy() {
      return statement.busy;
    },
    all: (parameters) => (statement.all(parameters) as unknown[][]).map(toRow),
    run: (parameters) => statement.run(parameters),
    *iterate(parameters) {
      for (const raw of statement.iterate(parameters) as IterableIterator<unknown[]>) yield toRow(raw);
    },
  };
}

/**
 * Kysely's SQLite driver prepares every query it runs; preparing (parsing and planning the SQL)
 * costs more than running the small indexed queries of a request, and Kysely's query texts repeat
 * (values are bound parameters). This keeps the prepared statements by SQL text. A statement still
 * busy (an unfinished `iterate`) is never handed out twice: the caller then gets a fresh one.
 */
function withStatementCache(database: SQLite.Database) {
  const cache = new Map<string, DriverStatement>();
  const prepare = (text: string) => withRowBuilder(database.prepare(text));
  let mostRecent: string | undefined;
  return {
    close: () => {
      cache.clear();
      database.close();
    },
    prepare: (text: string) => {
      const cached = cache.get(text);
      if (cached) {
        if (cached.busy) return prepare(text);
        // Re-inserting keeps the Map in least-recently-used order. The most recent is left where
        // it is: a loop running one query over and over would otherwise churn the Map's table.
        if (text !== mostRecent) {
          cache.delete(text);
          cache.set(text, cached);
          mostRecent = text;
        }
        return cached;
      }
      const statement = prepare(text);
      cache.set(text, statement);
      mostRecent = text;
      if (cache.size > STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      return statement;
    },
  };
}

/** Distinct query texts that get a prepared statement of their own on each connection. */
const NAMED_STATEMENTS = 1000;

/**
 * Put first in a statement's text, has PostgreSQL plan it at every execution (it is sent
 * unnamed). For statements over a list of varying length on tables that grow by the thousand (a
 * group of uploads): after five executions a named statement runs a generic plan made for the
 * table sizes of that moment, kept until the table's statistics change, and without autovacuum
 * they never do. The grouped upload's `update blobs … where id in (…)`, planned while `blobs`
 * was one page, scanned the whole table for every group: 3 million rows read for 12,000 uploads.
 * Planned each time, the plan sees the table's current size. SQLite plans when it prepares.
 */
export const PLANNED_EACH_TIME = '/* planned each time */ ';

/**
 * Kysely sends each parameterized query as an unnamed statement, which PostgreSQL parses and plans
 * anew every time. This names them (one name per SQL text, kept by each connection once prepared),
 * so a connection plans each query once (2.4× the metadata requests per second measured by
 * `npm run bench`). Queries without parameters (transaction control, migrations) are left as
 * they are.
 */
function withNamedStatements(pool: pg.Pool): pg.Pool {
  const names = new Map<string, string>();
  const wrapped = new WeakMap<pg.PoolClient, pg.PoolClient>();
  const unnamed = new WeakSet<pg.PoolClient>();
  const nameOf = (text: string) => {
    let name = names.get(text);
    if (!name && names.size < NAMED_STATEMENTS) {
      name = `coffre_${names.size + 1}`;
      names.set(text, name);
    }
    return name;
  };
  const wrap = (client: pg.PoolClient): pg.PoolClient => {
    let proxy = wrapped.get(client);
    if (!proxy) {
      proxy = new Proxy(client, {
        get(target, property) {
          if (property === 'query') {
            return async (...args: unknown[]) => {
              const [text, values] = args;
              const plain = () => (target.query as (...a: unknown[]) => unknown)(...args);
              const name =
                !unnamed.has(target) &&
                typeof text === 'string' &&
                Array.isArray(values) &&
                values.length > 0 &&
                !text.startsWith(PLANNED_EACH_TIME)
                  ? nameOf(text)
                  : undefined;
              if (!name) return plain();
              try {
                return await target.query({ name, text: text as string, values: values as unknown[] });
              } catch (error) {
                // Another instance changed a table under a statement this connection prepared
                // ("cached plan must not change result type"): the connection goes back to
                // unnamed statements, and the query runs again once (inside a transaction the
                // retry fails too, the transaction being aborted: that one request errs).
                if ((error as { code?: string }).code !== '0A000') throw error;
                unnamed.add(target);
                return plain();
              }
            };
          }
          const value = Reflect.get(target, property, target);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      wrapped.set(client, proxy);
    }
    return proxy;
  };
  return new Proxy(pool, {
    get(target, property) {
      if (property === 'connect') return async () => wrap(await target.connect());
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
