import type SQLite from 'better-sqlite3';
import type pg from 'pg';
import { TOKEN_REVOKED_CHANNEL, sqliteTokenTriggers } from './migrations/006-token-revocations.js';

/**
 * What a listener is told: each payload sent on its channel, and whether it is hearing at all.
 * While `live` is false, notifications may be missed, so whatever was kept on their strength must
 * be dropped.
 */
export interface NotificationHandlers {
  message(payload: string): void;
  live(listening: boolean): void;
}

export interface Subscription {
  /** True while the channel is listened to: every notification committed from now on arrives. */
  readonly live: boolean;
  close(): Promise<void>;
}

const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 5_000;

/**
 * PostgreSQL `LISTEN channel` on a connection of its own (a pooled connection goes back to the
 * pool; a listener must stay). A lost connection is reported as not live, then reopened with a
 * growing delay; the listener is live again once `LISTEN` has been acknowledged. `Client` is the
 * driver's, which openDatabase loads only for PostgreSQL.
 */
export function listenPostgres(
  Client: typeof pg.Client,
  clientConfig: pg.ClientConfig,
  channel: string,
  handlers: NotificationHandlers,
): Subscription {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`invalid channel name ${channel}`);
  let live = false;
  let closed = false;
  let client: pg.Client | undefined;
  let retryMs = RETRY_FIRST_MS;
  let retry: NodeJS.Timeout | undefined;

  const setLive = (state: boolean) => {
    if (live === state) return;
    live = state;
    handlers.live(state);
  };

  const lost = (lostClient: pg.Client) => {
    if (client !== lostClient) return;
    client = undefined;
    setLive(false);
    lostClient.removeAllListeners('notification');
    lostClient.end().catch(() => {});
    if (closed) return;
    retry = setTimeout(connect, retryMs);
    retry.unref();
    retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
  };

  async function connect() {
    retry = undefined;
    // Keepalive probes notice a peer gone silently (no FIN), which would otherwise leave the
    // listener "live" while hearing nothing; the token cache re-reads entries after a minute anyway.
    const next = new Client({ ...clientConfig, keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
    client = next;
    next.on('notification', (message) => {
      if (message.channel === channel) handlers.message(message.payload ?? '');
    });
    next.on('error', () => lost(next));
    next.on('end', () => lost(next));
    try {
      await next.connect();
      await next.query(`LISTEN ${channel}`);
      if (client !== next || closed) {
        await next.end().catch(() => {});
        return;
      }
      retryMs = RETRY_FIRST_MS;
      setLive(true);
    } catch {
      lost(next);
    }
  }

  void connect();
  return {
    get live() {
      return live;
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const current = client;
      client = undefined;
      setLive(false);
      await current?.end().catch(() => {});
    },
  };
}

/** The SQL function the SQLite announcement triggers call: `coffre_notify(channel, payload)`. */
const SQLITE_NOTIFY_FUNCTION = 'coffre_notify';
/** How often, at most, SQLite is asked whether another connection committed (see listenSqlite). */
const OTHER_WRITERS_CHECK_MS = 1;

/**
 * What announces on a channel over SQLite: `TEMP` triggers, which exist on the connection that
 * creates them only. Persistent ones would call a function that other connections (the
 * `coffre` command, an administrator's `sqlite3` shell) do not have, and fail their writes.
 */
const sqliteAnnouncers: Record<string, (notify: string) => string[]> = {
  [TOKEN_REVOKED_CHANNEL]: sqliteTokenTriggers,
};

/**
 * The same contract on SQLite, where the server is one process on one connection. Writes made on
 * that connection are announced by temporary triggers calling a function of this process, as they
 * happen (inside the writing transaction: a rolled-back write was announced anyway, which only
 * drops something that is still true). Writes by any other connection (another process) are not
 * heard one by one: SQLite's `data_version` changes when another connection commits, and reading
 * `live` then reports the listener not live and live again, so whatever was kept is dropped.
 * Reading `live` runs that check, at most once a millisecond: another process's write is heard
 * within a millisecond (over PostgreSQL, a notification takes about as long to arrive).
 */
export function listenSqlite(database: SQLite.Database, channel: string, handlers: NotificationHandlers): Subscription {
  const announcer = sqliteAnnouncers[channel];
  if (!announcer) throw new Error(`no SQLite announcer for channel ${channel}`);
  let listeners = sqliteListeners.get(database);
  if (!listeners) {
    const registered = new Map<string, Set<NotificationHandlers>>();
    listeners = registered;
    sqliteListeners.set(database, registered);
    database.function(SQLITE_NOTIFY_FUNCTION, { deterministic: false }, (name: unknown, payload: unknown) => {
      for (const listener of registered.get(String(name)) ?? []) listener.message(String(payload ?? ''));
      return null;
    });
  }
  let subscribers = listeners.get(channel);
  if (!subscribers) {
    subscribers = new Set();
    listeners.set(channel, subscribers);
    for (const statement of announcer(SQLITE_NOTIFY_FUNCTION)) database.exec(statement);
  }
  subscribers.add(handlers);
  const dataVersion = database.prepare('pragma data_version').pluck();
  let seen = dataVersion.get();
  let checkedAt = performance.now();
  let closed = false;
  return {
    get live() {
      if (closed) return false;
      // A statement of its own costs about as much as the lookup a kept answer saves (it opens a
      // read transaction): checked at most once a millisecond.
      if (performance.now() - checkedAt < OTHER_WRITERS_CHECK_MS) return true;
      checkedAt = performance.now();
      const now = dataVersion.get();
      if (now !== seen) {
        seen = now;
        handlers.live(false);
        handlers.live(true);
      }
      return true;
    },
    async close() {
      if (closed) return;
      closed = true;
      subscribers.delete(handlers);
      handlers.live(false);
    },
  };
}

const sqliteListeners = new WeakMap<SQLite.Database, Map<string, Set<NotificationHandlers>>>();
