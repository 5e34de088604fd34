import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * `folders.listing_version`: bumped by the database whenever a child folder appears, goes, or
 * changes a field that a listing shows (docs/api.md list item). A page of subfolders depends on
 * nothing else, so a page read once can be answered again from memory for as long as its
 * parent's version stays the same (listing.cache.ts), on every instance: the version is read with
 * the parent row, which every listing loads anyway. Triggers rather than application code, so no
 * write path (another instance, the command line, an administrator's SQL) can forget it; updates
 * that only move aggregates (an upload adding bytes to every ancestor) leave it alone.
 */
const LISTED = ['id', 'bucket_id', 'parent_id', 'hash_url', 'name', 'visibility', 'trash_batch', 'created_at', 'updated_at', 'deleted_at'];

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('folders')
    .addColumn('listing_version', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  const bump = (parents: string) => sql.raw(`update folders set listing_version = listing_version + 1 where id in (${parents})`);
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    // Once per statement, over its transition tables: a row trigger would bump a parent once per
    // child, and a hundred thousand updates of one row in one transaction take PostgreSQL
    // minutes. The bump is an update of folders itself, whose own statement trigger must stop.
    const changed = `(${LISTED.map((c) => `o.${c}`).join(', ')}) is distinct from (${LISTED.map((c) => `n.${c}`).join(', ')})`;
    await sql`
      create function coffre_folders_listed() returns trigger language plpgsql as $$
      begin
        if pg_trigger_depth() > 1 then return null; end if;
        if tg_op = 'INSERT' then
          ${bump('select parent_id from new_rows')};
        elsif tg_op = 'DELETE' then
          ${bump('select parent_id from old_rows')};
        elsif exists (select 1 from old_rows o join new_rows n on n.id = o.id where ${sql.raw(changed)}) then
          -- Most updates only move aggregates (every upload, up the ancestors): they stop at the test above.
          ${bump(`select p from old_rows o join new_rows n on n.id = o.id, lateral (values (o.parent_id), (n.parent_id)) v (p) where ${changed}`)};
        end if;
        return null;
      end
      $$`.execute(db);
    await sql`create trigger folders_listed_insert after insert on folders referencing new table as new_rows for each statement execute function coffre_folders_listed()`.execute(
      db,
    );
    await sql`create trigger folders_listed_delete after delete on folders referencing old table as old_rows for each statement execute function coffre_folders_listed()`.execute(
      db,
    );
    await sql`create trigger folders_listed_update after update on folders referencing old table as old_rows new table as new_rows for each statement execute function coffre_folders_listed()`.execute(
      db,
    );
    return;
  }
  // SQLite has row triggers only, and a row update there costs microseconds. Its null-safe inequality is `is not`.
  const changed = sql.raw(LISTED.map((c) => `old.${c} is not new.${c}`).join(' or '));
  await sql`create trigger folders_listed_insert after insert on folders when new.parent_id is not null begin ${bump('new.parent_id')}; end`.execute(
    db,
  );
  await sql`create trigger folders_listed_delete after delete on folders when old.parent_id is not null begin ${bump('old.parent_id')}; end`.execute(
    db,
  );
  await sql`create trigger folders_listed_update after update on folders when ${changed} begin ${bump('old.parent_id, new.parent_id')}; end`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const trigger of ['folders_listed_insert', 'folders_listed_delete', 'folders_listed_update']) {
    await sql`drop trigger ${sql.raw(trigger)}${sql.raw(db.getExecutor().adapter instanceof PostgresAdapter ? ' on folders' : '')}`.execute(
      db,
    );
  }
  if (db.getExecutor().adapter instanceof PostgresAdapter) await sql`drop function coffre_folders_listed()`.execute(db);
  await db.schema.alterTable('folders').dropColumn('listing_version').execute();
}
