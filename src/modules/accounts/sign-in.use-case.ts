import { clearAttempts, consumeAttempt, refundAttempt, type ThrottleRule } from '../../access/throttle.js';
import type { AppContext, Principal } from '../../context.js';
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

/** Signs in with an e-mail and a password, counted against the account and the client address. */
export async function login(ctx: AppContext, input: { email: string; password: string }, client: ClientInfo): Promise<Session> {
  const { db, config } = ctx;
  const [accountRule, addressRule] = signInRules(config, input.email, client.address);
  await consumeAttempt(db, [accountRule, addressRule]);
  const user = await repo.findUserByEmail(db, normalizeEmail(input.email));
  dummyHash ??= hashPassword('coffre-timing-equaliser');
  const ok = await verifyPassword(user?.password_hash ?? (await dummyHash), input.password);
  if (!user || !ok) throw new AppError('INVALID_CREDENTIALS');
  // Only failures count: a success clears the account's counter and gives back its address attempt.
  await clearAttempts(db, [accountRule.key]);
  await refundAttempt(db, [addressRule.key]);
  return issueSession(ctx, user, client, user.password_hash);
}

/** Revokes the token this request came with: the caller's session ends. */
export async function logout(ctx: AppContext, principal: Principal): Promise<void> {
  await repo.deleteToken(ctx.db, principal.userId, principal.tokenId);
  ctx.tokens.forget(principal.tokenId);
}
