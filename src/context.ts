import type { Config } from './config.js';
import type { BlobStore } from './blobs/blob-store.js';
import type { ContentStore } from './content/index.js';
import type { Keyring } from './crypto/keyring.js';
import type { DatabaseHandle, Db } from './db/database.js';
import { hashToken } from './lib/secrets.js';

/** What every module is built with: configuration and the open database. */
export interface AppContext {
  readonly config: Config;
  readonly database: DatabaseHandle;
  readonly db: Db;
  readonly keyring: Keyring;
  readonly blobs: BlobStore;
  /** Stored content: the only way files, links and transports store and read bytes. */
  readonly content: ContentStore;
  /** Bearer tokens resolved to their users (kept in memory where revocations can be heard). */
  readonly tokens: TokenLookup;
  /** HTTP Basic credentials checked against the accounts (for WebDAV clients). */
  readonly basicAuth: BasicAuthCheck;
}

/** A bearer token that is live at the time asked, with its user. */
export interface LiveToken {
  tokenId: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  userId: string;
  email: string;
  name: string;
}

/**
 * How authentication (src/http/auth.ts) resolves bearer tokens; the accounts module provides it
 * (tokens.cache.ts), so that the HTTP layer and this context depend on no feature module.
 */
export interface TokenLookup {
  /** The live token with this hash at `now`, with its user, or undefined. */
  find(tokenHash: string, now: string): Promise<LiveToken | undefined>;
  /** Records that the token was used at `now` (its last use, shown in the sessions list). */
  touch(tokenId: string, now: string): Promise<void>;
  /** This instance deleted the token: forget it at once (the notification follows later). */
  forget(tokenId: string): void;
  close(): Promise<void>;
}

// last_used_at is informative; writing it on every request would turn reads into writes.
const TOUCH_INTERVAL_MS = 10 * 60 * 1000;

/**
 * The principal of a live bearer token, or undefined; with `ofEmail`, only a token of the account
 * with that (normalised) e-mail. Bearer (src/http/auth.ts) and Basic credentials both resolve
 * tokens here, so both record their last use alike.
 */
export async function principalOfToken(tokens: TokenLookup, token: string, now: string, ofEmail?: string): Promise<Principal | undefined> {
  const row = await tokens.find(hashToken(token), now);
  if (!row || (ofEmail !== undefined && row.email !== ofEmail)) return undefined;
  if (!row.lastUsedAt || Date.parse(now) - Date.parse(row.lastUsedAt) > TOUCH_INTERVAL_MS) {
    await tokens.touch(row.tokenId, now);
    // The token may be kept in memory: later requests see the touch without reading it again.
    row.lastUsedAt = now;
  }
  return { userId: row.userId, tokenId: row.tokenId, email: row.email, name: row.name };
}

/** An account's e-mail and a secret (one of its tokens, or its password), as HTTP Basic sends them. */
export interface BasicCredentials {
  email: string;
  secret: string;
}

/**
 * How HTTP Basic authentication (src/http/basic-auth.ts) checks credentials; the accounts module
 * provides it (basic-auth.use-case.ts), as it provides the TokenLookup.
 */
export interface BasicAuthCheck {
  /**
   * The principal of these credentials: a live token of that account, else its password, counted
   * and refused (429) like a sign-in. Throws UNAUTHENTICATED when they are wrong.
   */
  verify(credentials: BasicCredentials, clientAddress: string): Promise<Principal>;
  /** The user's password changed on this instance: its remembered password checks end now. */
  forgetUser(userId: string): void;
}

/** The signed-in caller of a request, resolved from its bearer token. */
export interface Principal {
  readonly userId: string;
  readonly tokenId: string;
  readonly email: string;
  readonly name: string;
}

/**
 * A service that keeps state (caches, group runners) built once per context, whoever asks for
 * it: the routes, the trash and the background purge then share its caches and its groups (the
 * uploads of one owner are recorded together whether they come through the files routes or a
 * link), instead of each keeping copies of their own.
 */
export function onePerContext<S>(build: (ctx: AppContext) => S): (ctx: AppContext) => S {
  const built = new WeakMap<AppContext, S>();
  return (ctx) => {
    let service = built.get(ctx);
    if (service === undefined) {
      service = build(ctx);
      built.set(ctx, service);
    }
    return service;
  };
}
