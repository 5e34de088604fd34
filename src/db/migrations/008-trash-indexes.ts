import { sql, type Kysely } from 'kysely';

/**
 * The trash indexes hold only what is in the trash. `(trash_batch, owner_id)` over every row had
 * the live state `''` as the first key of almost every entry, so PostgreSQL could answer "the
 * live file named N in folder F" (`folder_id = F and name = N and trash_batch = ''`) from it,
 * reading every live file, and did: a generic plan made while the table was small, kept because
 * the statistics never changed (autovacuum off), read 50 million index entries for 12,000
 * uploads into one folder, each group's name check slower than the last. Partial on
 * `trash_batch <> ''`, they cannot serve a live lookup, are as small as the trash, and lead
 * with the owner and the trashing time, as the trash list reads them (an owner's trash roots,
 * newest first). Queries reach them by stating `trash_batch <> ''` as a literal.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('files_trash_idx').execute();
  await db.schema.dropIndex('folders_trash_idx').execute();
  for (const table of ['files', 'folders']) {
    await db.schema
      .createIndex(`${table}_trashed_idx`)
      .on(table)
      .columns(['owner_id', 'deleted_at'])
      .where(sql.ref('trash_batch'), '<>', '')
      .execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['files', 'folders']) {
    await db.schema.dropIndex(`${table}_trashed_idx`).execute();
    await db.schema.createIndex(`${table}_trash_idx`).on(table).columns(['trash_batch', 'owner_id']).execute();
  }
}
