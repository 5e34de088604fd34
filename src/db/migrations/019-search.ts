import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * Search by name (issue 35): a trigram index of every file and folder name, case- and
 * accent-insensitive, that the database itself keeps current in the statement that writes a name,
 * whatever the code path (web, WebDAV, tus, copies, seeding). Moves, trash and restore change no
 * name: who may see a match is read from `files` and `folders` at query time.
 *
 * - SQLite: an FTS5 `trigram` table (`remove_diacritics`, case folded) holding no copy of the
 *   names, fed by triggers. Its rowids are those of `search_docs`, which maps them to item ids:
 *   the rowids of `files` and `folders` themselves may change with a VACUUM.
 * - PostgreSQL: `pg_trgm` GIN indexes on `coffre_fold(name)` (`unaccent`, then `lower`), an
 *   expression index that every write updates. Both extensions are trusted (PostgreSQL ≥ 13).
 *
 * Plus, on both, (owner_id, trash_batch, id) indexes: a common substring ("fil" in a million
 * `file …` names) is found faster by walking the owner's items in result order than by the
 * trigram index (search.repository.ts).
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) await upPostgres(db);
  else await upSqlite(db);
  await db.schema.createIndex('files_owner_search_idx').on('files').columns(['owner_id', 'trash_batch', 'id']).execute();
  await db.schema.createIndex('folders_owner_search_idx').on('folders').columns(['owner_id', 'trash_batch', 'id']).execute();
}

async function upSqlite(db: Kysely<any>): Promise<void> {
  await sql`create table search_docs (doc integer primary key, item_id text not null unique, kind text not null)`.execute(db);
  await sql`create virtual table search_names using fts5(name, content='', contentless_delete=1, tokenize='trigram remove_diacritics 1')`.execute(
    db,
  );
  for (const table of ['files', 'folders'] as const) {
    const kind = sql.lit(table === 'files' ? 'file' : 'folder');
    const t = sql.table(table);
    const doc = (row: 'new' | 'old') => sql`(select doc from search_docs where item_id = ${sql.raw(row)}.id)`;
    await sql`create trigger ${sql.raw(`${table}_search_insert`)} after insert on ${t} begin
      insert into search_docs (item_id, kind) values (new.id, ${kind});
      insert into search_names (rowid, name) values (${doc('new')}, new.name);
    end`.execute(db);
    await sql`create trigger ${sql.raw(`${table}_search_rename`)} after update of name on ${t} when new.name <> old.name begin
      delete from search_names where rowid = ${doc('old')};
      insert into search_names (rowid, name) values (${doc('new')}, new.name);
    end`.execute(db);
    await sql`create trigger ${sql.raw(`${table}_search_delete`)} after delete on ${t} begin
      delete from search_names where rowid = ${doc('old')};
      delete from search_docs where item_id = old.id;
    end`.execute(db);
    // The names already there: folded by the tokenizer as they go in.
    await sql`insert into search_docs (item_id, kind) select id, ${kind} from ${t} order by id`.execute(db);
    await sql`insert into search_names (rowid, name) select d.doc, x.name from ${t} x join search_docs d on d.item_id = x.id`.execute(db);
  }
}

async function upPostgres(db: Kysely<any>): Promise<void> {
  const trgm = await extensionSchema(db, 'pg_trgm');
  const unaccent = await extensionSchema(db, 'unaccent');
  // Immutable (a fixed dictionary, named with its schema) so that an index may use it.
  await sql`create or replace function coffre_fold(text) returns text language sql immutable strict parallel safe as ${sql.lit(
    `select lower(${unaccent}.unaccent('${unaccent}.unaccent'::regdictionary, $1))`,
  )}`.execute(db);
  for (const table of ['files', 'folders']) {
    await sql`create index ${sql.raw(`${table}_name_trgm_idx`)} on ${sql.table(table)} using gin (coffre_fold(name) ${sql.raw(trgm)}.gin_trgm_ops)`.execute(
      db,
    );
  }
}

/** Creates the extension unless it is there (another schema's migration may be creating it now); the schema holding it. */
async function extensionSchema(db: Kysely<any>, name: string): Promise<string> {
  await sql`create extension if not exists ${sql.raw(name)} with schema public`.execute(db).catch((error: { code?: string }) => {
    // 23505 / 42710: a concurrent creation won the race; the extension exists.
    if (error.code !== '23505' && error.code !== '42710') throw error;
  });
  const result = await sql<{
    schema: string;
  }>`select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = ${name}`.execute(db);
  const schema = result.rows[0]?.schema;
  if (!schema || !/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`extension ${name} is not installed in a usable schema`);
  return schema;
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('files_owner_search_idx').execute();
  await db.schema.dropIndex('folders_owner_search_idx').execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop index files_name_trgm_idx`.execute(db);
    await sql`drop index folders_name_trgm_idx`.execute(db);
    await sql`drop function coffre_fold(text)`.execute(db);
    return;
  }
  for (const table of ['files', 'folders']) {
    for (const what of ['insert', 'rename', 'delete']) await sql`drop trigger ${sql.raw(`${table}_search_${what}`)}`.execute(db);
  }
  await sql`drop table search_names`.execute(db);
  await sql`drop table search_docs`.execute(db);
}
