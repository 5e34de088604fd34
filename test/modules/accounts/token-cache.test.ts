import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import type { DatabaseHandle } from '../../../src/db/database.js';
import type { NotificationHandlers } from '../../../src/db/notifications.js';
import { hashToken } from '../../../src/lib/secrets.js';
import { createTokenCache } from '../../../src/modules/accounts/tokens.cache.js';
import { DIALECTS, PG_URL, build, client, signUp } from '../../helper.js';
import { siblingApp } from '../../support/sibling.js';
import { becomesTrue } from '../../support/wait.js';

/**
 * Counts the statements that read the tokens table: selects only, since the app's upkeep round,
 * which starts with the app and may run late on a busy machine, deletes expired tokens.
 */
function tokenReads() {
  const counter = {
    count: 0,
    onQuery: (event: { query: { sql: string } }) => void (/^select\b[\s\S]*\bfrom "tokens"/.test(event.query.sql) && counter.count++),
  };
  return counter;
}

/**
 * A database handle whose `listen` the test drives: it decides when the cache is hearing
 * revocations and delivers them itself (the real ones are tested below).
 */
function withFakeListen(database: DatabaseHandle) {
  let handlers: NotificationHandlers | undefined;
  const state = { live: false };
  const handle: DatabaseHandle = {
    ...database,
    listen(_channel, h) {
      handlers = h;
      return {
        get live() {
          return state.live;
        },
        close: async () => {},
      };
    },
  };
  return {
    handle,
    setLive(live: boolean) {
      state.live = live;
      handlers!.live(live);
    },
    announce: (tokenId: string) => handlers!.message(tokenId),
  };
}

for (const dialect of DIALECTS) {
  describe(`accounts: resolved tokens kept in memory [${dialect}]`, () => {
    it('keeps a token only while revocations are heard, and forgets it when one is announced or the hearing stops', async (t) => {
      const reads = tokenReads();
      const { app, database } = await build(t, dialect, { onQuery: reads.onQuery });
      const user = await signUp(app);
      const fake = withFakeListen(database);
      const cache = createTokenCache(fake.handle);
      const hash = hashToken(user.token);
      const now = () => new Date().toISOString();
      const twice = async () => {
        await cache.find(hash, now());
        await cache.find(hash, now());
      };

      // Not yet hearing: every lookup reads the database, and nothing is kept.
      reads.count = 0;
      const first = await cache.find(hash, now());
      assert.equal(first?.userId, user.id);
      await cache.find(hash, now());
      assert.equal(reads.count, 2);

      fake.setLive(true);
      await twice();
      assert.equal(reads.count, 3, 'hearing: the second lookup is answered from memory');

      fake.announce(first!.tokenId);
      await cache.find(hash, now());
      assert.equal(reads.count, 4, 'an announced token is read again');
      await cache.find(hash, now());
      assert.equal(reads.count, 4);

      fake.setLive(false);
      await twice();
      assert.equal(reads.count, 6, 'the hearing lost: everything kept is dropped and nothing new is kept');

      // A revocation announced while a lookup was on its way: what that lookup read is not kept.
      fake.setLive(true);
      const racing = cache.find(hash, now());
      fake.announce(first!.tokenId);
      await racing;
      await cache.find(hash, now());
      assert.equal(reads.count, 8);

      // A kept token past its expiry is refused without being read (expiry needs no announcement).
      const kept = await cache.find(hash, now());
      assert.ok(kept?.expiresAt, 'sessions expire');
      const count = reads.count;
      const afterExpiry = new Date(Date.parse(kept.expiresAt) + 1000).toISOString();
      assert.equal(await cache.find(hash, afterExpiry), undefined);
      assert.equal(reads.count, count + 1, 'the expired token was looked up in the database, which refused it too');

      // Forgotten by this instance (its own sign-out) without waiting for the announcement.
      await cache.find(hash, now());
      cache.forget(first!.tokenId);
      const before = reads.count;
      await cache.find(hash, now());
      assert.equal(reads.count, before + 1);
      await cache.close();
    });

    it('refuses a token at the first request after its sign-out or revocation, however warm it was', async (t) => {
      const reads = tokenReads();
      const { app } = await build(t, dialect, { onQuery: reads.onQuery });
      const user = await signUp(app);
      const personal = (await user.api.post('/api/auth/tokens', { name: 'script' })).body.data;
      const script = client(app, personal.token);
      // Warm: resolved from memory once the instance hears revocations.
      await becomesTrue(async () => {
        reads.count = 0;
        await user.api.get('/api/auth/me');
        await script.get('/api/auth/me');
        return reads.count === 0;
      }, 'the tokens are kept');
      assert.equal((await user.api.delete(`/api/auth/tokens/${personal.id}`)).status, 200);
      assert.equal((await script.get('/api/auth/me')).status, 401);
      assert.equal((await user.api.post('/api/auth/logout')).status, 200);
      assert.equal((await user.api.get('/api/auth/me')).status, 401);
    });
  });
}

