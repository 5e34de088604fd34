import type { AppContext, Principal } from '../../context.js';
import type { TokenRow, UserRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { clearAttempts, consumeAttempt, refundAttempt, type ThrottleRule } from '../../access/throttle.js';
import { newId } from '../../lib/ids.js';
import { hashPassword, hashToken, newBearerToken, verifyPassword } from '../../lib/secrets.js';
import { DAY_MS, isoPlus, nowIso } from '../../lib/time.js';
import { insertDatahubWithBucket } from '../datahubs/datahubs.repository.js';
import { findFirstActiveLocation } from '../regions/regions.repository.js';
import * as repo from './accounts.repository.js';
import { quotaOf } from './quota.js';
import type { PersonalToken, Session, User } from './accounts.schemas.js';
import { MAX_USER_AGENT_LENGTH } from './user-agent.js';

/** Who is on the other end of a request that opens a session: shown in the list of sessions. */
export interface ClientInfo {
  address: string;
  userAgent?: string;
}

const DEFAULT_DATAHUB_NAME = 'My datahub';
export const DEFAULT_BUCKET_NAME = 'default';

const FIRST_USER_TAKEN = 'Registration is closed: this server already has its first user';

function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** The failure counters of sign-in, per account and per client address; a password change counts its wrong guesses there too. */
export function signInRules(config: AppContext['config'], email: string, clientAddress: string): [account: ThrottleRule, address: ThrottleRule] {
  return [
    { key: `login:account:${normalizeEmail(email)}`, limit: config.loginMaxFailuresPerAccount, windowSeconds: config.loginWindowSeconds },
    { key: `login:address:${clientAddress}`, limit: config.loginMaxFailuresPerAddress, windowSeconds: config.loginWindowSeconds },
  ];
}

// Verifying against a real hash when the account does not exist keeps the timing of
// "unknown e-mail" and "wrong password" alike.
let dummyHash: Promise<string> | undefined;

export function accountService(ctx: AppContext) {
  const { db, config } = ctx;

  function toView(user: UserRow): User {
    return {
      id: user.id,
      email: user.email,
      name: user.name,
      defaultDatahubId: user.default_datahub_id,
      defaultBucketId: user.default_bucket_id,
      quotaBytes: quotaOf(user, config),
      createdAt: user.created_at,
    };
  }

  /**
   * Opens a session for `user`. After a sign-in (`verifiedHash`: the hash its password matched),
   * only while that is still the account's password, checked under the user's row lock, which a
   * password change takes too: a sign-in racing a change either sees the new hash here or was
   * committed before the change, which then signs it out.
   */
  async function issueSession(user: UserRow, client: ClientInfo, verifiedHash?: string): Promise<Session> {
    const token = newBearerToken();
    const now = nowIso();
    const expiresAt = isoPlus(now, config.sessionTtlDays * DAY_MS);
    const row: TokenRow = {
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
    if (verifiedHash === undefined) await repo.insertToken(db, row);
    else {
      await db.transaction().execute(async (trx) => {
        await repo.lockUser(trx, ctx.database.capabilities.rowLocks, user.id);
        if ((await repo.findUserById(trx, user.id))?.password_hash !== verifiedHash) throw new AppError('INVALID_CREDENTIALS');
        await repo.insertToken(trx, row);
      });
    }
    return { user: toView(user), accessToken: token, expiresAt };
  }

  /**
   * Creates an account with its default datahub (first active location), default bucket and the
   * bucket's root folder, all in one transaction. Used by sign-up and by `coffre user create`.
   */
  async function createUser(input: { email: string; password: string; name: string }, options: { onlyFirstUser?: boolean } = {}): Promise<UserRow> {
    const email = normalizeEmail(input.email);
    // Hashed before the e-mail is looked up: a taken e-mail then costs the same Argon2 work as a
    // new one, so the time of the answer does not tell it apart (README, "Accounts and the web origin").
    const passwordHash = await hashPassword(input.password);
    if (await repo.findUserByEmail(db, email)) throw new AppError('EMAIL_TAKEN');
    const now = nowIso();
    try {
      return await db.transaction().execute(async (trx) => {
        if (options.onlyFirstUser) {
          // Checked again under a lock: concurrent first sign-ups must not all pass the check.
          await repo.lockUserCreation(trx, ctx.database.capabilities.rowLocks);
          if ((await repo.countUsers(trx)) > 0) throw new AppError('REGISTRATION_CLOSED', FIRST_USER_TAKEN);
        }
        const location = await findFirstActiveLocation(trx);
        if (!location) throw new Error('no active location: the regions data file has none');
        const user: UserRow = {
          id: newId('usr'),
          email,
          name: input.name.trim(),
          password_hash: passwordHash,
          quota_bytes: null,
          default_datahub_id: null,
          default_bucket_id: null,
          used_bytes: 0,
          held_bytes: 0,
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
      });
    } catch (error) {
      // Two sign-ups with one e-mail at once: the unique index decides.
      if (await repo.findUserByEmail(db, email)) throw new AppError('EMAIL_TAKEN');
      throw error;
    }
  }

  /**
   * Every attempt counts against the client address, accepted or not: a taken e-mail is still
   * answered 409 (the client needs the reason, and a 201 must carry a token), so what limits
   * probing for accounts is the number of attempts, and the answer's time (see createUser).
   */
  async function register(input: { email: string; password: string; name: string }, client: ClientInfo): Promise<Session> {
    if (config.registration === 'closed') throw new AppError('REGISTRATION_CLOSED');
    await consumeAttempt(db, [{ key: `register:address:${client.address}`, limit: config.registrationMaxPerAddress, windowSeconds: config.registrationWindowSeconds }]);
    const onlyFirstUser = config.registration === 'first-user';
    if (onlyFirstUser && (await repo.countUsers(db)) > 0) throw new AppError('REGISTRATION_CLOSED', FIRST_USER_TAKEN);
    return issueSession(await createUser(input, { onlyFirstUser }), client);
  }

  /** Whether a sign-up would be accepted now, for the sign-in page (the policy itself is not secret). */
  async function registration(): Promise<{ policy: typeof config.registration; open: boolean }> {
    if (config.registration === 'closed') return { policy: 'closed', open: false };
    if (config.registration === 'first-user') return { policy: 'first-user', open: (await repo.countUsers(db)) === 0 };
    return { policy: 'open', open: true };
  }

  async function login(input: { email: string; password: string }, client: ClientInfo): Promise<Session> {
    const [accountRule, addressRule] = signInRules(config, input.email, client.address);
    await consumeAttempt(db, [accountRule, addressRule]);
    const user = await repo.findUserByEmail(db, normalizeEmail(input.email));
    dummyHash ??= hashPassword('coffre-timing-equaliser');
    const ok = await verifyPassword(user?.password_hash ?? (await dummyHash), input.password);
    if (!user || !ok) throw new AppError('INVALID_CREDENTIALS');
    // Only failures count: a success clears the account's counter and gives back its address attempt.
    await clearAttempts(db, [accountRule.key]);
    await refundAttempt(db, [addressRule.key]);
    return issueSession(user, client, user.password_hash);
  }

  async function logout(principal: Principal): Promise<void> {
    await repo.deleteToken(db, principal.userId, principal.tokenId);
    ctx.tokens.forget(principal.tokenId);
  }

  async function me(principal: Principal): Promise<User> {
    const user = await repo.findUserById(db, principal.userId);
    if (!user) throw new AppError('UNAUTHENTICATED');
    return toView(user);
  }

  function tokenView(row: TokenRow): PersonalToken {
    return { id: row.id, name: row.name, createdAt: row.created_at, expiresAt: row.expires_at, lastUsedAt: row.last_used_at };
  }

  async function createPersonalToken(principal: Principal, input: { name: string; expiresInDays?: number }) {
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
    await repo.insertToken(db, row);
    return { ...tokenView(row), token };
  }

  async function listPersonalTokens(principal: Principal): Promise<PersonalToken[]> {
    return (await repo.listPersonalTokens(db, principal.userId)).map(tokenView);
  }

  async function revokeToken(principal: Principal, tokenId: string): Promise<void> {
    if (!(await repo.deleteToken(db, principal.userId, tokenId))) throw new AppError('TOKEN_NOT_FOUND');
    ctx.tokens.forget(tokenId);
  }

  /** An exact (case-insensitive) e-mail only; found or not, each lookup counts against the caller and their address. */
  async function lookup(principal: Principal, email: string, clientAddress: string): Promise<{ id: string; name: string }> {
    const window = config.lookupWindowSeconds;
    await consumeAttempt(db, [
      { key: `lookup:user:${principal.userId}`, limit: config.lookupMaxPerUser, windowSeconds: window },
      { key: `lookup:address:${clientAddress}`, limit: config.lookupMaxPerAddress, windowSeconds: window },
    ]);
    const user = await repo.findUserByEmail(db, normalizeEmail(email));
    if (!user) throw new AppError('USER_NOT_FOUND');
    return { id: user.id, name: user.name };
  }

  async function setQuota(email: string, quotaBytes: number | null): Promise<User> {
    const user = await repo.findUserByEmail(db, normalizeEmail(email));
    if (!user) throw new AppError('USER_NOT_FOUND');
    await repo.setUserQuota(db, user.id, quotaBytes, nowIso());
    return toView({ ...user, quota_bytes: quotaBytes });
  }

  return { createUser, register, registration, login, logout, me, createPersonalToken, listPersonalTokens, revokeToken, lookup, setQuota };
}
