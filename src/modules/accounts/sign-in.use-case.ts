import { clearAttempts, consumeAttempt, refundAttempt, type ThrottleRule } from '../../access/throttle.js';
import type { AppContext, Principal } from '../../context.js';
import type { UserRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { hashPassword, verifyPassword } from '../../lib/secrets.js';
import * as repo from './accounts.repository.js';
import type { Session } from './accounts.schemas.js';
import { issueSession, type ClientInfo } from './accounts.sessions.js';
import { normalizeEmail } from './accounts.views.js';

/** The failure counters of sign-in, per account and per client address; a password change counts its wrong guesses there too. */
export function signInRules(
  config: AppContext['config'],
  email: string,
  clientAddress: string,
): [account: ThrottleRule, address: ThrottleRule] {
  return [
    { key: `login:account:${normalizeEmail(email)}`, limit: config.loginMaxFailuresPerAccount, windowSeconds: config.loginWindowSeconds },
    { key: `login:address:${clientAddress}`, limit: config.loginMaxFailuresPerAddress, windowSeconds: config.loginWindowSeconds },
  ];
}

// Verifying against a real hash when the account does not exist keeps the timing of
// "unknown e-mail" and "wrong password" alike.
let dummyHash: Promise<string> | undefined;

/** How a password is checked against its hash (tests count the calls). */
export type PasswordVerifier = (passwordHash: string, password: string) => Promise<boolean>;

/**
 * Checks an e-mail and password as a sign-in does, counted against the account and the client
 * address (429 with `Retry-After` past their limits): the account, or INVALID_CREDENTIALS. The
 * sign-in route and HTTP Basic (basic-auth.use-case.ts) share it, and so share the counters.
 */
export async function checkPassword(
  ctx: Pick<AppContext, 'db' | 'config'>,
  input: { email: string; password: string },
  clientAddress: string,
  verify: PasswordVerifier = verifyPassword,
): Promise<UserRow> {
  const { db, config } = ctx;
  const [accountRule, addressRule] = signInRules(config, input.email, clientAddress);
  await consumeAttempt(db, [accountRule, addressRule]);
  const user = await repo.findUserByEmail(db, normalizeEmail(input.email));
  dummyHash ??= hashPassword('coffre-timing-equaliser');
  const ok = await verify(user?.password_hash ?? (await dummyHash), input.password);
  if (!user || !ok) throw new AppError('INVALID_CREDENTIALS');
  // Said only to whoever knows the password: a disabled account is not told apart from a wrong guess.
  if (user.disabled_at) throw new AppError('ACCOUNT_DISABLED');
  // Only failures count: a success clears the account's counter and gives back its address attempt.
  await clearAttempts(db, [accountRule.key]);
  await refundAttempt(db, [addressRule.key]);
  return user;
}

/** Signs in with an e-mail and a password, counted against the account and the client address. */
export async function login(ctx: AppContext, input: { email: string; password: string }, client: ClientInfo): Promise<Session> {
  const user = await checkPassword(ctx, input, client.address);
  return issueSession(ctx, user, client, user.password_hash);
}

/** Revokes the token this request came with: the caller's session ends. */
export async function logout(ctx: AppContext, principal: Principal): Promise<void> {
  await repo.deleteToken(ctx.db, principal.userId, principal.tokenId);
  ctx.tokens.forget(principal.tokenId);
}
