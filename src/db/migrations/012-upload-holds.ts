import type { Kysely } from 'kysely';

/**
 * Uploads in flight count against the quota (issue 29): `users.held_bytes` is what the owner's
 * uploads in flight hold, checked with `used_bytes` in one conditional update; each upload's
 * share is a row of `upload_holds` whose lease its instance renews, so the upkeep can give back
 * what a crashed instance held. No foreign key: a hold lives minutes and is written in steps on
 * the upload's path, where the key check would cost a lookup of the owner each time.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('held_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('upload_holds')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('bytes', 'bigint', (c) => c.notNull())
    // The hold is the upkeep's to clear after this instant (ISO 8601) unless renewed.
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('upload_holds_expires_idx').on('upload_holds').columns(['expires_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('upload_holds').execute();
  await db.schema.alterTable('users').dropColumn('held_bytes').execute();
}
