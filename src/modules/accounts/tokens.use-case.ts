import type { AppContext, Principal } from '../../context.js';
import type { TokenRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { newId } from '../../lib/ids.js';
import { hashToken, newBearerToken } from '../../lib/secrets.js';
import { DAY_MS, isoPlus, nowIso } from '../../lib/time.js';
import * as repo from './accounts.repository.js';
import type { PersonalToken } from './accounts.schemas.js';
import { tokenView } from './accounts.views.js';

/** Creates a personal token; the token itself is shown this once, only its hash is kept. */
export async function createPersonalToken(ctx: AppContext, principal: Principal, input: { name: string; expiresInDays?: number }) {
  const token = newBearerToken();
  const now = nowIso();
  const row: TokenRow = {
    id: newId('tok'),
    user_id: principal.userId,
    kind: 'personal',
    name: input.name.trim(),
    token_hash: hashToken(token),
    created_at: now,
    expires_at: input.expiresInDays ? isoPlus(now, input.expiresInDays * DAY_MS) : null,
    last_used_at: null,
    user_agent: null,
    client_address: null,
  };
  await repo.insertToken(ctx.db, row);
  return { ...tokenView(row), token };
}

export async function listPersonalTokens(ctx: AppContext, principal: Principal): Promise<PersonalToken[]> {
  return (await repo.listPersonalTokens(ctx.db, principal.userId)).map(tokenView);
}

/** Revokes one of the caller's tokens; this instance forgets it at once. */
export async function revokeToken(ctx: AppContext, principal: Principal, tokenId: string): Promise<void> {
  if (!(await repo.deleteToken(ctx.db, principal.userId, tokenId))) throw new AppError('TOKEN_NOT_FOUND');
  ctx.tokens.forget(tokenId);
}
