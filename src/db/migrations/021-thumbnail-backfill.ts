import { sql, type Kysely } from 'kysely';
import { isThumbnailable } from '../../lib/thumbnail-types.js';

/** Files read per round: a few hundred kilobytes of names at a time, whatever the database's size. */
const BATCH = 5000;

/**
 * Thumbnails of the images stored before migration 020 (issue 35): the current version of each
 * such file gets a `pending` row, as an upload would have given it, and the thumbnail job makes
 * them like any other. Older versions get none (the list shows the current one). The files are
 * read in pages by id, so a million of them cost a few hundred short queries, never one result in
 * memory; the rule is the uploads' own (lib/thumbnail-types.ts: the type, or the name's extension
 * when the type is generic). A version that already has a row keeps it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const now = new Date().toISOString();
  let after = '';
  for (;;) {
    const page = await sql<{ id: string; name: string; content_type: string; current_version_id: string }>`
      select id, name, content_type, current_version_id from files
      where id > ${after} and current_version_id is not null
      order by id limit ${BATCH}
    `.execute(db);
    if (page.rows.length === 0) return;
    after = page.rows[page.rows.length - 1].id;
    const images = page.rows.filter((file) => isThumbnailable(file.content_type, file.name));
    if (images.length === 0) continue;
    const ids = images.map((file) => file.current_version_id);
    const existing = await db.selectFrom('thumbnails').select('version_id').where('version_id', 'in', ids).execute();
    const taken = new Set(existing.map((row) => row.version_id as string));
    const rows = images
      .filter((file) => !taken.has(file.current_version_id))
      .map((file) => ({ version_id: file.current_version_id, file_id: file.id, state: 'pending', created_at: now, updated_at: now }));
    // Within PostgreSQL's 65,535 parameters a statement (5 a row).
    for (let i = 0; i < rows.length; i += 1000) {
      await db
        .insertInto('thumbnails')
        .values(rows.slice(i, i + 1000))
        .execute();
    }
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  // The rows it added cannot be told from those uploads added since; they stay (020's down drops them all).
  void db;
}
