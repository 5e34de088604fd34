import { sql, type Kysely } from 'kysely';

/**
 * Thumbnails of images (issue 35): one row per image version, inserted `pending` in the
 * transaction that records the version and made later by a background job (modules/thumbnails).
 * A job claims a row by setting `claimed_until` (a lease); a crash leaves the lease to run out and
 * the row is claimed again, up to a few `attempts`, then it is `failed`. A `done` row names an
 * encrypted blob it holds one reference on, and that blob's data key wrapped by the file key
 * (associated data `thumbnail:<version id>`). Deleted with its version.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('thumbnails')
    .addColumn('version_id', 'text', (c) => c.primaryKey())
    .addColumn('file_id', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('claimed_until', 'text')
    .addColumn('blob_id', 'text')
    .addColumn('data_key_wrapped', 'text')
    .addColumn('size', 'integer')
    .addColumn('width', 'integer')
    .addColumn('height', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('thumbnails_file_idx').on('thumbnails').columns(['file_id']).execute();
  // The job looks for pending rows only: the index stays as small as the backlog.
  await db.schema
    .createIndex('thumbnails_pending_idx')
    .on('thumbnails')
    .columns(['created_at'])
    .where(sql<boolean>`state = 'pending'`)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('thumbnails').execute();
}
