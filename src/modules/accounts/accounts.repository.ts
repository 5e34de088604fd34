import { sql } from 'kysely';
import type { LiveToken } from '../../context.js';
import type { DbOrTrx } from '../../db/database.js';
import { preparedQuery } from '../../db/prepared-query.js';
import type { NewUser, TokenRow, UserRow } from '../../db/schema.js';

export async function countUsers(db: DbOrTrx): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

// Any fixed 64-bit number, unique among the advisory locks of the service.
const USER_CREATION_LOCK = 0x636f6666_7265;

/**
 * Makes concurrent sign-ups that depend on the number of users wait for each other, until the
 * end of the transaction. PostgreSQL: a transaction-scoped advisory lock; SQLite serialises
 * writers (and Kysely's single connection serialises transactions) already.
 */
export async function lockUserCreation(trx: DbOrTrx, rowLocks: boolean): Promise<void> {
  if (rowLocks) await sql`select pg_advisory_xact_lock(${USER_CREATION_LOCK})`.execute(trx);
}

/**
 * Serialises, until the end of the transaction, the changes of one owner's buckets and trees (the
 * same row lock `lockTrees` takes), so a check such as "this bucket is empty" or "this name is
 * free" still holds when the change is written. SQLite serialises writers already.
 */
export async function lockUser(trx: DbOrTrx, rowLocks: boolean, userId: string): Promise<void> {
  if (rowLocks) await sql`select id from users where id = ${userId} for no key update`.execute(trx);
}

export function findUserByEmail(db: DbOrTrx, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
}

/** What a remembered password check depends on: the account's e-mail, password hash and whether it is disabled. */
export function findUserCredentials(
  db: DbOrTrx,
  id: string,
): Promise<Pick<UserRow, 'email' | 'password_hash' | 'disabled_at'> | undefined> {
  return db.selectFrom('users').select(['email', 'password_hash', 'disabled_at']).where('id', '=', id).executeTakeFirst();
}

export function findUserById(db: DbOrTrx, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function insertUser(db: DbOrTrx, user: NewUser): Promise<void> {
  await db.insertInto('users').values(user).execute();
}

export async function setUserDefaults(db: DbOrTrx, userId: string, datahubId: string, bucketId: string): Promise<void> {
  await db.updateTable('users').set({ default_datahub_id: datahubId, default_bucket_id: bucketId }).where('id', '=', userId).execute();
}

export async function setUserQuota(db: DbOrTrx, userId: string, quotaBytes: number | null, now: string): Promise<void> {
  await db.updateTable('users').set({ quota_bytes: quotaBytes, updated_at: now }).where('id', '=', userId).execute();
}

export async function insertToken(db: DbOrTrx, token: TokenRow): Promise<void> {
  await db.insertInto('tokens').values(token).execute();
}

/** Live tokens (not expired, their user not disabled) with their user, at `now`. */
function liveTokens(db: DbOrTrx, now: string) {
  return db
    .selectFrom('tokens')
    .innerJoin('users', 'users.id', 'tokens.user_id')
    .select([
      'tokens.id as tokenId',
      'tokens.expires_at as expiresAt',
      'tokens.last_used_at as lastUsedAt',
      'users.id as userId',
      'users.email',
      'users.name',
    ])
    .where('users.disabled_at', 'is', null)
    .where((eb) => eb.or([eb('tokens.expires_at', 'is', null), eb('tokens.expires_at', '>', now)]));
}

// Every authenticated request runs it: built once (see preparedQuery).
const liveToken = preparedQuery((db, p: { tokenHash: string; now: string }) =>
  liveTokens(db, p.now).where('tokens.token_hash', '=', p.tokenHash),
);

/** The token with this hash that is live at `now`, with its user. */
export function findLiveToken(db: DbOrTrx, tokenHash: string, now: string): Promise<LiveToken | undefined> {
  return liveToken.takeFirst(db, { tokenHash, now });
}

/** The token with this id if it is live at `now`, with its user (a preview ticket's session). */
export function findLiveTokenById(db: DbOrTrx, tokenId: string, now: string): Promise<LiveToken | undefined> {
  return liveTokens(db, now).where('tokens.id', '=', tokenId).executeTakeFirst();
}

export async function touchToken(db: DbOrTrx, tokenId: string, now: string): Promise<void> {
  await db.updateTable('tokens').set({ last_used_at: now }).where('id', '=', tokenId).execute();
}

export function listPersonalTokens(db: DbOrTrx, userId: string): Promise<TokenRow[]> {
  return db.selectFrom('tokens').selectAll().where('user_id', '=', userId).where('kind', '=', 'personal').orderBy('id', 'desc').execute();
}

/** Deletes one token of the user; returns whether it existed. */
export async function deleteToken(db: DbOrTrx, userId: string, tokenId: string): Promise<boolean> {
  const result = await db.deleteFrom('tokens').where('id', '=', tokenId).where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The live sign-in sessions of a user (not personal tokens), newest first. */
export function listSessions(db: DbOrTrx, userId: string, now: string): Promise<TokenRow[]> {
  return db
    .selectFrom('tokens')
    .selectAll()
    .where('user_id', '=', userId)
    .where('kind', '=', 'session')
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .orderBy('id', 'desc')
    .execute();
}

/** Deletes one sign-in session of the user; returns whether it existed. */
export async function deleteSession(db: DbOrTrx, userId: string, tokenId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('tokens')
    .where('id', '=', tokenId)
    .where('user_id', '=', userId)
    .where('kind', '=', 'session')
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Deletes every sign-in session of the user but `keepId`; the ids deleted. */
export async function deleteOtherSessions(db: DbOrTrx, userId: string, keepId: string): Promise<string[]> {
  const rows = await db
    .deleteFrom('tokens')
    .where('user_id', '=', userId)
    .where('kind', '=', 'session')
    .where('id', '!=', keepId)
    .returning('id')
    .execute();
  return rows.map((row) => row.id);
}

/** Sets a new password hash if the account's is still `oldHash`; returns whether it did. */
export async function replacePasswordHash(db: DbOrTrx, userId: string, oldHash: string, newHash: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ password_hash: newHash, updated_at: now })
    .where('id', '=', userId)
    .where('password_hash', '=', oldHash)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function deleteExpiredTokens(db: DbOrTrx, now: string): Promise<void> {
  await db.deleteFrom('tokens').where('expires_at', '<=', now).execute();
}

/**
 * Adds `bytes` to the user's used bytes only if the quota allows it, in one conditional update,
 * so concurrent uploads on any number of instances never pass the quota together. What uploads in
 * flight hold counts too (upload-holds.ts); `released` of it, the recorded uploads' own holds
 * (their rows deleted by the caller), turns into used bytes here.
 */
export async function reserveBytes(db: DbOrTrx, userId: string, bytes: number, defaultQuota: number, released = 0): Promise<boolean> {
  const result = await sql`
    update users set used_bytes = used_bytes + ${bytes}, held_bytes = held_bytes - ${released}
    where id = ${userId} and used_bytes + held_bytes - ${released} + ${bytes} <= coalesce(quota_bytes, ${defaultQuota})
  `.execute(db);
  return Number(result.numAffectedRows ?? 0) === 1;
}

export async function releaseBytes(db: DbOrTrx, userId: string, bytes: number): Promise<void> {
  if (bytes !== 0) await sql`update users set used_bytes = used_bytes - ${bytes} where id = ${userId}`.execute(db);
}
