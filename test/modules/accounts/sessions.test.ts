import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { describeDevice } from '../../../src/modules/accounts/user-agent.js';
import { DIALECTS, build, client, signUp, type TestUser } from '../../helper.js';
import { assertError } from '../../support/errors.js';
import { refusedSoon } from '../../support/auth.js';
import { siblingApp } from '../../support/sibling.js';

// Issue 29 item 8: a signed-in person changes their password, lists the sessions of their
// account and revokes any of them; revocations hold at once, on every instance.

const PASSWORD = 'correct horse battery';
const NEW_PASSWORD = 'battery staple horse';
const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const SAFARI_IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const SESSION_KEYS = ['clientAddress', 'createdAt', 'current', 'device', 'expiresAt', 'id', 'lastUsedAt', 'userAgent'];

/** Signs in from a given address and browser; the new session's bearer token. */
async function signIn(
  app: FastifyInstance,
  email: string,
  password = PASSWORD,
  remoteAddress = '127.0.0.1',
  userAgent?: string,
): Promise<string> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/auth/login',
    payload: { email, password },
    remoteAddress,
    headers: userAgent ? { 'user-agent': userAgent } : {},
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data.accessToken;
}

async function sessionsOf(user: TestUser | ReturnType<typeof client>) {
  const api = 'api' in user ? user.api : user;
  const res = await api.get('/api/auth/sessions');
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data as Record<string, any>[];
}

describe('the device of a session, from its User-Agent (no database)', () => {
  it('names the browser and the system, or what it can', () => {
    const cases: [string | null, string][] = [
      [FIREFOX_LINUX, 'Firefox on Linux'],
      [SAFARI_IPHONE, 'Safari on iOS'],
      [
        'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
        'Chrome on Windows',
      ],
      [
        'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0',
        'Edge on Windows',
      ],
      [
        'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
        'Safari on macOS',
      ],
      [
        'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36',
        'Chrome on Android',
      ],
      ['curl/8.5.0', 'curl'],
      ['something else', 'Unknown device'],
      [null, 'Unknown device'],
    ];
    for (const [userAgent, device] of cases) assert.equal(describeDevice(userAgent), device, String(userAgent));
  });
});

