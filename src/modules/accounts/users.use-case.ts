import { consumeAttempt } from '../../access/throttle.js';
import type { AppContext, Principal } from '../../context.js';
import { AppError } from '../../errors.js';
import { nowIso } from '../../lib/time.js';
import * as repo from './accounts.repository.js';
import type { User } from './accounts.schemas.js';
import { normalizeEmail, userView } from './accounts.views.js';

/** The caller's own account. */
export async function me(ctx: AppContext, principal: Principal): Promise<User> {
  const user = await repo.findUserById(ctx.db, principal.userId);
  if (!user) throw new AppError('UNAUTHENTICATED');
  return userView(user, ctx.config);
}

/** An exact (case-insensitive) e-mail only; found or not, each lookup counts against the caller and their address. */
export async function lookup(
  ctx: AppContext,
  principal: Principal,
  email: string,
  clientAddress: string,
): Promise<{ id: string; name: string }> {
  const { db, config } = ctx;
  const window = config.lookupWindowSeconds;
  await consumeAttempt(db, [
    { key: `lookup:user:${principal.userId}`, limit: config.lookupMaxPerUser, windowSeconds: window },
    { key: `lookup:address:${clientAddress}`, limit: config.lookupMaxPerAddress, windowSeconds: window },
  ]);
  const user = await repo.findUserByEmail(db, normalizeEmail(email));
  if (!user) throw new AppError('USER_NOT_FOUND');
  return { id: user.id, name: user.name };
}

/** Sets the quota of an account (`null`: the server's default), for `coffre user quota`. */
export async function setQuota(ctx: AppContext, email: string, quotaBytes: number | null): Promise<User> {
  const user = await repo.findUserByEmail(ctx.db, normalizeEmail(email));
  if (!user) throw new AppError('USER_NOT_FOUND');
  await repo.setUserQuota(ctx.db, user.id, quotaBytes, nowIso());
  return userView({ ...user, quota_bytes: quotaBytes }, ctx.config);
}
