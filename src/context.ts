import type { Config } from './config.js';
import type { BlobStore } from './blobs/blob-store.js';
import type { ContentStore } from './content/index.js';
import type { Keyring } from './crypto/keyring.js';
import type { DatabaseHandle, Db } from './db/database.js';

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