for (const dialect of DIALECTS) {
  describe(`accounts: sessions [${dialect}]`, () => {
    it('lists the sessions of the account with device, address, creation and last use, the caller marked current', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const before = Date.now();
      const firefox = await signIn(app, user.email, PASSWORD, '10.0.0.5', FIREFOX_LINUX);
      const iphone = await signIn(app, user.email, PASSWORD, '10.0.0.6', SAFARI_IPHONE);
      await user.api.post('/api/auth/tokens', { name: 'script' });
      const other = await signUp(app);

      const list = await sessionsOf(client(app, firefox));
      assert.equal(list.length, 3, 'the sign-up session and two sign-ins; no personal token, no other user');
      for (const item of list) assert.deepEqual(Object.keys(item).sort(), SESSION_KEYS);
      const mine = list.find((s) => s.current)!;
      assert.equal(list.filter((s) => s.current).length, 1);
      assert.equal(mine.device, 'Firefox on Linux');
      assert.equal(mine.userAgent, FIREFOX_LINUX);
      assert.equal(mine.clientAddress, '10.0.0.5');
      assert.ok(Math.abs(Date.parse(mine.createdAt) - before) < 60_000);
      assert.ok(mine.lastUsedAt && Date.parse(mine.lastUsedAt) >= Date.parse(mine.createdAt));
      assert.ok(Date.parse(mine.expiresAt) > Date.now() + 29 * 86_400_000);
      const phone = list.find((s) => s.clientAddress === '10.0.0.6')!;
      assert.equal(phone.device, 'Safari on iOS');
      assert.equal(phone.current, false);
      assert.ok(!JSON.stringify(list).includes(iphone) && !JSON.stringify(list).includes(user.token), 'no token secret in the list');
      assert.equal((await sessionsOf(other)).length, 1);
    });

    it("revoking a session makes its token fail at once; unknown, personal or another user's: 404", async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const laptop = await signIn(app, user.email);
      assert.equal((await client(app, laptop).get('/api/auth/me')).status, 200, 'warm');
      const laptopId = (await sessionsOf(client(app, laptop))).find((s) => s.current)!.id;
      const res = await user.api.delete(`/api/auth/sessions/${laptopId}`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { status: 200, message: '', data: null });
      assertError(await client(app, laptop).get('/api/auth/me'), 401, 'UNAUTHENTICATED');
      assert.deepEqual((await sessionsOf(user)).map((s) => s.id).includes(laptopId), false);
      assertError(await user.api.delete(`/api/auth/sessions/${laptopId}`), 404, 'SESSION_NOT_FOUND');

      const pat = (await user.api.post('/api/auth/tokens', { name: 'script' })).body.data;
      assertError(await user.api.delete(`/api/auth/sessions/${pat.id}`), 404, 'SESSION_NOT_FOUND');
      assert.equal((await client(app, pat.token).get('/api/auth/me')).status, 200);
      const other = await signUp(app);
      const othersId = (await sessionsOf(other))[0].id;
      assertError(await user.api.delete(`/api/auth/sessions/${othersId}`), 404, 'SESSION_NOT_FOUND');
      assert.equal((await other.api.get('/api/auth/me')).status, 200);
      assertError(await user.api.delete('/api/auth/sessions/not-an-id'), 400, 'INVALID_ID');

      // Revoking the current session is signing out.
      const ownId = (await sessionsOf(user)).find((s) => s.current)!.id;
      assert.equal((await user.api.delete(`/api/auth/sessions/${ownId}`)).status, 200);
      assertError(await user.api.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
    });

    it('the routes need a signed-in caller', async (t) => {
      const { app } = await build(t, dialect);
      const anon = client(app);
      assertError(await anon.get('/api/auth/sessions'), 401, 'UNAUTHENTICATED');
      assertError(await anon.delete('/api/auth/sessions/tok_00000000000000000000000000'), 401, 'UNAUTHENTICATED');
      assertError(await anon.post('/api/auth/password', { currentPassword: PASSWORD, newPassword: NEW_PASSWORD }), 401, 'UNAUTHENTICATED');
    });
  });

  describe(`accounts: password change [${dialect}]`, () => {
    it('needs the current password; then signs out every other session and keeps the caller and personal tokens', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const elsewhere = [await signIn(app, user.email), await signIn(app, user.email)];
      for (const token of elsewhere) assert.equal((await client(app, token).get('/api/auth/me')).status, 200, 'warm');
      const pat = (await user.api.post('/api/auth/tokens', { name: 'backup' })).body.data;

      assertError(
        await user.api.post('/api/auth/password', { currentPassword: 'not it at all', newPassword: NEW_PASSWORD }),
        403,
        'WRONG_CURRENT_PASSWORD',
      );
      for (const token of elsewhere)
        assert.equal((await client(app, token).get('/api/auth/me')).status, 200, 'a refused change revokes nothing');

      const res = await user.api.post('/api/auth/password', { currentPassword: PASSWORD, newPassword: NEW_PASSWORD });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body, { status: 200, message: '', data: { revokedSessions: 2 } });
      for (const token of elsewhere) assertError(await client(app, token).get('/api/auth/me'), 401, 'UNAUTHENTICATED');
      assert.equal((await user.api.get('/api/auth/me')).status, 200, 'the session that changed it stays');
      assert.equal((await client(app, pat.token).get('/api/auth/me')).status, 200, 'personal tokens stay');
      assert.equal((await sessionsOf(user)).length, 1);

      const oldLogin = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: PASSWORD } });
      assert.equal(oldLogin.statusCode, 401);
      await signIn(app, user.email, NEW_PASSWORD);
    });

    it('a sign-in racing a password change with the old password ends with no valid session', async (t) => {
      const { app } = await build(t, dialect, { config: { loginMaxFailuresPerAccount: 100 } });
      const user = await signUp(app);
      const change = user.api.post('/api/auth/password', { currentPassword: PASSWORD, newPassword: NEW_PASSWORD });
      // Spread over the change's time, so that some check the old password just before it commits.
      const signIns = Array.from({ length: 16 }, async (_, i) => {
        await sleep(i * 3);
        return app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: PASSWORD } });
      });
      assert.equal((await change).status, 200);
      for (const res of await Promise.all(signIns)) {
        if (res.statusCode !== 200) {
          assert.equal(res.json().code, 'INVALID_CREDENTIALS');
          continue;
        }
        // It signed in before the change was committed: the change signed it out.
        assertError(await client(app, res.json().data.accessToken).get('/api/auth/me'), 401, 'UNAUTHENTICATED');
      }
    });

    it("validates the new password, and limits wrong current passwords with the account's sign-in failures", async (t) => {
      const { app } = await build(t, dialect, { config: { loginMaxFailuresPerAccount: 2, loginMaxFailuresPerAddress: 100 } });
      const user = await signUp(app);
      const short = await user.api.post('/api/auth/password', { currentPassword: PASSWORD, newPassword: 'short' });
      assertError(short, 400, 'VALIDATION_FAILED');
      assert.ok(short.body.details.some((d: { field: string }) => d.field === 'body.newPassword'));
      assertError(await user.api.post('/api/auth/password', { newPassword: NEW_PASSWORD }), 400, 'VALIDATION_FAILED');

      assertError(
        await user.api.post('/api/auth/password', { currentPassword: 'guess one', newPassword: NEW_PASSWORD }),
        403,
        'WRONG_CURRENT_PASSWORD',
      );
      const res = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: 'guess two' } });
      assert.equal(res.statusCode, 401);
      const blocked = await user.api.post('/api/auth/password', { currentPassword: PASSWORD, newPassword: NEW_PASSWORD });
      assertError(blocked, 429, 'RATE_LIMITED');
      assert.match(String(blocked.headers['retry-after']), /^\d+$/);
    });
  });
}

if (DIALECTS.includes('postgres')) {
  describe('accounts: session revocations across instances [postgres]', () => {
    it('a session revoked, or signed out by a password change, on one instance is refused by the other', async (t) => {
      const { app, database } = await build(t, 'postgres');
      const other = await siblingApp(t, database);
      const user = await signUp(app);
      const [a, b] = [await signIn(app, user.email), await signIn(app, user.email)];
      for (const token of [a, b]) assert.equal((await client(other, token).get('/api/auth/me')).status, 200, 'warm on the other instance');

      const aId = (await sessionsOf(client(app, a))).find((s) => s.current)!.id;
      assert.equal((await user.api.delete(`/api/auth/sessions/${aId}`)).status, 200);
      assert.equal((await refusedSoon(client(other, a))).status, 401, 'revoked on the first instance');

      assert.equal((await user.api.post('/api/auth/password', { currentPassword: PASSWORD, newPassword: NEW_PASSWORD })).status, 200);
      assert.equal((await refusedSoon(client(other, b))).status, 401, 'signed out by the password change');
      assert.equal((await client(other, user.token).get('/api/auth/me')).status, 200, 'the caller stays signed in everywhere');
    });
  });
}
