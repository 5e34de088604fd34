import { clearAttempts, consumeAttempt, refundAttempt } from '../../access/throttle.js';
import type { AppContext, Principal } from '../../context.js';
import type { TokenRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { hashPassword, verifyPassword } from '../../lib/secrets.js';
import { nowIso } from '../../lib/time.js';
import * as repo from './accounts.repository.js';
import { signInRules } from './accounts.service.js';
import type { SessionInfo } from './accounts.schemas.js';
import { describeDevice } from './user-agent.js';

/**
 * The sign-in sessions of an account, beside its personal tokens (`/auth/tokens`): list, revoke
 * one, and change the password, which signs out every other session. A revocation deletes the
 * token's row; this instance forgets the token at once, and the database announces the deletion
 * to every other instance (migration 006, tokens.cache.ts).
 */
export function sessionService(ctx: AppContext) {
  const { db, config } = ctx;

  function view(row: TokenRow, principal: Principal): SessionInfo {
    return {
      id: row.id,
      device: describeDevice(row.user_agent),
      userAgent: row.user_agent,
      clientAddress: row.client_address,
      createdAt: row.created_at,
      lastUsedAt: row.last_used_at,
      expiresAt: row.expires_at,
      current: row.id === principal.tokenId,
    };
  }

  async function list(principal: Principal): Promise<SessionInfo[]> {
    return (await repo.listSessions(db, principal.userId, nowIso())).map((row) => view(row, principal));
  }

  /** Personal tokens are not sessions here (404): they are revoked under `/auth/tokens`. */
  async function revoke(principal: Principal, sessionId: string): Promise<void> {
    if (!(await repo.deleteSession(db, principal.userId, sessionId))) throw new AppError('SESSION_NOT_FOUND');
    ctx.tokens.forget(sessionId);
  }

  /**
   * Needs the current password, whose wrong guesses count with the account's sign-in failures
   * (a stolen token guesses no faster than a sign-in form). Every other session is signed out;
   * the caller's session and the personal tokens stay (scripts are not broken by a new password;
   * their list is beside the sessions').
   */
  async function changePassword(
    principal: Principal,
    input: { currentPassword: string; newPassword: string },
    clientAddress: string,
  ): Promise<{ revokedSessions: number }> {
    const user = await repo.findUserById(db, principal.userId);
    if (!user) throw new AppError('UNAUTHENTICATED');
    const [accountRule, addressRule] = signInRules(config, user.email, clientAddress);
    await consumeAttempt(db, [accountRule, addressRule]);
    if (!(await verifyPassword(user.password_hash, input.currentPassword))) throw new AppError('WRONG_CURRENT_PASSWORD');
    const newHash = await hashPassword(input.newPassword);
    const revoked = await db.transaction().execute(async (trx) => {
      // The lock orders this change with sign-ins that checked the old password (issueSession).
      await repo.lockUser(trx, ctx.database.capabilities.rowLocks, user.id);
      // Changed meanwhile by a request that knew the same password: that change stands.
      if (!(await repo.replacePasswordHash(trx, user.id, user.password_hash, newHash, nowIso())))
        throw new AppError('WRONG_CURRENT_PASSWORD');
      return repo.deleteOtherSessions(trx, user.id, principal.tokenId);
    });
    for (const id of revoked) ctx.tokens.forget(id);
    // Basic sign-ins with the old password stop here at once (elsewhere, when their cache entry ends).
    ctx.basicAuth.forgetUser(user.id);
    await clearAttempts(db, [accountRule.key]);
    await refundAttempt(db, [addressRule.key]);
    return { revokedSessions: revoked.length };
  }

  return { list, revoke, changePassword };
}
