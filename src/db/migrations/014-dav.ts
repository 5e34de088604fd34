import type { Kysely } from 'kysely';

/**
 * WebDAV (issue 31). `dav_properties` keeps the dead properties clients set with PROPPATCH, by
 * item (a file's or a folder's id, so they follow a MOVE) and Clark name (`{namespace}local`), the
 * value being the property element as XML text. `dav_locks` keeps write locks in the database so
 * every instance honours them: the lock token (`urn:uuid:`), who holds it, the item it is rooted
 * on, its depth (`0` or `infinity`), scope (`exclusive` or `shared`), the owner XML the client
 * gave, and until when it holds (ISO 8601).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('dav_properties')
    .addColumn('item_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('dav_properties_pk', ['item_id', 'name'])
    .execute();
  await db.schema
    .createTable('dav_locks')
    .addColumn('token', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('item_id', 'text', (c) => c.notNull())
    .addColumn('depth', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('owner_xml', 'text')
    .addColumn('timeout_seconds', 'integer', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('dav_locks_item_idx').on('dav_locks').columns(['item_id']).execute();
  await db.schema.createIndex('dav_locks_expires_idx').on('dav_locks').columns(['expires_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('dav_locks').execute();
  await db.schema.dropTable('dav_properties').execute();
}
