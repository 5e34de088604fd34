import type { Kysely } from 'kysely';

/**
 * Teams from the browser (issue 34). `users.is_admin` (0/1): administrators manage the accounts;
 * the first account is one, and on an existing server the oldest account becomes one.
 * `users.disabled_at`: a disabled account cannot sign in and has no tokens. `invitations` holds
 * the one-time links an administrator hands out (only the SHA-256 of each token): `join` makes an
 * account for `email` with the password its holder chooses, `reset` sets a new password for
 * `user_id`; `used_at` once used.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('is_admin', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('users').addColumn('disabled_at', 'text').execute();
  const oldest = await db.selectFrom('users').select('id').orderBy('created_at').orderBy('id').limit(1).executeTakeFirst();
  if (oldest) await db.updateTable('users').set({ is_admin: 1 }).where('id', '=', oldest.id).execute();
  await db.schema
    .createTable('invitations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('quota_bytes', 'bigint')
    .addColumn('created_by', 'text', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text')
    .execute();
  await db.schema.createIndex('invitations_email_idx').on('invitations').columns(['email']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('invitations').execute();
  await db.schema.alterTable('users').dropColumn('disabled_at').execute();
  await db.schema.alterTable('users').dropColumn('is_admin').execute();
}
