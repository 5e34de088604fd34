import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * Search (issue 35), SQLite: one trigram table per kind instead of one for files and folders
 * together. With one table, looking for folders named "dir" walked the index entries of a
 * million files named `… .bin` to find none of them (docs/performance.md, search). The docs keep
 * their rowids (`search_docs`), so only the FTS tables and their triggers change. PostgreSQL
 * already has one index per table.
 */
const KINDS = [
  { table: 'files', kind: 'file', names: 'search_file_names' },
  { table: 'folders', kind: 'folder', names: 'search_folder_names' },
] as const;

export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  for (const { table, kind, names } of KINDS) {
    await dropTriggers(db, table);
    await createNamesTable(db, names);
    await sql`insert into ${sql.table(names)} (rowid, name)
      select d.doc, x.name from ${sql.table(table)} x join search_docs d on d.item_id = x.id where d.kind = ${kind}`.execute(db);
    await createTriggers(db, table, names);
  }
  await sql`drop table search_names`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  await createNamesTable(db, 'search_names');
  for (const { table, names } of KINDS) {
    await dropTriggers(db, table);
    await sql`insert into search_names (rowid, name)
      select d.doc, x.name from ${sql.table(table)} x join search_docs d on d.item_id = x.id`.execute(db);
    await createTriggers(db, table, 'search_names');
    await sql`drop table ${sql.table(names)}`.execute(db);
  }
}

function createNamesTable(db: Kysely<any>, names: string) {
  return sql`create virtual table ${sql.table(names)} using fts5(name, content='', contentless_delete=1, tokenize='trigram remove_diacritics 1')`.execute(
    db,
  );
}

async function dropTriggers(db: Kysely<any>, table: string): Promise<void> {
  for (const what of ['insert', 'rename', 'delete']) await sql`drop trigger ${sql.raw(`${table}_search_${what}`)}`.execute(db);
}

/** The triggers of migration 019, writing to `names`: the index follows every write of a name. */
async function createTriggers(db: Kysely<any>, table: 'files' | 'folders', names: string): Promise<void> {
  const kind = sql.lit(table === 'files' ? 'file' : 'folder');
  const t = sql.table(table);
  const n = sql.table(names);
  const doc = (row: 'new' | 'old') => sql`(select doc from search_docs where item_id = ${sql.raw(row)}.id)`;
  await sql`create trigger ${sql.raw(`${table}_search_insert`)} after insert on ${t} begin
    insert into search_docs (item_id, kind) values (new.id, ${kind});
    insert into ${n} (rowid, name) values (${doc('new')}, new.name);
  end`.execute(db);
  await sql`create trigger ${sql.raw(`${table}_search_rename`)} after update of name on ${t} when new.name <> old.name begin
    delete from ${n} where rowid = ${doc('old')};
    insert into ${n} (rowid, name) values (${doc('new')}, new.name);
  end`.execute(db);
  await sql`create trigger ${sql.raw(`${table}_search_delete`)} after delete on ${t} begin
    delete from ${n} where rowid = ${doc('old')};
    delete from search_docs where item_id = old.id;
  end`.execute(db);
}
