import { createHmac, randomBytes } from 'node:crypto';
import { assertNotThrottled } from '../../access/throttle.js';
import { principalOfToken, type AppContext, type BasicAuthCheck, type BasicCredentials, type Principal } from '../../context.js';
import { AppError } from '../../errors.js';
import { verifyPassword } from '../../lib/secrets.js';
import { nowIso } from '../../lib/time.js';
import { findUserCredentials } from './accounts.repository.js';
import { normalizeEmail } from './accounts.views.js';
import { checkPassword, signInRules, type PasswordVerifier } from './sign-in.use-case.js';

/**
 * The `tokenId` of a principal that signed in with its password over Basic: it has no token, and
 * token ids are `tok_…`, so this one matches none. Signing out with it deletes nothing, the list
 * of sessions marks none as current, and a password change made with it signs out every session.
 */
export const BASIC_PASSWORD_TOKEN_ID = 'basic-password';

/** How long a successful password check is remembered, by default (the bound stated below). */
export const BASIC_AUTH_CACHE_TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;
const TOKEN_PREFIX = 'cof_';
const WRONG_CREDENTIALS = 'Wrong e-mail, password or token';

export interface BasicAuthOptions {
  /** How long a successful password check is remembered (default BASIC_AUTH_CACHE_TTL_MS). */
  ttlMs?: number;
  /** Successes remembered at most; beyond it the oldest go first. */
  maxEntries?: number;
  /** The password check (tests count its calls). */
  verifyPassword?: PasswordVerifier;
  /** The clock of the remembered successes, in milliseconds (tests move it). */
  clock?: () => number;
}

interface Entry {
  principal: Principal;
  /** The account's password hash when the password was checked: a success stands only while it is unchanged. */
  passwordHash: string;
  until: number;
}

/**
 * HTTP Basic credentials (the context's BasicAuthCheck), as WebDAV clients send them on every
 * request: the account's e-mail with one of its live tokens (an "app password", or a session
 * token) or with its password.
 *
 * - A live token of that account stands for itself, as it would as a Bearer token. Any other
 *   secret (a wrong token, another account's token) is checked as the password, so it counts as a
 *   failed sign-in: Basic guesses share the counters of `/auth/login` (checkPassword).
 * - A password check costs an argon2 hash; a client makes hundreds of requests, so successes are
 *   remembered for `ttlMs` (60 s), keyed by an HMAC of e-mail and password under a key that lives
 *   only in this process. A remembered success stands only while the account's row still has the
 *   e-mail and password hash it was checked against and is not disabled: that read by primary key
 *   costs a sliver of a hash, and a password changed, an account disabled or deleted on any
 *   instance ends it at once (a change on this instance also forgets it: forgetUser). A remembered
 *   success still answers 429 while the counters refuse sign-ins: otherwise, meanwhile, the right
 *   password could be told apart from wrong guesses past the limit.
 */
export function createBasicAuth(ctx: Pick<AppContext, 'db' | 'config' | 'tokens'>, options: BasicAuthOptions = {}): BasicAuthCheck {
  const ttlMs = options.ttlMs ?? BASIC_AUTH_CACHE_TTL_MS;
  const maxEntries = options.maxEntries ?? MAX_ENTRIES;
  const verify = options.verifyPassword ?? verifyPassword;
  const clock = options.clock ?? Date.now;
  const hmacKey = randomBytes(32);
  const entries = new Map<string, Entry>();
  // Bumped by every forgetUser, so a check that raced with a password change never keeps its success.
  let generation = 0;

  const keyOf = (email: string, secret: string) => createHmac('sha256', hmacKey).update(`${email}\0${secret}`).digest('base64url');
  const keep = (key: string, principal: Principal, passwordHash: string) => {
    if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as string);
    entries.set(key, { principal, passwordHash, until: clock() + ttlMs });
  };
  /** Whether the account is still as it was when the remembered password was checked. */
  const unchanged = async (entry: Entry) => {
    const account = await findUserCredentials(ctx.db, entry.principal.userId);
    return account?.email === entry.principal.email && account.password_hash === entry.passwordHash && !account.disabled_at;
  };

  // The checks running now, by key: a client opens several connections at once (rclone: one per
  // transfer and checker), and each counting an attempt before its hash was done would throttle a
  // right password; the requests that come meanwhile wait for the one check instead.
  const checking = new Map<string, Promise<Principal>>();

  async function checkRememberedPassword(email: string, secret: string, clientAddress: string): Promise<Principal> {
    const key = keyOf(email, secret);
    const entry = entries.get(key);
    if (entry && clock() < entry.until && (await unchanged(entry))) {
      await assertNotThrottled(ctx.db, signInRules(ctx.config, email, clientAddress));
      return entry.principal;
    }
    if (entry && entries.get(key) === entry) entries.delete(key);
    const running = checking.get(key);
    if (running) return running;
    const check = checkOnce(key, email, secret, clientAddress).finally(() => checking.delete(key));
    checking.set(key, check);
    return check;
  }

  async function checkOnce(key: string, email: string, secret: string, clientAddress: string): Promise<Principal> {
    const before = generation;
    const user = await checkPassword(ctx, { email, password: secret }, clientAddress, verify).catch((error: unknown) => {
      if (error instanceof AppError && error.code === 'INVALID_CREDENTIALS') throw new AppError('UNAUTHENTICATED', WRONG_CREDENTIALS);
      throw error;
    });
    const principal: Principal = { userId: user.id, tokenId: BASIC_PASSWORD_TOKEN_ID, email: user.email, name: user.name };
    if (generation === before) keep(key, principal, user.password_hash);
    return principal;
  }

  return {
    async verify({ email, secret }: BasicCredentials, clientAddress: string): Promise<Principal> {
      const normalized = normalizeEmail(email);
      if (secret.startsWith(TOKEN_PREFIX)) {
        const principal = await principalOfToken(ctx.tokens, secret, nowIso(), normalized);
        if (principal) return principal;
      }
      return checkRememberedPassword(normalized, secret, clientAddress);
    },
    forgetUser(userId: string): void {
      generation++;
      for (const [key, entry] of entries) if (entry.principal.userId === userId) entries.delete(key);
    },
  };
}
