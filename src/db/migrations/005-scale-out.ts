import type { Kysely } from 'kysely';

// Scale-out (many instances over one database): leases that background jobs take on the items they
// work on, so two instances never do the same work, and indexes for the trash purge.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('job_leases')
    // e.g. 'trash-purge'
    .addColumn('job', 'text', (c) => c.notNull())
    .addColumn('item_id', 'text', (c) => c.notNull())
    // The lease is free again after this instant (ISO 8601): a crashed instance's claim expires.
    .addColumn('lease_until', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('job_leases_pk', ['job', 'item_id'])
    .execute();
  // Trash roots by age: the purge picks those trashed before the retention cutoff.
  await db.schema.createIndex('folders_deleted_idx').on('folders').columns(['deleted_at']).execute();
  await db.schema.createIndex('files_deleted_idx').on('files').columns(['deleted_at']).execute();
  // Closed links by age: the cleanup deletes links expired or revoked long ago.
  await db.schema.createIndex('share_links_expires_idx').on('share_links').columns(['expires_at']).execute();
  await db.schema.createIndex('share_links_revoked_idx').on('share_links').columns(['revoked_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const index of ['share_links_revoked_idx', 'share_links_expires_idx', 'files_deleted_idx', 'folders_deleted_idx']) {
    await db.schema.dropIndex(index).execute();
  }
  await db.schema.dropTable('job_leases').execute();
}
