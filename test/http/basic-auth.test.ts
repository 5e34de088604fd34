import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import Fastify, { type FastifyInstance } from 'fastify';
import type { AppContext } from '../../src/context.js';
import { AppError } from '../../src/errors.js';
import { authenticateRequest, BASIC_CHALLENGE, parseBasicAuthorization } from '../../src/http/basic-auth.js';
import { installErrorHandling } from '../../src/http/error-handler.js';
import { verifyPassword } from '../../src/lib/secrets.js';
import { BASIC_PASSWORD_TOKEN_ID, createBasicAuth, type BasicAuthOptions } from '../../src/modules/accounts/basic-auth.use-case.js';
import { sessionService } from '../../src/modules/accounts/sessions.service.js';
import { createTokenCache } from '../../src/modules/accounts/tokens.cache.js';
import { DIALECTS, build, client, signUp, type TestApp, type TestUser } from '../helper.js';
import { assertError } from '../support/errors.js';

// The sign-in of WebDAV clients (issue: WebDAV, sign-in): Basic with the e-mail and an app
// password (a personal token) or the account password, throttled like /api/auth/login; Bearer too.

const PASSWORD = 'correct horse battery';

const basic = (email: string, secret: string) => `Basic ${Buffer.from(`${email}:${secret}`, 'utf8').toString('base64')}`;

describe('parseBasicAuthorization (no database)', () => {
  it('reads e-mail and secret; the secret may hold colons and any UTF-8', () => {
    assert.deepEqual(parseBasicAuthorization(basic('ada@example.com', 'a:b:c')), { email: 'ada@example.com', secret: 'a:b:c' });
    assert.deepEqual(parseBasicAuthorization(basic('ada@example.com', 'pässwörd ✓')), { email: 'ada@example.com', secret: 'pässwörd ✓' });
    const lower = `basic ${Buffer.from('ada@example.com:x').toString('base64')}`;
    assert.deepEqual(parseBasicAuthorization(lower), { email: 'ada@example.com', secret: 'x' }, 'the scheme is case-insensitive');
  });

  it('refuses what is not Basic with an e-mail and a secret of sign-in size', () => {
    const refused = [
      undefined,
      '',
      'Basic',
      'Basic ',
      'Basic !!!!',
      `Basic ${Buffer.from('no colon').toString('base64')}`,
      `Basic ${Buffer.from(':secret').toString('base64')}`,
      `Basic ${Buffer.from('ada@example.com:').toString('base64')}`,
      basic('ada@example.com', 'x'.repeat(1025)),
      basic(`${'a'.repeat(250)}@example.com`, 'x'),
      `Digest ${Buffer.from('ada@example.com:x').toString('base64')}`,
      'Bearer cof_x',
    ];
    for (const header of refused) assert.equal(parseBasicAuthorization(header), undefined, String(header));
  });
});

/**
 * A small server with one route that answers the caller authenticateRequest finds, over the
 * test app's database: its own Basic check (options: counted password checks, a clock) and a
 * token lookup that reads the database every time (no `listen`), so a revocation made through
 * the app is seen at once. 401s carry the challenge, as the WebDAV routes will.
 */
async function davLike(t: TestContext, testApp: TestApp, options: BasicAuthOptions = {}) {
  const { database, config } = testApp;
  const tokens = createTokenCache({ ...database, listen: undefined });
  const basicAuth = createBasicAuth({ config, db: database.db, tokens }, options);
  const ctx = { config, database, db: database.db, tokens, basicAuth } as unknown as AppContext;
  const server = Fastify();
  installErrorHandling(server);
  server.addHook('onError', async (_request, reply, error) => {
    if (error instanceof AppError && error.status === 401) reply.header('www-authenticate', BASIC_CHALLENGE);
  });
  server.get('/whoami', async (request) => authenticateRequest(ctx, request));
  await server.ready();
  t.after(() => server.close());
  return { server, basicAuth, ctx };
}

/** Password checks counted, through the real argon2 verification. */
function countingVerifier() {
  const counter = {
    calls: 0,
    verify: (hash: string, password: string) => {
      counter.calls++;
      return verifyPassword(hash, password);
    },
  };
  return counter;
}

