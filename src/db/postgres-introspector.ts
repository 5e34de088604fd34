import {
  PostgresDialect,
  PostgresIntrospector,
  sql,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  type SchemaMetadata,
  type TableMetadata,
} from 'kysely';

/** What Kysely hands an introspector: a database of any tables. */
type AnyKysely = Parameters<PostgresDialect['createIntrospector']>[0];

interface ColumnRow {
  schema: string;
  table: string;
  isView: boolean;
  column: string;
  type: string;
  typeSchema: string;
  notNull: boolean;
  hasDefault: boolean;
  comment: string | null;
  serial: string | null;
}

/**
 * Kysely's PostgreSQL introspector lists every column of every schema of the database, and its
 * migrator asks for that list several times on each start. Coffre lives in one schema (its search
 * path): this one lists that schema's tables alone, so a start costs the same on a database that
 * holds hundreds of other schemas, and a `coffre_migrations` table of another schema is never taken
 * for ours.
 */
export class CurrentSchemaIntrospector implements DatabaseIntrospector {
  readonly #db: AnyKysely;
  readonly #schemas: PostgresIntrospector;

  constructor(db: AnyKysely) {
    this.#db = db;
    this.#schemas = new PostgresIntrospector(db);
  }

  getSchemas(): Promise<SchemaMetadata[]> {
    return this.#schemas.getSchemas();
  }

  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }): Promise<TableMetadata[]> {
    const { rows } = await sql<ColumnRow>`
      select ns.nspname as "schema", c.relname as "table", c.relkind = 'v' as "isView", a.attname as "column",
             typ.typname as "type", tns.nspname as "typeSchema", a.attnotnull as "notNull",
             a.atthasdef as "hasDefault", col_description(a.attrelid, a.attnum) as "comment",
             pg_get_serial_sequence(quote_ident(ns.nspname) || '.' || quote_ident(c.relname), a.attname) as "serial"
      from pg_catalog.pg_attribute a
      join pg_catalog.pg_class c on a.attrelid = c.oid
      join pg_catalog.pg_namespace ns on c.relnamespace = ns.oid
      join pg_catalog.pg_type typ on a.atttypid = typ.oid
      join pg_catalog.pg_namespace tns on typ.typnamespace = tns.oid
      where ns.nspname = current_schema() and c.relkind in ('r', 'v', 'p') and a.attnum >= 0 and not a.attisdropped
      order by c.relname, a.attnum`.execute(this.#db);
    const tables = new Map<string, TableMetadata>();
    for (const row of rows) {
      if (!options.withInternalKyselyTables && (row.table === 'kysely_migration' || row.table === 'kysely_migration_lock')) continue;
      const table = tables.get(row.table) ?? { name: row.table, schema: row.schema, isView: row.isView, columns: [] };
      tables.set(row.table, table);
      (table.columns as TableMetadata['columns'][number][]).push({
        name: row.column,
        dataType: row.type,
        dataTypeSchema: row.typeSchema,
        isNullable: !row.notNull,
        hasDefaultValue: row.hasDefault,
        isAutoIncrementing: row.serial !== null,
        comment: row.comment ?? undefined,
      });
    }
    return [...tables.values()];
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}

/** Kysely's PostgreSQL dialect, introspecting the current schema only. */
export class CurrentSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: AnyKysely): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db);
  }
}
