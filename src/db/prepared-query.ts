import {
  createQueryId,
  type Compilable,
  type CompiledQuery,
  type Kysely,
  type RawBuilder,
  type RootOperationNode,
  type Transaction,
} from 'kysely';
import { runImmediately } from './database.js';
import type { Database } from './schema.js';

/** The database or a transaction (of the service's tables, unless a test says otherwise). */
type DbOrTrx<DB> = Kysely<DB> | Transaction<DB>;

/**
 * A query that Kysely builds and compiles once per database, then runs with new values.
 *
 * Kysely builds an operation tree and compiles it to SQL on every call, which costs more than
 * the indexed lookup itself on the hot read paths (the token check of every request,
 * folder details, listings). A prepared query builds its tree once with a placeholder for each
 * value, keeps the SQL text and where each value goes among its parameters, and afterwards only
 * fills in the values. The query stays written with the typed query builder (or `sql`).
 *
 * `build` must pass every value through `params` (anything else is a constant of the query).
 * Placeholders are strings: use them where Kysely takes a value (comparisons, `limit`), not to
 * choose columns or shape the query.
 */
export interface PreparedQuery<P, R, DB = Database> {
  /** Every row. */
  execute(db: DbOrTrx<DB>, values: P): Promise<R[]>;
  /** The first row, or undefined. */
  takeFirst(db: DbOrTrx<DB>, values: P): Promise<R | undefined>;
}

/** Where a compiled parameter comes from: one of the values, or a constant of the query. */
type Slot = { value: string } | { constant: unknown };

interface Template {
  sql: string;
  query: RootOperationNode;
  slots: Slot[];
}

const PLACEHOLDER = '\u0000coffre-prepared-value:';

export function preparedQuery<P extends Record<string, unknown>, R, DB = Database>(
  build: (db: DbOrTrx<DB>, params: P) => Compilable<R> | RawBuilder<R>,
): PreparedQuery<P, R, DB> {
  // Keyed by the dialect adapter, which a database shares with its transactions.
  const templates = new WeakMap<object, Template>();

  function templateFor(db: DbOrTrx<DB>): Template {
    const key = db.getExecutor().adapter;
    let template = templates.get(key);
    if (!template) {
      const used = new Set<string>();
      const params = new Proxy({} as P, {
        get: (_target, name) => {
          used.add(String(name));
          return `${PLACEHOLDER}${String(name)}`;
        },
      });
      // A raw `sql` query compiles against the database it is given; a built query ignores it.
      const compiled = build(db, params).compile(db);
      const slots = compiled.parameters.map((parameter): Slot =>
        typeof parameter === 'string' && parameter.startsWith(PLACEHOLDER)
          ? { value: parameter.slice(PLACEHOLDER.length) }
          : { constant: parameter },
      );
      for (const name of used) {
        if (!slots.some((slot) => 'value' in slot && slot.value === name))
          throw new Error(`prepared query: value "${name}" is not a parameter of ${compiled.sql}`);
      }
      template = { sql: compiled.sql, query: compiled.query, slots };
      templates.set(key, template);
    }
    return template;
  }

  async function execute(db: DbOrTrx<DB>, values: P): Promise<R[]> {
    const { sql, query, slots } = templateFor(db);
    const parameters = slots.map((slot) => ('value' in slot ? values[slot.value] : slot.constant));
    const compiled: CompiledQuery<R> = { sql, query, parameters, queryId: createQueryId() };
    return runImmediately(db, compiled) ?? (await db.executeQuery(compiled)).rows;
  }

  return {
    execute,
    takeFirst: async (db, values) => (await execute(db, values))[0],
  };
}
