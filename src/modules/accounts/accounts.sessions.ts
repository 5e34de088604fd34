import type { AppContext } from '../../context.js';
import type { TokenRow, UserRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { newId } from '../../lib/ids.js';
import { hashToken, newBearerToken } from '../../lib/secrets.js';
import { DAY_MS, isoPlus, nowIso } from '../../lib/time.js';
import * as repo from './accounts.repository.js';
import type { Session } from './accounts.schemas.js';
import { userView } from './accounts.views.js';
import { MAX_USER_AGENT_LENGTH } from './user-agent.js';

/** Who is on the other end of a request that opens a session: shown in the list of sessions. */
export interface ClientInfo {
  address: string;
  userAgent?: string;
}

/**
 * Opens a session for `user`. After a sign-in (`verifiedHash`: the hash its password matched),
 * only while that is still the account's password, checked under the user's row lock, which a
 * password change takes too: a sign-in racing a change either sees the new hash here or was
 * committed before the change, which then signs it out. Disabling an account takes that lock too.
 */
export async function issueSession(ctx: AppContext, user: UserRow, client: ClientInfo, verifiedHash?: string): Promise<Session> {
  const { db, config } = ctx;
  const token = newBearerToken();
  const now = nowIso();
  const expiresAt = isoPlus(now, config.sessionTtlDays * DAY_MS);
  const row = sessionRow(user, client, token, now, expiresAt);
  if (verifiedHash === undefined) await repo.insertToken(db, row);
  else {
    await db.transaction().execute(async (trx) => {
      await repo.lockUser(trx, ctx.database.capabilities.rowLocks, user.id);
      const current = await repo.findUserById(trx, user.id);
      if (current?.password_hash !== verifiedHash) throw new AppError('INVALID_CREDENTIALS');
      // Disabled meanwhile: disabling deletes the tokens under this lock, so none is added after.
      if (current.disabled_at) throw new AppError('ACCOUNT_DISABLED');
      await repo.insertToken(trx, row);
    });
  }
  return { user: userView(user, config), accessToken: token, expiresAt };
}

/** The row of a new session token: only the token's hash is kept. */
function sessionRow(user: UserRow, client: ClientInfo, token: string, now: string, expiresAt: string): TokenRow {
  return {
    id: newId('tok'),
    user_id: user.id,
    kind: 'session',
    name: 'session',
    token_hash: hashToken(token),
    created_at: now,
    expires_at: expiresAt,
    last_used_at: now,
    user_agent: client.userAgent?.slice(0, MAX_USER_AGENT_LENGTH) || null,
    client_address: client.address,
  };
}
