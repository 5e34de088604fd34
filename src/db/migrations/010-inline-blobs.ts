import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * Small blobs kept in their row (`blobs.content`) instead of the blob store. An upload small
 * enough to arrive whole is sealed in memory and recorded with its file in one transaction: one
 * commit makes it durable, where the blob store needed a commit of its `uploading` row, a file
 * written and synced and its directory synced before the commit of the file. A rolled-back
 * transaction leaves nothing anywhere, so such a blob needs no `uploading` row at all.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .alterTable('blobs')
    .addColumn('content', sql.raw(postgres ? 'bytea' : 'blob'))
    .execute();
  // Ciphertext does not compress: PostgreSQL need not try before moving a large value out of line.
  if (postgres) await sql`alter table blobs alter column content set storage external`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('blobs').dropColumn('content').execute();
}
