import type { AppContext } from '../../context.js';
import type { TokenRow, UserRow } from '../../db/schema.js';
import type { PersonalToken, User } from './accounts.schemas.js';
import { quotaOf } from './quota.js';

/** E-mails are stored trimmed and lower-case: one account per address, however it is typed. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** A user as the API shows it, with the quota in force (its own, else the server's). */
export function userView(user: UserRow, config: AppContext['config']): User {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    defaultDatahubId: user.default_datahub_id,
    defaultBucketId: user.default_bucket_id,
    quotaBytes: quotaOf(user, config),
    isAdmin: user.is_admin === 1,
    createdAt: user.created_at,
  };
}

/** A personal token as its owner sees it: never the token itself, only its hash is kept. */
export function tokenView(row: TokenRow): PersonalToken {
  return { id: row.id, name: row.name, createdAt: row.created_at, expiresAt: row.expires_at, lastUsedAt: row.last_used_at };
}
