import type { LiveToken, TokenLookup } from '../../context.js';
import type { DatabaseHandle } from '../../db/database.js';
import { TOKEN_REVOKED_CHANNEL } from '../../db/migrations/006-token-revocations.js';
import type { Subscription } from '../../db/notifications.js';
import { findLiveToken, touchToken } from './accounts.repository.js';

/** Tokens kept at most: one per active session; beyond it the oldest resolved go first. */
const MAX_ENTRIES = 10_000;
/** A kept token is read again after this long, should a notification ever go unheard. */
const MAX_AGE_MS = 60_000;

interface Entry {
  token: LiveToken;
  keptAt: number;
}

/**
 * Bearer tokens resolved to their user (the context's TokenLookup). Every authenticated request
 * starts here: over PostgreSQL that lookup is a round trip of its own, about a third of the cost
 * of a metadata request, and on SQLite about a tenth of a folder details request's CPU. An instance keeps the
 * tokens it resolved and forgets one as soon as the database announces that it was deleted or
 * altered (migration 006's trigger on PostgreSQL, temporary triggers on SQLite, heard through
 * `database.listen`). While that announcement cannot be heard (not yet listening, connection
 * lost; on SQLite, another process wrote), nothing is kept and every lookup reads the database,
 * so a revoked token never outlives its revocation by more than the notification's delivery.
 * Without `listen` every lookup reads the database.
 */
export function createTokenCache(database: DatabaseHandle): TokenLookup {
  const entries = new Map<string, Entry>();
  const hashById = new Map<string, string>();
  let subscription: Subscription | undefined;
  // Bumped whenever a token may have changed, so a lookup that raced with the change never keeps what it read.
  let generation = 0;

  const forget = (tokenId: string) => {
    generation++;
    const hash = hashById.get(tokenId);
    if (hash === undefined) return;
    hashById.delete(tokenId);
    entries.delete(hash);
  };
  const forgetAll = () => {
    generation++;
    entries.clear();
    hashById.clear();
  };
  const keep = (hash: string, token: LiveToken) => {
    if (entries.size >= MAX_ENTRIES) {
      const oldest = entries.keys().next().value as string;
      hashById.delete(entries.get(oldest)!.token.tokenId);
      entries.delete(oldest);
    }
    entries.set(hash, { token, keptAt: Date.now() });
    hashById.set(token.tokenId, hash);
  };

  return {
    async find(tokenHash, now) {
      if (!database.listen) return findLiveToken(database.db, tokenHash, now);
      // Listening starts with the first lookup, so tools that never authenticate open no connection.
      subscription ??= database.listen(TOKEN_REVOKED_CHANNEL, { message: forget, live: forgetAll });
      // Read first: on SQLite, reading it drops every kept token when another process wrote.
      const live = subscription.live;
      const entry = entries.get(tokenHash);
      if (entry && live && Date.now() - entry.keptAt < MAX_AGE_MS) {
        if (entry.token.expiresAt === null || entry.token.expiresAt > now) return entry.token;
      }
      if (entry) forget(entry.token.tokenId);
      const before = generation;
      const token = await findLiveToken(database.db, tokenHash, now);
      if (token && subscription.live && generation === before) keep(tokenHash, token);
      return token;
    },
    touch: (tokenId, now) => touchToken(database.db, tokenId, now),
    forget,
    async close() {
      await subscription?.close();
      forgetAll();
    },
  };
}