describe('accounts: resolved tokens on SQLite [sqlite]', () => {
  it("hears the server's own writes to tokens, whatever wrote them, and drops everything when another process writes", async (t) => {
    const reads = tokenReads();
    const { app, database, config } = await build(t, 'sqlite', { onQuery: reads.onQuery });
    const user = await signUp(app);
    const tokens: { id: string; token: string }[] = [];
    for (const name of ['deleted by SQL', 'expired by SQL', 'deleted by another process', 'kept'])
      tokens.push((await user.api.post('/api/auth/tokens', { name })).body.data);
    const me = async (index: number) => (await client(app, tokens[index].token).get('/api/auth/me')).status;
    const warm = async () => {
      reads.count = 0;
      for (let i = 0; i < tokens.length; i++) assert.equal(await me(i), 200);
      assert.equal(reads.count, 0, 'every token is answered from memory');
    };
    for (let i = 0; i < tokens.length; i++) assert.equal(await me(i), 200);
    await warm();

    // Statements on the server's connection that bypass the accounts code: the triggers announce them.
    await database.db.deleteFrom('tokens').where('id', '=', tokens[0].id).execute();
    assert.equal(await me(0), 401, 'deleted by SQL on the same connection');
    await database.db.updateTable('tokens').set({ expires_at: '2000-01-01T00:00:00.000Z' }).where('id', '=', tokens[1].id).execute();
    assert.equal(await me(1), 401, 'expired by SQL on the same connection');
    reads.count = 0;
    assert.equal(await me(3), 200);
    assert.equal(reads.count, 0, 'a write to other tokens leaves this one kept');

    // Another process (here another connection) commits: nothing it did is heard one by one.
    const other = new SQLite(path.join(config.dataDir, 'coffre.db'));
    t.after(() => other.close());
    other.prepare('delete from tokens where id = ?').run(tokens[2].id);
    await becomesTrue(async () => (await me(2)) === 401, 'deleted by another connection');
    // Other connections' commits are checked for at most once a millisecond: let that time pass on
    // each side of the write, so the next request is the one that must notice it.
    await sleep(5);
    other.prepare('update users set name = ? where id = ?').run('Renamed elsewhere', user.id);
    await sleep(5);
    reads.count = 0;
    assert.equal((await client(app, tokens[3].token).get('/api/auth/me')).body.data.name, 'Renamed elsewhere');
    assert.equal(reads.count, 1, 'after a write by another connection, kept tokens are read again');

    // An account deleted with its tokens (the foreign key's cascade fires the triggers too).
    reads.count = 0;
    assert.equal(await me(3), 200);
    assert.equal(reads.count, 0);
    await database.db.deleteFrom('users').where('id', '=', user.id).execute();
    assert.equal(await me(3), 401, 'the account is gone');
  });
});

if (DIALECTS.includes('postgres')) {
  describe('accounts: resolved tokens across instances [postgres]', () => {
    it('an instance refuses a token soon after another instance revoked it, or an administrator deleted it', async (t) => {
      const reads = tokenReads();
      const { app, database } = await build(t, 'postgres', { onQuery: reads.onQuery });
      const other = await siblingApp(t, database);
      const user = await signUp(app);
      const tokens: { id: string; token: string }[] = [];
      for (const name of ['revoked elsewhere', 'deleted by SQL'])
        tokens.push((await user.api.post('/api/auth/tokens', { name })).body.data);
      const warm = async () => {
        reads.count = 0;
        for (const token of tokens) assert.equal((await client(app, token.token).get('/api/auth/me')).status, 200);
        return reads.count === 0;
      };
      await becomesTrue(warm, 'the tokens are kept in memory');

      assert.equal((await client(other, user.token).delete(`/api/auth/tokens/${tokens[0].id}`)).status, 200);
      await becomesTrue(
        async () => (await client(app, tokens[0].token).get('/api/auth/me')).status === 401,
        'revoked on the other instance',
      );

      await database.db.deleteFrom('tokens').where('id', '=', tokens[1].id).execute();
      await becomesTrue(async () => (await client(app, tokens[1].token).get('/api/auth/me')).status === 401, 'deleted with SQL');
      assert.equal((await user.api.get('/api/auth/me')).status, 200, 'the session itself is untouched');
    });

    it('a listener whose connection is cut says so, comes back by itself and hears again', async (t) => {
      const { database } = await build(t, 'postgres');
      const channel = `coffre_test_${randomBytes(6).toString('hex')}`;
      const events: string[] = [];
      const subscription = database.listen!(channel, {
        message: (payload) => events.push(`message ${payload}`),
        live: (live) => events.push(`live ${live}`),
      });
      t.after(() => subscription.close());
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      t.after(() => admin.end());

      await becomesTrue(async () => subscription.live);
      await admin.query('select pg_notify($1, $2)', [channel, 'one']);
      await becomesTrue(async () => events.includes('message one'));

      const killed = await admin.query('select pg_terminate_backend(pid) as done from pg_stat_activity where query = $1', [
        `LISTEN ${channel}`,
      ]);
      assert.equal(killed.rows.length, 1);
      await becomesTrue(async () => events.includes('live false'), 'the cut is reported');
      await becomesTrue(async () => subscription.live, 'listening again');
      await admin.query('select pg_notify($1, $2)', [channel, 'two']);
      await becomesTrue(async () => events.includes('message two'));
      assert.deepEqual(events, ['live true', 'message one', 'live false', 'live true', 'message two']);
    });
  });
}
