import { PostgresAdapter, sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { QueryTarget } from './database.js';

/**
 * JSON written by the database engine. A listing page is a hundred rows of seven or more values:
 * turning each value into a JavaScript string, mapping rows to API objects and serializing them
 * again cost more than the query. As one JSON text per row, written by the engine in C, the page
 * goes out as it comes (see `pageEnvelopeBytes`). SQLite's `json_object` and PostgreSQL's
 * `json_build_object` differ in name and in how they take booleans; this is the one place that
 * knows.
 */
const isPostgres = (db: QueryTarget) => db.getExecutor().adapter instanceof PostgresAdapter;

/** A JSON object text with these keys, in this order. */
export function jsonObjectText(db: QueryTarget, fields: Record<string, Expression<unknown>>): RawBuilder<string> {
  const args = sql.join(Object.entries(fields).flatMap(([key, value]) => [sql.lit(key), value]));
  return isPostgres(db) ? sql<string>`json_build_object(${args})::text` : sql<string>`json_object(${args})`;
}

/** A condition as a JSON `true` or `false` inside `jsonObjectText` (SQLite would write 1 or 0). */
export function jsonBoolean(db: QueryTarget, condition: Expression<SqlBool>): Expression<unknown> {
  return isPostgres(db) ? condition : sql`json(case when ${condition} then 'true' else 'false' end)`;
}

/** The elements of a JSON array text of strings, as a one-column subquery (`x in (…)`). */
export function jsonTextElements(db: QueryTarget, json: RawBuilder<unknown>): RawBuilder<string> {
  return isPostgres(db) ? sql<string>`select jsonb_array_elements_text(${json}::jsonb)` : sql<string>`select value from json_each(${json})`;
}
