import type { DbOrTrx } from '../../db/database.js';
import type { InvitationRow, UserRow } from '../../db/schema.js';

/** An account as the administrators' list shows it: the user row and the last use of any of its tokens. */
export type AdminUserRow = UserRow & { last_active_at: string | null };

function usersWithActivity(db: DbOrTrx) {
  return db
    .selectFrom('users')
    .selectAll('users')
    .select((eb) =>
      eb
        .selectFrom('tokens')
        .whereRef('tokens.user_id', '=', 'users.id')
        .select((t) => t.fn.max('tokens.last_used_at').as('last'))
        .as('last_active_at'),
    );
}

/** Every account, oldest first, with the last time one of its sessions or tokens was used. */
export function listUsers(db: DbOrTrx): Promise<AdminUserRow[]> {
  return usersWithActivity(db).orderBy('users.created_at').orderBy('users.id').execute() as Promise<AdminUserRow[]>;
}

/** One account as the administrators' list shows it. */
export function findUser(db: DbOrTrx, userId: string): Promise<AdminUserRow | undefined> {
  return usersWithActivity(db).where('users.id', '=', userId).executeTakeFirst() as Promise<AdminUserRow | undefined>;
}

export async function setDisabledAt(db: DbOrTrx, userId: string, disabledAt: string | null, now: string): Promise<void> {
  await db.updateTable('users').set({ disabled_at: disabledAt, updated_at: now }).where('id', '=', userId).execute();
}

/** Deletes every token of the user (sessions, personal tokens, app passwords); returns their ids. */
export async function deleteAllTokens(db: DbOrTrx, userId: string): Promise<string[]> {
  const rows = await db.deleteFrom('tokens').where('user_id', '=', userId).returning('id').execute();
  return rows.map((row) => row.id);
}

/** Deletes the user's sign-in sessions (not personal tokens); returns their ids. */
export async function deleteSessions(db: DbOrTrx, userId: string): Promise<string[]> {
  const rows = await db.deleteFrom('tokens').where('user_id', '=', userId).where('kind', '=', 'session').returning('id').execute();
  return rows.map((row) => row.id);
}

export async function insertInvitation(db: DbOrTrx, row: InvitationRow): Promise<void> {
  await db.insertInto('invitations').values(row).execute();
}

export function findInvitationByHash(db: DbOrTrx, tokenHash: string): Promise<InvitationRow | undefined> {
  return db.selectFrom('invitations').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

/** The join invitations not used yet and not expired at `now`, newest first. */
export function listPendingInvitations(db: DbOrTrx, now: string): Promise<InvitationRow[]> {
  return db
    .selectFrom('invitations')
    .selectAll()
    .where('purpose', '=', 'join')
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** Deletes the unused invitations of a purpose for an e-mail (join) or a user (reset): a new link replaces them. */
export async function deleteUnusedInvitations(
  db: DbOrTrx,
  purpose: InvitationRow['purpose'],
  key: { email?: string; userId?: string },
): Promise<void> {
  let query = db.deleteFrom('invitations').where('purpose', '=', purpose).where('used_at', 'is', null);
  if (key.email !== undefined) query = query.where('email', '=', key.email);
  if (key.userId !== undefined) query = query.where('user_id', '=', key.userId);
  await query.execute();
}

/** Deletes the invitations used or expired before `before` (the upkeep's); returns how many. */
export async function deleteEndedInvitations(db: DbOrTrx, before: string): Promise<number> {
  const result = await db
    .deleteFrom('invitations')
    .where((eb) => eb.or([eb('used_at', '<', before), eb('expires_at', '<', before)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Deletes one unused invitation; returns whether it existed. */
export async function deleteInvitation(db: DbOrTrx, id: string): Promise<boolean> {
  const result = await db.deleteFrom('invitations').where('id', '=', id).where('used_at', 'is', null).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Marks an invitation used, if it is not yet (another request may have taken it): whether this one did. */
export async function markInvitationUsed(db: DbOrTrx, id: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('invitations')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
