import type { Kysely } from 'kysely';

/**
 * Where a session was opened, so its owner can tell their sessions apart before revoking one
 * (`GET /auth/sessions`): the User-Agent of the sign-in (the device shown is derived from it) and
 * the client address. Null for personal tokens and for sessions opened before this migration.
 * Not among the columns whose change the token trigger announces (006): they never change.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tokens').addColumn('user_agent', 'text').execute();
  await db.schema.alterTable('tokens').addColumn('client_address', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tokens').dropColumn('client_address').execute();
  await db.schema.alterTable('tokens').dropColumn('user_agent').execute();
}
