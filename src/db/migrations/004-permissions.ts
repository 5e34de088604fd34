import type { Kysely } from 'kysely';

// Per-user permissions on files and folders (docs/api.md). Numbered 004: 003 is the share links'.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('permissions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // 'file' or 'folder'; item_id names a row of that table. No foreign key can span both, so
    // deleting an item for good deletes its permissions in the same transaction.
    .addColumn('item_kind', 'text', (c) => c.notNull())
    .addColumn('item_id', 'text', (c) => c.notNull())
    // The item's owner when the grant was made; kept so "what did I share" needs no join.
    .addColumn('owner_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('can_view', 'integer', (c) => c.notNull())
    .addColumn('can_download', 'integer', (c) => c.notNull())
    .addColumn('can_edit', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // One permission per (item, grantee); also the index of "the grants on an item".
  await db.schema
    .createIndex('permissions_item_user_unique')
    .on('permissions')
    .columns(['item_kind', 'item_id', 'user_id'])
    .unique()
    .execute();
  // "The grants of a user": access checks and /shared-with-me (keyset on id, which sorts by time).
  await db.schema.createIndex('permissions_user_idx').on('permissions').columns(['user_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('permissions').execute();
}
