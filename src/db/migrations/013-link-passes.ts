import type { Kysely } from 'kysely';

/**
 * Fair link counting (issue 29): an access is spent by a transfer that delivers its last byte.
 * `share_links.key_check` is the SHA-256 (hex) of the link's key proof, so the sealed route can
 * refuse a visitor without the key before it counts anything; null on links made before it.
 * `link_passes` holds the resume passes handed to downloads (only the SHA-256 of each token):
 * `held` while transfers are in flight (`in_flight` of them) on a reserved access, `spent` once
 * one delivered its last byte, `released` when they all broke off and the access was given back.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('share_links').addColumn('key_check', 'text').execute();
  await db.schema
    .createTable('link_passes')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('link_id', 'text', (c) => c.notNull().references('share_links.id').onDelete('cascade'))
    .addColumn('version_id', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('in_flight', 'integer', (c) => c.notNull().defaultTo(0))
    // Usable for a resume until this instant (ISO 8601); a held pass is kept longer (see deleteOldPasses).
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('link_passes_link_idx').on('link_passes').columns(['link_id']).execute();
  await db.schema.createIndex('link_passes_expires_idx').on('link_passes').columns(['expires_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('link_passes').execute();
  await db.schema.alterTable('share_links').dropColumn('key_check').execute();
}
