import type { Kysely } from 'kysely';

/**
 * Links copied again (issue 34): `share_links.link_key_wrapped` holds the link key wrapped by the
 * shared item's own key (AES-256-GCM, associated data `link-key:<link id>`), so its owner can have
 * the full address again. Null on links made before: their key was never kept.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('share_links').addColumn('link_key_wrapped', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('share_links').dropColumn('link_key_wrapped').execute();
}