async function whoami(server: FastifyInstance, authorization?: string, remoteAddress = '127.0.0.1') {
  const res = await server.inject({ method: 'GET', url: '/whoami', headers: authorization ? { authorization } : {}, remoteAddress });
  return { status: res.statusCode, body: res.json(), headers: res.headers };
}

async function personalToken(user: TestUser, name = 'WebDAV'): Promise<{ id: string; token: string }> {
  const res = await user.api.post('/api/auth/tokens', { name });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data;
}

function assertUnauthenticated(res: Awaited<ReturnType<typeof whoami>>, label = '') {
  assertError(res, 401, 'UNAUTHENTICATED', label);
  assert.equal(res.headers['www-authenticate'], 'Basic realm="Coffre"', label);
}

for (const dialect of DIALECTS) {
  describe(`HTTP Basic and Bearer sign-in for WebDAV [${dialect}]`, () => {
    it('Basic with the password: the account, under a token id that is no token; the second request checks no password', async (t) => {
      const testApp = await build(t, dialect);
      const user = await signUp(testApp.app);
      const counter = countingVerifier();
      const { server } = await davLike(t, testApp, { verifyPassword: counter.verify });
      const first = await whoami(server, basic(user.email, PASSWORD));
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.deepEqual(first.body, { userId: user.id, tokenId: BASIC_PASSWORD_TOKEN_ID, email: user.email, name: 'Test User' });
      assert.equal(counter.calls, 1);
      // The e-mail's case does not matter, as at sign-in.
      assert.equal((await whoami(server, basic(user.email.toUpperCase(), PASSWORD))).status, 200);
      for (let i = 0; i < 5; i++) assert.equal((await whoami(server, basic(user.email, PASSWORD))).status, 200);
      assert.equal(counter.calls, 1, 'remembered successes run no argon2');
      // Signing out with that principal deletes no token: the user's session still works.
      assert.equal((await user.api.get('/api/auth/me')).status, 200);
    });

    it('a client opening many connections at once with the right password is never throttled: one check serves them all', async (t) => {
      const testApp = await build(t, dialect);
      const user = await signUp(testApp.app);
      const counter = countingVerifier();
      const { server } = await davLike(t, testApp, { verifyPassword: counter.verify });
      // More at once than the per-account failure limit: each counting an attempt would refuse some.
      const parallel = testApp.config.loginMaxFailuresPerAccount * 3;
      const answers = await Promise.all(Array.from({ length: parallel }, () => whoami(server, basic(user.email, PASSWORD))));
      assert.deepEqual(
        answers.map((a) => a.status),
        answers.map(() => 200),
      );
      assert.equal(counter.calls, 1, 'the requests that came while the password was checked waited for that check');
    });

    it('Basic with an app password (personal token) or a session token of that account; its last use is recorded', async (t) => {
      const testApp = await build(t, dialect);
      const user = await signUp(testApp.app);
      const counter = countingVerifier();
      const { server } = await davLike(t, testApp, { verifyPassword: counter.verify });
      const { id, token } = await personalToken(user);
      const res = await whoami(server, basic(user.email, token));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body, { userId: user.id, tokenId: id, email: user.email, name: 'Test User' });
      const session = await whoami(server, basic(user.email, user.token));
      assert.equal(session.body.tokenId === id, false);
      assert.equal(session.body.userId, user.id);
      assert.equal(counter.calls, 0, 'a token needs no password check');
      const listed = (await user.api.get('/api/auth/tokens')).body.data.find((t: { id: string }) => t.id === id);
      assert.equal(typeof listed.lastUsedAt, 'string', 'the app password shows its last use');
    });

    it("refuses another account's token, and counts it as a failed sign-in", async (t) => {
      const testApp = await build(t, dialect, { config: { loginMaxFailuresPerAccount: 2, loginMaxFailuresPerAddress: 100 } });
      const victim = await signUp(testApp.app);
      const other = await signUp(testApp.app);
      const { token } = await personalToken(other);
      const { server } = await davLike(t, testApp);
      assertUnauthenticated(await whoami(server, basic(victim.email, token)), "other's app password");
      assertUnauthenticated(await whoami(server, basic(victim.email, other.token)), "other's session");
      // Two failures: the account is at its limit, even the right password waits.
      const blocked = await whoami(server, basic(victim.email, PASSWORD));
      assertError(blocked, 429, 'RATE_LIMITED');
      assert.ok(Number(blocked.headers['retry-after']) > 0);
      // The token still works for its own account.
      assert.equal((await whoami(server, basic(other.email, token))).status, 200);
    });

    it('wrong passwords are 401 and share the counter of /api/auth/login; past the limit even the right (remembered) password is 429', async (t) => {
      const testApp = await build(t, dialect, {
        config: { loginMaxFailuresPerAccount: 3, loginMaxFailuresPerAddress: 100, loginWindowSeconds: 600 },
      });
      const user = await signUp(testApp.app);
      const { server } = await davLike(t, testApp);
      // A success first, so the right password is remembered.
      assert.equal((await whoami(server, basic(user.email, PASSWORD))).status, 200);
      const api = client(testApp.app);
      assertError(await api.post('/api/auth/login', { email: user.email, password: 'wrong 1' }), 401, 'INVALID_CREDENTIALS');
      assertUnauthenticated(await whoami(server, basic(user.email, 'wrong 2')));
      assertUnauthenticated(await whoami(server, basic(user.email, 'cof_notatoken')), 'a wrong token');
      const blocked = await whoami(server, basic(user.email, PASSWORD));
      assertError(blocked, 429, 'RATE_LIMITED');
      const retryAfter = Number(blocked.headers['retry-after']);
      assert.ok(retryAfter > 0 && retryAfter <= 600, String(retryAfter));
      assertError(await api.post('/api/auth/login', { email: user.email, password: PASSWORD }), 429, 'RATE_LIMITED');
      // Bearer tokens are not sign-ins: the session still works.
      assert.equal((await whoami(server, `Bearer ${user.token}`)).status, 200);
    });

    it('Bearer as the API takes it; a bad Bearer or a malformed header is 401 with the challenge', async (t) => {
      const testApp = await build(t, dialect);
      const user = await signUp(testApp.app);
      const { server } = await davLike(t, testApp);
      const res = await whoami(server, `Bearer ${user.token}`);
      assert.equal(res.status, 200);
      assert.equal(res.body.userId, user.id);
      const malformed = [
        undefined,
        'Bearer',
        'Bearer cof_wrong',
        'Basic',
        'Basic %%%',
        `Basic ${Buffer.from(user.email).toString('base64')}`,
        `Digest username="${user.email}"`,
      ];
      for (const header of malformed) assertUnauthenticated(await whoami(server, header), String(header));
      assertUnauthenticated(await whoami(server, basic('nobody@example.com', PASSWORD)), 'unknown e-mail');
    });

    it('a revoked app password is refused at once', async (t) => {
      const testApp = await build(t, dialect);
      const user = await signUp(testApp.app);
      const { server } = await davLike(t, testApp);
      const { id, token } = await personalToken(user);
      assert.equal((await whoami(server, basic(user.email, token))).status, 200);
      assert.equal((await user.api.delete(`/api/auth/tokens/${id}`)).status, 200);
      assertUnauthenticated(await whoami(server, basic(user.email, token)));
      assertUnauthenticated(await whoami(server, `Bearer ${token}`));
    });

    it('a password changed, an account disabled or deleted on another instance ends the remembered success at once', async (t) => {
      const testApp = await build(t, dialect, { config: { loginMaxFailuresPerAccount: 100 } });
      const { db } = testApp.database;
      const user = await signUp(testApp.app);
      const counter = countingVerifier();
      const { server } = await davLike(t, testApp, { verifyPassword: counter.verify });
      const signIn = (password: string) => whoami(server, basic(user.email, password));
      assert.equal((await signIn(PASSWORD)).status, 200);
      assert.equal((await signIn(PASSWORD)).status, 200);
      assert.equal(counter.calls, 1, 'the second request was a remembered success');

      // Changed through the app: another instance, as far as this Basic check knows.
      const changed = await user.api.post('/api/auth/password', { currentPassword: PASSWORD, newPassword: 'a brand new secret' });
      assert.equal(changed.status, 200, JSON.stringify(changed.body));
      assertUnauthenticated(await signIn(PASSWORD), 'the old password, at once');
      assert.equal((await signIn('a brand new secret')).status, 200);
      assert.equal((await signIn('a brand new secret')).status, 200);
      const checks = counter.calls;

      // Disabled and deleted in the database, as another instance's administrator would.
      await db.updateTable('users').set({ disabled_at: new Date().toISOString() }).where('id', '=', user.id).execute();
      assertError(await signIn('a brand new secret'), 403, 'ACCOUNT_DISABLED', 'disabled, at once');
      assert.equal(counter.calls, checks + 1, 'the password was checked again');
      await db.updateTable('users').set({ disabled_at: null }).where('id', '=', user.id).execute();
      assert.equal((await signIn('a brand new secret')).status, 200, 'enabled again');
      await db.deleteFrom('users').where('id', '=', user.id).execute();
      assertUnauthenticated(await signIn('a brand new secret'), 'deleted, at once');
    });

    it('a remembered success ends after its time: the password is checked again', async (t) => {
      const testApp = await build(t, dialect);
      const user = await signUp(testApp.app);
      let now = 1_000_000;
      const counter = countingVerifier();
      const { server } = await davLike(t, testApp, { ttlMs: 60_000, clock: () => now, verifyPassword: counter.verify });
      assert.equal((await whoami(server, basic(user.email, PASSWORD))).status, 200);
      now += 59_000;
      assert.equal((await whoami(server, basic(user.email, PASSWORD))).status, 200);
      assert.equal(counter.calls, 1, 'remembered within its time');
      now += 1_000;
      assert.equal((await whoami(server, basic(user.email, PASSWORD))).status, 200);
      assert.equal(counter.calls, 2, 'checked again past it');
    });

    it('forgetUser (a password change on this instance) ends the remembered successes of that user only', async (t) => {
      const testApp = await build(t, dialect);
      const ada = await signUp(testApp.app);
      const bob = await signUp(testApp.app);
      const counter = countingVerifier();
      const { server, basicAuth } = await davLike(t, testApp, { verifyPassword: counter.verify });
      assert.equal((await whoami(server, basic(ada.email, PASSWORD))).status, 200);
      assert.equal((await whoami(server, basic(bob.email, PASSWORD))).status, 200);
      assert.equal(counter.calls, 2);
      basicAuth.forgetUser(ada.id);
      assert.equal((await whoami(server, basic(bob.email, PASSWORD))).status, 200);
      assert.equal(counter.calls, 2, "bob's success is still remembered");
      assert.equal((await whoami(server, basic(ada.email, PASSWORD))).status, 200);
      assert.equal(counter.calls, 3, "ada's password is checked again");
    });

    it('remembers a bounded number of successes, the oldest going first', async (t) => {
      const testApp = await build(t, dialect);
      const ada = await signUp(testApp.app);
      const bob = await signUp(testApp.app);
      const counter = countingVerifier();
      const { server } = await davLike(t, testApp, { maxEntries: 1, verifyPassword: counter.verify });
      await whoami(server, basic(ada.email, PASSWORD));
      await whoami(server, basic(ada.email, PASSWORD));
      assert.equal(counter.calls, 1);
      await whoami(server, basic(bob.email, PASSWORD));
      await whoami(server, basic(ada.email, PASSWORD));
      assert.equal(counter.calls, 3, "bob's success pushed ada's out");
    });

    it('a password change on this instance ends its remembered success at once', async (t) => {
      const testApp = await build(t, dialect);
      const user = await signUp(testApp.app);
      const { server, ctx } = await davLike(t, testApp);
      const first = await whoami(server, basic(user.email, PASSWORD));
      assert.equal(first.status, 200);
      // The password change of this context (the route's service), made with the Basic principal.
      await sessionService(ctx).changePassword(first.body, { currentPassword: PASSWORD, newPassword: 'another secret' }, '127.0.0.1');
      assertUnauthenticated(await whoami(server, basic(user.email, PASSWORD)), 'the old password');
      assert.equal((await whoami(server, basic(user.email, 'another secret'))).status, 200);
      // The Basic principal's token id matched no session: the app's session was signed out like any other.
      assert.notEqual((await user.api.get('/api/auth/me')).status, 200);
    });
  });
}
