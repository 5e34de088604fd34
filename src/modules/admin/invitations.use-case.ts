import { consumeAttempt } from '../../access/throttle.js';
import type { AppContext, Principal } from '../../context.js';
import type { InvitationRow, UserRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { newId, randomToken } from '../../lib/ids.js';
import { hashPassword, hashToken } from '../../lib/secrets.js';
import { DAY_MS, isoPlus, nowIso } from '../../lib/time.js';
import { findUserByEmail, findUserById, lockUser, replacePasswordHash } from '../accounts/accounts.repository.js';
import type { Session } from '../accounts/accounts.schemas.js';
import { issueSession, type ClientInfo } from '../accounts/accounts.sessions.js';
import { normalizeEmail } from '../accounts/accounts.views.js';
import { createUser } from '../accounts/register.use-case.js';
import { assertAdmin } from './admin-users.use-case.js';
import * as repo from './admin.repository.js';
import type { Invitation } from './admin.schemas.js';

/** The page of the web app that opens an invitation link: `<public URL>/invite/<token>`. */
const INVITE_PATH = '/invite/';

function invitationView(row: InvitationRow): Invitation {
  return {
    id: row.id,
    purpose: row.purpose,
    email: row.email,
    quotaBytes: row.quota_bytes,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

/**
 * Stores a new one-time link in place of the unused ones it replaces; the link itself is returned
 * this once, only its token's hash is kept.
 */
async function issue(
  ctx: AppContext,
  by: UserRow,
  fields: Pick<InvitationRow, 'purpose' | 'email' | 'user_id' | 'quota_bytes'>,
  baseUrl: string,
) {
  const token = randomToken(32);
  const now = nowIso();
  const row: InvitationRow = {
    id: newId('inv'),
    token_hash: hashToken(token),
    ...fields,
    created_by: by.id,
    created_at: now,
    expires_at: isoPlus(now, ctx.config.invitationTtlDays * DAY_MS),
    used_at: null,
  };
  await ctx.db.transaction().execute(async (trx) => {
    await repo.deleteUnusedInvitations(trx, row.purpose, row.purpose === 'join' ? { email: row.email } : { userId: row.user_id! });
    await repo.insertInvitation(trx, row);
  });
  return { ...invitationView(row), invitationLink: `${baseUrl}${INVITE_PATH}${token}` };
}

/** Invites a person by e-mail address: a link with which they choose their password and join. */
export async function invite(ctx: AppContext, principal: Principal, input: { email: string; quotaBytes?: number | null }, baseUrl: string) {
  const admin = await assertAdmin(ctx, principal);
  const email = normalizeEmail(input.email);
  if (await findUserByEmail(ctx.db, email)) throw new AppError('EMAIL_TAKEN');
  return issue(ctx, admin, { purpose: 'join', email, user_id: null, quota_bytes: input.quotaBytes ?? null }, baseUrl);
}

/** A link with which the owner of an account chooses a new password (the account's e-mail is theirs to reach). */
export async function passwordResetLink(ctx: AppContext, principal: Principal, userId: string, baseUrl: string) {
  const admin = await assertAdmin(ctx, principal);
  const user = await findUserById(ctx.db, userId);
  if (!user) throw new AppError('USER_NOT_FOUND');
  return issue(ctx, admin, { purpose: 'reset', email: user.email, user_id: user.id, quota_bytes: null }, baseUrl);
}

/** The invitations to join not used yet and still valid, newest first (without their links). */
export async function listInvitations(ctx: AppContext, principal: Principal): Promise<Invitation[]> {
  await assertAdmin(ctx, principal);
  return (await repo.listPendingInvitations(ctx.db, nowIso())).map(invitationView);
}

/** Withdraws an invitation that was not used: its link stops working. */
export async function cancelInvitation(ctx: AppContext, principal: Principal, invitationId: string): Promise<void> {
  await assertAdmin(ctx, principal);
  if (!(await repo.deleteInvitation(ctx.db, invitationId))) throw new AppError('INVITATION_NOT_FOUND');
}

/** The invitation of a link, while it can still be used. */
async function usableInvitation(ctx: AppContext, token: string): Promise<InvitationRow> {
  const row = await repo.findInvitationByHash(ctx.db, hashToken(token));
  if (!row) throw new AppError('INVITATION_NOT_FOUND');
  if (row.used_at) throw new AppError('INVITATION_USED');
  if (row.expires_at <= nowIso()) throw new AppError('INVITATION_EXPIRED');
  return row;
}

/** What a link is for, for the page that opens it (the e-mail it was made for is shown to its holder). */
export async function describeInvitation(ctx: AppContext, token: string) {
  const row = await usableInvitation(ctx, token);
  return { purpose: row.purpose, email: row.email, expiresAt: row.expires_at };
}

/**
 * Uses a link once: joining makes the account (with the invitation's quota) and signs in; a reset
 * sets the new password, signs out the account's other sessions and signs in. Each attempt counts
 * against the client address like a sign-up.
 */
export async function acceptInvitation(
  ctx: AppContext,
  token: string,
  input: { password: string; name?: string },
  client: ClientInfo,
): Promise<Session> {
  const { db, config } = ctx;
  await consumeAttempt(db, [
    { key: `register:address:${client.address}`, limit: config.registrationMaxPerAddress, windowSeconds: config.registrationWindowSeconds },
  ]);
  const invitation = await usableInvitation(ctx, token);
  if (invitation.purpose === 'reset') return resetPassword(ctx, invitation, input.password, client);
  if (!input.name) throw new AppError('VALIDATION_FAILED', 'Give your name to join', [{ field: 'name', problem: 'is required' }]);
  const user = await createUser(
    ctx,
    { email: invitation.email, password: input.password, name: input.name },
    {
      quotaBytes: invitation.quota_bytes,
      alsoInTransaction: async (trx) => {
        if (!(await repo.markInvitationUsed(trx, invitation.id, nowIso()))) throw new AppError('INVITATION_USED');
      },
    },
  );
  return issueSession(ctx, user, client);
}

async function resetPassword(ctx: AppContext, invitation: InvitationRow, password: string, client: ClientInfo): Promise<Session> {
  const passwordHash = await hashPassword(password);
  const now = nowIso();
  const { user, revoked } = await ctx.db.transaction().execute(async (trx) => {
    await lockUser(trx, ctx.database.capabilities.rowLocks, invitation.user_id!);
    const current = await findUserById(trx, invitation.user_id!);
    if (!current) throw new AppError('INVITATION_NOT_FOUND');
    if (current.disabled_at) throw new AppError('ACCOUNT_DISABLED');
    if (!(await repo.markInvitationUsed(trx, invitation.id, now))) throw new AppError('INVITATION_USED');
    // Read under the lock just above: the compare-and-set cannot miss.
    await replacePasswordHash(trx, current.id, current.password_hash, passwordHash, now);
    return { user: { ...current, password_hash: passwordHash }, revoked: await repo.deleteSessions(trx, current.id) };
  });
  for (const id of revoked) ctx.tokens.forget(id);
  ctx.basicAuth.forgetUser(user.id);
  return issueSession(ctx, user, client);
}
