import pg from 'pg';

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
 * growing delay; the listener is live again once `LISTEN` has been acknowledged.
 */
export function listenPostgres(clientConfig: pg.ClientConfig, channel: string, handlers: NotificationHandlers): Subscription {
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
    const next = new pg.Client({ ...clientConfig, keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
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
