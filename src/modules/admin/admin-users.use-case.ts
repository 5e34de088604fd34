import type { AppContext, Principal } from '../../context.js';
import type { UserRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { nowIso } from '../../lib/time.js';
import { findUserById, lockUser, setUserQuota } from '../accounts/accounts.repository.js';
import { quotaOf } from '../accounts/quota.js';
import * as repo from './admin.repository.js';
import type { AdminUser } from './admin.schemas.js';

/** The caller's account when it is an administrator's; else ADMIN_ONLY. */
export async function assertAdmin(ctx: AppContext, principal: Principal): Promise<UserRow> {
  const user = await findUserById(ctx.db, principal.userId);
  if (!user) throw new AppError('UNAUTHENTICATED');
  if (user.is_admin !== 1) throw new AppError('ADMIN_ONLY');
  return user;
}

function adminUserView(row: repo.AdminUserRow, config: AppContext['config']): AdminUser {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    isAdmin: row.is_admin === 1,
    disabled: row.disabled_at !== null,
    quotaBytes: quotaOf(row, config),
    customQuota: row.quota_bytes !== null,
    usedBytes: row.used_bytes,
    createdAt: row.created_at,
    lastActiveAt: row.last_active_at,
  };
}

/** Every account of the server, oldest first. */
export async function listUsers(ctx: AppContext, principal: Principal): Promise<AdminUser[]> {
  await assertAdmin(ctx, principal);
  return (await repo.listUsers(ctx.db)).map((row) => adminUserView(row, ctx.config));
}

/**
 * Sets an account's quota, or disables or enables it. Disabling deletes every token of the
 * account in the same transaction, under the row lock sign-ins take (issueSession): its sessions,
 * personal tokens and app passwords stop working at once on every instance, and no sign-in can add
 * one after. An administrator cannot disable their own account (nobody might be left to enable it).
 */
export async function updateUser(
  ctx: AppContext,
  principal: Principal,
  userId: string,
  changes: { quotaBytes?: number | null; disabled?: boolean },
): Promise<AdminUser> {
  await assertAdmin(ctx, principal);
  const target = await findUserById(ctx.db, userId);
  if (!target) throw new AppError('USER_NOT_FOUND');
  if (changes.disabled === true && target.id === principal.userId) throw new AppError('OWN_ACCOUNT');
  const now = nowIso();
  const revoked = await ctx.db.transaction().execute(async (trx) => {
    await lockUser(trx, ctx.database.capabilities.rowLocks, target.id);
    if (changes.quotaBytes !== undefined) await setUserQuota(trx, target.id, changes.quotaBytes, now);
    if (changes.disabled === undefined) return [];
    const current = await findUserById(trx, target.id);
    if (changes.disabled === (current?.disabled_at !== null)) return [];
    await repo.setDisabledAt(trx, target.id, changes.disabled ? now : null, now);
    return changes.disabled ? repo.deleteAllTokens(trx, target.id) : [];
  });
  for (const id of revoked) ctx.tokens.forget(id);
  if (changes.disabled) ctx.basicAuth.forgetUser(target.id);
  return adminUserView((await repo.findUser(ctx.db, target.id))!, ctx.config);
}
