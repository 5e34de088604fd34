import type { Kysely } from 'kysely';

// Public share links of files and folders (docs/api.md).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('share_links')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('shared_hash', 'text', (c) => c.notNull().unique())
    .addColumn('kind', 'text', (c) => c.notNull()) // 'file' | 'folder'
    .addColumn('file_id', 'text', (c) => c.references('files.id').onDelete('cascade'))
    .addColumn('folder_id', 'text', (c) => c.references('folders.id').onDelete('cascade'))
    .addColumn('owner_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    // The item's key wrapped by the link key (which the server never keeps), the link id as associated data.
    .addColumn('key_wrapped', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text')
    .addColumn('expires_at', 'text')
    .addColumn('max_access', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('access_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('can_view', 'integer', (c) => c.notNull())
    .addColumn('can_download', 'integer', (c) => c.notNull())
    .addColumn('can_edit', 'integer', (c) => c.notNull())
    .addColumn('is_public', 'integer', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('share_links_file_idx').on('share_links').columns(['file_id', 'revoked_at']).execute();
  await db.schema.createIndex('share_links_folder_idx').on('share_links').columns(['folder_id', 'revoked_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('share_links').execute();
}
