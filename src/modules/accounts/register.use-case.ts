import { consumeAttempt } from '../../access/throttle.js';
import type { AppContext } from '../../context.js';
import type { DbOrTrx } from '../../db/database.js';
import type { UserRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { newId } from '../../lib/ids.js';
import { hashPassword } from '../../lib/secrets.js';
import { nowIso } from '../../lib/time.js';
import { insertDatahubWithBucket } from '../datahubs/datahubs.repository.js';
import { findFirstActiveLocation } from '../regions/regions.repository.js';
import * as repo from './accounts.repository.js';
import type { Session } from './accounts.schemas.js';
import { issueSession, type ClientInfo } from './accounts.sessions.js';
import { normalizeEmail } from './accounts.views.js';

const DEFAULT_DATAHUB_NAME = 'My datahub';
export const DEFAULT_BUCKET_NAME = 'default';

const FIRST_USER_TAKEN = 'Registration is closed: this server already has its first user';

interface NewAccount {
  email: string;
  password: string;
  name: string;
}

/**
 * Every attempt counts against the client address, accepted or not: a taken e-mail is still
 * answered 409 (the client needs the reason, and a 201 must carry a token), so what limits
 * probing for accounts is the number of attempts, and the answer's time (see createUser).
 */
export async function register(ctx: AppContext, input: NewAccount, client: ClientInfo): Promise<Session> {
  const { db, config } = ctx;
  if (config.registration === 'closed') throw new AppError('REGISTRATION_CLOSED');
  await consumeAttempt(db, [
    { key: `register:address:${client.address}`, limit: config.registrationMaxPerAddress, windowSeconds: config.registrationWindowSeconds },
  ]);
  const onlyFirstUser = config.registration === 'first-user';
  if (onlyFirstUser && (await repo.countUsers(db)) > 0) throw new AppError('REGISTRATION_CLOSED', FIRST_USER_TAKEN);
  return issueSession(ctx, await createUser(ctx, input, { onlyFirstUser }), client);
}

/** Whether a sign-up would be accepted now, for the sign-in page (the policy itself is not secret). */
export async function registration(ctx: AppContext): Promise<{ policy: AppContext['config']['registration']; open: boolean }> {
  const { db, config } = ctx;
  if (config.registration === 'closed') return { policy: 'closed', open: false };
  if (config.registration === 'first-user') return { policy: 'first-user', open: (await repo.countUsers(db)) === 0 };
  return { policy: 'open', open: true };
}

export interface NewAccountOptions {
  /** Refuse unless no account exists yet (the first-user registration policy). */
  onlyFirstUser?: boolean;
  /** The account's quota (null or absent: the server's default). */
  quotaBytes?: number | null;
  /** Runs in the account's transaction once it is inserted (an invitation marked used). */
  alsoInTransaction?: (trx: DbOrTrx, user: UserRow) => Promise<void>;
}

/**
 * Creates an account with its default datahub (first active location), default bucket and the
 * bucket's root folder, all in one transaction; the first account is an administrator. Used by
 * sign-up, invitations and `coffre user create`.
 */
export async function createUser(ctx: AppContext, input: NewAccount, options: NewAccountOptions = {}): Promise<UserRow> {
  const { db } = ctx;
  const email = normalizeEmail(input.email);
  // Hashed before the e-mail is looked up: a taken e-mail then costs the same Argon2 work as a
  // new one, so the time of the answer does not tell it apart (README, "Accounts and the web origin").
  const passwordHash = await hashPassword(input.password);
  if (await repo.findUserByEmail(db, email)) throw new AppError('EMAIL_TAKEN');
  const now = nowIso();
  try {
    return await db.transaction().execute(async (trx) => {
      // Counted under a lock: of concurrent first sign-ups, one alone is the first account.
      await repo.lockUserCreation(trx, ctx.database.capabilities.rowLocks);
      const first = (await repo.countUsers(trx)) === 0;
      if (options.onlyFirstUser && !first) throw new AppError('REGISTRATION_CLOSED', FIRST_USER_TAKEN);
      const account = { email, name: input.name.trim(), passwordHash, isAdmin: first, quotaBytes: options.quotaBytes ?? null };
      const user = await insertAccount(ctx, trx, account, now);
      await options.alsoInTransaction?.(trx, user);
      return user;
    });
  } catch (error) {
    // Two sign-ups with one e-mail at once: the unique index decides.
    if (await repo.findUserByEmail(db, email)) throw new AppError('EMAIL_TAKEN');
    throw error;
  }
}

/** Inserts the user, then its default datahub and bucket, which become the user's defaults. */
async function insertAccount(
  ctx: AppContext,
  trx: DbOrTrx,
  account: { email: string; name: string; passwordHash: string; isAdmin: boolean; quotaBytes: number | null },
  now: string,
): Promise<UserRow> {
  const location = await findFirstActiveLocation(trx);
  if (!location) throw new Error('no active location: the regions data file has none');
  const user: UserRow = {
    id: newId('usr'),
    email: account.email,
    name: account.name,
    password_hash: account.passwordHash,
    quota_bytes: account.quotaBytes,
    default_datahub_id: null,
    default_bucket_id: null,
    used_bytes: 0,
    held_bytes: 0,
    is_admin: account.isAdmin ? 1 : 0,
    disabled_at: null,
    created_at: now,
    updated_at: now,
  };
  await repo.insertUser(trx, user);
  const { datahub, bucket } = await insertDatahubWithBucket(trx, ctx.keyring, {
    ownerId: user.id,
    name: DEFAULT_DATAHUB_NAME,
    locationId: location.id,
    bucketName: DEFAULT_BUCKET_NAME,
    now,
  });
  await repo.setUserDefaults(trx, user.id, datahub.id, bucket.id);
  return { ...user, default_datahub_id: datahub.id, default_bucket_id: bucket.id };
}
