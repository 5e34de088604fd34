import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { DIALECTS, build, client, signUp, type ApiResponse } from '../../helper.js';
import { assertError, assertRateLimited } from '../../support/errors.js';
import { refusedSoon } from '../../support/auth.js';

const PASSWORD = 'correct horse battery';
const DAY_MS = 86_400_000;
const GIB = 1024 ** 3;
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const USER_KEYS = ['createdAt', 'defaultBucketId', 'defaultDatahubId', 'email', 'id', 'isAdmin', 'name', 'quotaBytes'];
const TOKEN_KEYS = ['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'name'];
const ID_BODY = '[0-9a-hjkmnp-tv-z]{26}';
const id = (prefix: string) => new RegExp(`^${prefix}_${ID_BODY}$`);
const BEARER = /^cof_[A-Za-z0-9_-]{43}$/;

/** Asserts a success envelope {status, message, data} with the given status. */
function assertOk(res: ApiResponse, status = 200) {
  assert.equal(res.status, status, `expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
  assert.deepEqual(Object.keys(res.body).sort(), ['data', 'message', 'status']);
  assert.equal(res.body.status, status);
  assert.equal(typeof res.body.message, 'string');
}

/** Asserts `iso` is an ISO timestamp with milliseconds within `toleranceMs` of `expectedMs`. */
function assertAbout(iso: string, expectedMs: number, toleranceMs = 60_000) {
  assert.match(iso, ISO_MS);
  assert.ok(Math.abs(Date.parse(iso) - expectedMs) < toleranceMs, `${iso} is not about ${new Date(expectedMs).toISOString()}`);
}

function assertValidation(res: ApiResponse, field: string) {
  assertError(res, 400, 'VALIDATION_FAILED');
  assert.ok(Array.isArray(res.body.details) && res.body.details.length > 0, 'validation errors carry details');
  for (const detail of res.body.details) {
    assert.equal(typeof detail.field, 'string');
    assert.equal(typeof detail.problem, 'string');
  }
  assert.ok(
    res.body.details.some((d: { field: string }) => d.field === field),
    `no detail names ${field}: ${JSON.stringify(res.body.details)}`,
  );
}

/** POST /api/auth/login from a given client address. */
async function login(
  app: FastifyInstance,
  email: string,
  password: string,
  remoteAddress = '127.0.0.1',
  headers: Record<string, string> = {},
): Promise<ApiResponse> {
  const res = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { email, password }, remoteAddress, headers });
  return { status: res.statusCode, body: res.json(), headers: res.headers };
}

async function register(app: FastifyInstance, email: string, name = 'Someone', password = PASSWORD): Promise<ApiResponse> {
  return client(app).post('/api/auth/register', { email, password, name });
}

for (const dialect of DIALECTS) {
  describe(`accounts: registration [${dialect}]`, () => {
    it('answers 201 with the envelope {user, accessToken, expiresAt} and a usable token', async (t) => {
      const { app } = await build(t, dialect);
      const before = Date.now();
      const res = await register(app, 'Ada@Example.com', '  Ada Lovelace ');
      assertOk(res, 201);
      assert.deepEqual(Object.keys(res.body.data).sort(), ['accessToken', 'expiresAt', 'user']);

      const { user, accessToken, expiresAt } = res.body.data;
      assert.deepEqual(Object.keys(user).sort(), USER_KEYS, 'no password hash or other internal field');
      assert.match(user.id, id('usr'));
      assert.equal(user.email, 'ada@example.com', 'e-mails are kept in lower case');
      assert.equal(user.name, 'Ada Lovelace', 'names are trimmed');
      assert.match(user.defaultDatahubId, id('dhb'));
      assert.match(user.defaultBucketId, id('bkt'));
      assert.equal(user.quotaBytes, 10 * GIB, 'the default quota is 10 GiB');
      assertAbout(user.createdAt, before);
      assert.match(accessToken, BEARER, '256 random bits, base64url, cof_ prefix');
      assertAbout(expiresAt, before + 30 * DAY_MS);

      const me = await client(app, accessToken).get('/api/auth/me');
      assertOk(me);
      assert.deepEqual(me.body.data, user);
    });

    it('creates the default datahub in the first active location, its bucket and the root folder', async (t) => {
      const { app, database } = await build(t, dialect);
      const { user } = (await register(app, 'grace@example.com', 'Grace')).body.data;
      const db = database.db;
      const datahub = await db.selectFrom('datahubs').selectAll().where('id', '=', user.defaultDatahubId).executeTakeFirstOrThrow();
      assert.equal(datahub.owner_id, user.id);
      const firstActive = await db
        .selectFrom('locations')
        .innerJoin('regions', 'regions.id', 'locations.region_id')
        .select('locations.id')
        .where('locations.is_active', '=', 1)
        .where('regions.is_active', '=', 1)
        .orderBy('locations.id')
        .executeTakeFirstOrThrow();
      assert.equal(Number(datahub.location_id), Number(firstActive.id));
      const bucket = await db.selectFrom('buckets').selectAll().where('id', '=', user.defaultBucketId).executeTakeFirstOrThrow();
      assert.equal(bucket.datahub_id, datahub.id);
      assert.equal(bucket.owner_id, user.id);
      assert.ok(bucket.root_folder_id, 'the bucket has a root folder');
      const root = await db.selectFrom('folders').selectAll().where('id', '=', bucket.root_folder_id!).executeTakeFirstOrThrow();
      assert.equal(Number(root.is_root), 1);
      assert.equal(root.parent_id, null);
      assert.equal(root.bucket_id, bucket.id);
      const stored = await db.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow();
      assert.equal(stored.default_datahub_id, datahub.id);
      assert.equal(stored.default_bucket_id, bucket.id);
    });

    it('uses the configured default quota and session lifetime', async (t) => {
      const { app } = await build(t, dialect, { config: { defaultQuotaBytes: 12_345, sessionTtlDays: 7 } });
      const res = await register(app, 'q@example.com');
      assertOk(res, 201);
      assert.equal(res.body.data.user.quotaBytes, 12_345);
      assertAbout(res.body.data.expiresAt, Date.now() + 7 * DAY_MS);
      const me = await client(app, res.body.data.accessToken).get('/api/auth/me');
      assert.equal(me.body.data.quotaBytes, 12_345);
    });

    it('refuses a taken e-mail with 409 EMAIL_TAKEN, whatever its case', async (t) => {
      const { app, database } = await build(t, dialect);
      assertOk(await register(app, 'bob@example.com', 'Bob'), 201);
      for (const email of ['bob@example.com', 'BOB@example.com', 'Bob@Example.COM']) {
        assertError(await register(app, email, 'Bob again'), 409, 'EMAIL_TAKEN');
      }
      const rows = await database.db.selectFrom('users').select(['email', 'name']).execute();
      assert.deepEqual(rows, [{ email: 'bob@example.com', name: 'Bob' }]);
    });

    it('lets only one of simultaneous sign-ups with one e-mail through', async (t) => {
      const { app, database } = await build(t, dialect);
      const results = await Promise.all(
        Array.from({ length: 5 }, (_, i) => register(app, i % 2 ? 'same@example.com' : 'SAME@example.com', `Same ${i}`)),
      );
      assert.deepEqual(results.map((r) => r.status).sort(), [201, 409, 409, 409, 409]);
      for (const res of results.filter((r) => r.status === 409)) assertError(res, 409, 'EMAIL_TAKEN');
      const users = await database.db.selectFrom('users').select('id').execute();
      assert.equal(users.length, 1);
      const datahubs = await database.db.selectFrom('datahubs').select('id').execute();
      assert.equal(datahubs.length, 1, 'the losers left no datahub behind');
    });

    it('answers invalid input with 400 VALIDATION_FAILED and details, and creates nothing', async (t) => {
      const { app, database } = await build(t, dialect);
      const api = client(app);
      assertValidation(await api.post('/api/auth/register', { email: 'x@example.com', password: 'short', name: 'X' }), 'body.password');
      assertValidation(await api.post('/api/auth/register', { email: 'x@example.com', password: '1234567', name: 'X' }), 'body.password');
      assertValidation(await api.post('/api/auth/register', { email: 'not-an-email', password: PASSWORD, name: 'X' }), 'body.email');
      assertValidation(await api.post('/api/auth/register', { email: 'x@', password: PASSWORD, name: 'X' }), 'body.email');
      assertValidation(await api.post('/api/auth/register', { email: 'x@example.com', password: PASSWORD }), 'body.name');
      assertValidation(await api.post('/api/auth/register', { email: 'x@example.com', password: PASSWORD, name: '' }), 'body.name');
      assertValidation(await api.post('/api/auth/register', { email: 'x@example.com', password: PASSWORD, name: '   ' }), 'body.name');
      assertValidation(await api.post('/api/auth/register', { password: PASSWORD, name: 'X' }), 'body.email');
      assertValidation(await api.post('/api/auth/register', { email: 'x@example.com', name: 'X' }), 'body.password');
      assertValidation(
        await api.post('/api/auth/register', { email: 'x@example.com', password: PASSWORD, name: 'n'.repeat(101) }),
        'body.name',
      );
      const count = await database.db.selectFrom('users').select('id').execute();
      assert.equal(count.length, 0, 'no account was created by an invalid request');
      // Exactly 8 characters is enough.
      assertOk(await api.post('/api/auth/register', { email: 'x@example.com', password: '12345678', name: 'X' }), 201);
    });

    it('ignores fields the client may not set (id, quota)', async (t) => {
      const { app } = await build(t, dialect);
      const res = await client(app).post('/api/auth/register', {
        email: 'sneaky@example.com',
        password: PASSWORD,
        name: 'S',
        quotaBytes: 10 ** 15,
        id: 'usr_00000000000000000000000000',
      });
      assertOk(res, 201);
      assert.equal(res.body.data.user.quotaBytes, 10 * GIB);
      assert.notEqual(res.body.data.user.id, 'usr_00000000000000000000000000');
    });

    it('policy closed: 403 REGISTRATION_CLOSED and no account', async (t) => {
      const { app, database } = await build(t, dialect, { config: { registration: 'closed' } });
      assertError(await register(app, 'first@example.com'), 403, 'REGISTRATION_CLOSED');
      const users = await database.db.selectFrom('users').select('id').execute();
      assert.equal(users.length, 0);
    });

    it('policy first-user: the first sign-up succeeds, the next ones are 403', async (t) => {
      const { app, database } = await build(t, dialect, { config: { registration: 'first-user' } });
      const first = await register(app, 'first@example.com', 'First');
      assertOk(first, 201);
      assertError(await register(app, 'second@example.com', 'Second'), 403, 'REGISTRATION_CLOSED');
      assertError(await register(app, 'first@example.com', 'First again'), 403, 'REGISTRATION_CLOSED');
      const users = await database.db.selectFrom('users').select('email').execute();
      assert.deepEqual(users, [{ email: 'first@example.com' }]);
      // The first user can still sign in.
      assertOk(await login(app, 'first@example.com', PASSWORD));
    });

    it('policy first-user: of simultaneous first sign-ups, exactly one succeeds', async (t) => {
      const { app, database } = await build(t, dialect, { config: { registration: 'first-user' } });
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => register(app, `racer${i}@example.com`, `Racer ${i}`)));
      assert.deepEqual(results.map((r) => r.status).sort(), [201, 403, 403, 403, 403, 403]);
      for (const res of results.filter((r) => r.status === 403)) assertError(res, 403, 'REGISTRATION_CLOSED');
      const users = await database.db.selectFrom('users').select('id').execute();
      assert.equal(users.length, 1);
    });
  });

  describe(`accounts: login [${dialect}]`, () => {
    it('answers 200 with a new session for the right password, any e-mail case', async (t) => {
      const { app } = await build(t, dialect);
      const reg = (await register(app, 'ada@example.com', 'Ada')).body.data;
      const res = await login(app, 'ADA@Example.com', PASSWORD);
      assertOk(res);
      assert.deepEqual(Object.keys(res.body.data).sort(), ['accessToken', 'expiresAt', 'user']);
      assert.deepEqual(res.body.data.user, reg.user);
      assert.match(res.body.data.accessToken, BEARER);
      assert.notEqual(res.body.data.accessToken, reg.accessToken, 'every login gets its own token');
      assertAbout(res.body.data.expiresAt, Date.now() + 30 * DAY_MS);
      for (const token of [reg.accessToken, res.body.data.accessToken]) {
        const me = await client(app, token).get('/api/auth/me');
        assert.equal(me.status, 200);
        assert.equal(me.body.data.id, reg.user.id);
      }
    });

    it('answers a wrong password and an unknown e-mail alike: 401 INVALID_CREDENTIALS', async (t) => {
      const { app } = await build(t, dialect);
      await register(app, 'ada@example.com', 'Ada');
      const wrong = await login(app, 'ada@example.com', 'not the password');
      const unknown = await login(app, 'nobody@example.com', PASSWORD);
      const empty = await login(app, 'ada@example.com', '');
      for (const res of [wrong, unknown, empty]) {
        assertError(res, 401, 'INVALID_CREDENTIALS');
        assert.equal(res.body.data, null, 'no token on failure');
      }
      assert.equal(wrong.body.message, unknown.body.message, 'the answer does not tell which part was wrong');
      // The password is case-sensitive.
      assertError(await login(app, 'ada@example.com', PASSWORD.toUpperCase()), 401, 'INVALID_CREDENTIALS');
    });

    it('answers a login body without the fields with 400 VALIDATION_FAILED', async (t) => {
      const { app } = await build(t, dialect);
      assertValidation(await client(app).post('/api/auth/login', { email: 'ada@example.com' }), 'body.password');
      assertValidation(await client(app).post('/api/auth/login', { password: PASSWORD }), 'body.email');
    });
  });

  describe(`accounts: login throttling [${dialect}]`, () => {
    it('per account: the attempt after the limit is 429 with Retry-After, even with the right password', async (t) => {
      const { app } = await build(t, dialect, {
        config: { loginMaxFailuresPerAccount: 3, loginMaxFailuresPerAddress: 100, loginWindowSeconds: 600 },
      });
      await register(app, 'victim@example.com', 'Victim');
      await register(app, 'other@example.com', 'Other');
      for (let i = 0; i < 3; i++) assertError(await login(app, 'victim@example.com', `wrong ${i}`), 401, 'INVALID_CREDENTIALS');
      const blocked = await login(app, 'victim@example.com', PASSWORD);
      assertRateLimited(blocked, 600);
      assert.equal(blocked.body.data, null, 'no token while throttled');
      // Still blocked, from another address too: the counter is the account's.
      assertRateLimited(await login(app, 'victim@example.com', PASSWORD, '10.0.0.9'), 600);
      // The e-mail's case does not open another counter.
      assertRateLimited(await login(app, 'VICTIM@example.com', PASSWORD), 600);
      // Another account from the same address is still allowed (the per-address limit is higher).
      assertOk(await login(app, 'other@example.com', PASSWORD));
    });

    it('per account: failures under differently-cased e-mails count together', async (t) => {
      const { app } = await build(t, dialect, { config: { loginMaxFailuresPerAccount: 3, loginMaxFailuresPerAddress: 100 } });
      await register(app, 'ada@example.com', 'Ada');
      assertError(await login(app, 'ada@example.com', 'wrong'), 401, 'INVALID_CREDENTIALS');
      assertError(await login(app, 'ADA@example.com', 'wrong'), 401, 'INVALID_CREDENTIALS');
      assertError(await login(app, 'Ada@Example.Com', 'wrong'), 401, 'INVALID_CREDENTIALS');
      assertRateLimited(await login(app, 'ada@example.com', PASSWORD), 900);
    });

    it('per account: unknown e-mails are throttled too', async (t) => {
      const { app } = await build(t, dialect, { config: { loginMaxFailuresPerAccount: 2, loginMaxFailuresPerAddress: 100 } });
      assertError(await login(app, 'ghost@example.com', 'x'), 401, 'INVALID_CREDENTIALS');
      assertError(await login(app, 'ghost@example.com', 'y'), 401, 'INVALID_CREDENTIALS');
      assertRateLimited(await login(app, 'ghost@example.com', 'z'), 900);
    });

    it('per address: failures on several accounts block the next attempt on another account from that address', async (t) => {
      const { app } = await build(t, dialect, {
        config: { loginMaxFailuresPerAddress: 3, loginMaxFailuresPerAccount: 100, loginWindowSeconds: 300 },
      });
      await register(app, 'a@example.com', 'A');
      await register(app, 'b@example.com', 'B');
      await register(app, 'd@example.com', 'D');
      assertError(await login(app, 'a@example.com', 'wrong'), 401, 'INVALID_CREDENTIALS');
      assertError(await login(app, 'b@example.com', 'wrong'), 401, 'INVALID_CREDENTIALS');
      assertError(await login(app, 'c@example.com', 'wrong'), 401, 'INVALID_CREDENTIALS');
      assertRateLimited(await login(app, 'd@example.com', PASSWORD), 300);
      // Another client address is not affected.
      const elsewhere = await login(app, 'd@example.com', PASSWORD, '10.0.0.2');
      assertOk(elsewhere);
      assert.match(elsewhere.body.data.accessToken, BEARER);
    });

    it('per address: X-Forwarded-For is ignored unless the proxy is trusted', async (t) => {
      const { app } = await build(t, dialect, { config: { loginMaxFailuresPerAddress: 2, loginMaxFailuresPerAccount: 100 } });
      await register(app, 'a@example.com', 'A');
      assertError(await login(app, 'a@example.com', 'wrong', '127.0.0.1', { 'x-forwarded-for': '1.1.1.1' }), 401, 'INVALID_CREDENTIALS');
      assertError(await login(app, 'a@example.com', 'wrong', '127.0.0.1', { 'x-forwarded-for': '2.2.2.2' }), 401, 'INVALID_CREDENTIALS');
      assertRateLimited(await login(app, 'a@example.com', PASSWORD, '127.0.0.1', { 'x-forwarded-for': '3.3.3.3' }), 900);
    });

    it('per address: behind a trusted proxy, the forwarded client address is the one counted', async (t) => {
      const { app } = await build(t, dialect, {
        config: { trustProxy: true, loginMaxFailuresPerAddress: 2, loginMaxFailuresPerAccount: 100 },
      });
      await register(app, 'a@example.com', 'A');
      const via = (address: string) => ({ 'x-forwarded-for': address });
      assertError(await login(app, 'a@example.com', 'wrong', '127.0.0.1', via('1.1.1.1')), 401, 'INVALID_CREDENTIALS');
      assertError(await login(app, 'a@example.com', 'wrong', '127.0.0.1', via('1.1.1.1')), 401, 'INVALID_CREDENTIALS');
      assertRateLimited(await login(app, 'a@example.com', PASSWORD, '127.0.0.1', via('1.1.1.1')), 900);
      assertOk(await login(app, 'a@example.com', PASSWORD, '127.0.0.1', via('2.2.2.2')));
    });

    it('a successful login resets the account counter', async (t) => {
      const { app } = await build(t, dialect, { config: { loginMaxFailuresPerAccount: 3, loginMaxFailuresPerAddress: 100 } });
      await register(app, 'ada@example.com', 'Ada');
      assertError(await login(app, 'ada@example.com', 'wrong'), 401, 'INVALID_CREDENTIALS');
      assertError(await login(app, 'ada@example.com', 'wrong'), 401, 'INVALID_CREDENTIALS');
      assertOk(await login(app, 'ada@example.com', PASSWORD));
      // Without the reset, the second of these would already be the 5th failure in the window.
      for (let i = 0; i < 3; i++) assertError(await login(app, 'ada@example.com', 'wrong'), 401, 'INVALID_CREDENTIALS');
      assertRateLimited(await login(app, 'ada@example.com', PASSWORD), 900);
    });

    it('successful logins do not use up the address allowance', async (t) => {
      const { app } = await build(t, dialect, { config: { loginMaxFailuresPerAddress: 2, loginMaxFailuresPerAccount: 100 } });
      await register(app, 'ada@example.com', 'Ada');
      for (let i = 0; i < 5; i++) assertOk(await login(app, 'ada@example.com', PASSWORD));
      assertError(await login(app, 'ada@example.com', 'wrong'), 401, 'INVALID_CREDENTIALS');
      assertError(await login(app, 'ada@example.com', 'wrong'), 401, 'INVALID_CREDENTIALS');
      assertRateLimited(await login(app, 'ada@example.com', PASSWORD), 900);
    });

    it('simultaneous wrong guesses cannot slip past the limit', async (t) => {
      const { app } = await build(t, dialect, { config: { loginMaxFailuresPerAccount: 3, loginMaxFailuresPerAddress: 1000 } });
      await register(app, 'ada@example.com', 'Ada');
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => login(app, 'ada@example.com', `guess ${i}`)));
      const statuses = results.map((r) => r.status);
      assert.equal(statuses.filter((s) => s === 401).length, 3, `statuses: ${statuses.join(', ')}`);
      assert.equal(statuses.filter((s) => s === 429).length, 9, `statuses: ${statuses.join(', ')}`);
    });

    it('the block ends with the window', async (t) => {
      const { app } = await build(t, dialect, {
        config: { loginMaxFailuresPerAccount: 1, loginMaxFailuresPerAddress: 100, loginWindowSeconds: 1 },
      });
      await register(app, 'ada@example.com', 'Ada');
      assertError(await login(app, 'ada@example.com', 'wrong'), 401, 'INVALID_CREDENTIALS');
      const blocked = await login(app, 'ada@example.com', PASSWORD);
      assertRateLimited(blocked, 1);
      await sleep(1100);
      assertOk(await login(app, 'ada@example.com', PASSWORD));
    });
  });

  describe(`accounts: sessions and authentication [${dialect}]`, () => {
    it('GET /auth/me returns the signed-in user', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app, 'Me Myself');
      const me = await user.api.get('/api/auth/me');
      assertOk(me);
      assert.deepEqual(Object.keys(me.body.data).sort(), USER_KEYS);
      assert.equal(me.body.data.id, user.id);
      assert.equal(me.body.data.email, user.email);
      assert.equal(me.body.data.name, 'Me Myself');
      assert.equal(me.body.data.defaultDatahubId, user.defaultDatahubId);
      assert.equal(me.body.data.defaultBucketId, user.defaultBucketId);
      assert.equal(me.body.data.quotaBytes, 10 * GIB);
      // Another user sees themself, not the first one.
      const other = await signUp(app, 'Someone Else');
      assert.equal((await other.api.get('/api/auth/me')).body.data.id, other.id);
    });

    it('logout: 200, then the token stops working; other sessions keep working', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const second = (await login(app, user.email, PASSWORD)).body.data.accessToken;
      const res = await user.api.post('/api/auth/logout');
      assertOk(res);
      assert.equal(res.body.data, null);
      assertError(await user.api.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
      assertError(await user.api.post('/api/auth/logout'), 401, 'UNAUTHENTICATED');
      assertOk(await client(app, second).get('/api/auth/me'));
    });

    it('logout without a token is 401', async (t) => {
      const { app } = await build(t, dialect);
      assertError(await client(app).post('/api/auth/logout'), 401, 'UNAUTHENTICATED');
    });

    it('refuses a missing, malformed or unknown token with 401 UNAUTHENTICATED', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const headers: (Record<string, string> | undefined)[] = [
        undefined,
        { authorization: '' },
        { authorization: 'Bearer' },
        { authorization: 'Bearer ' },
        { authorization: user.token },
        { authorization: `Basic ${Buffer.from(`${user.email}:${PASSWORD}`).toString('base64')}` },
        { authorization: `Token ${user.token}` },
        { authorization: `Bearer ${user.token} extra` },
        { authorization: `Bearer ${user.token}x` },
        { authorization: `Bearer ${user.token.slice(0, -1)}` },
        { authorization: 'Bearer cof_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
        { authorization: `Bearer ${'a'.repeat(600)}` },
      ];
      for (const h of headers) {
        const res = await client(app).get('/api/auth/me', h);
        assertError(res, 401, 'UNAUTHENTICATED');
        assert.equal(res.body.message, 'A valid bearer token is required');
      }
      // The scheme is case-insensitive (RFC 9110), and the same token still works.
      assertOk(await client(app).get('/api/auth/me', { authorization: `bearer ${user.token}` }));
      assertOk(await client(app).get('/api/auth/me', { authorization: `BEARER ${user.token}` }));
    });

    it('protects every account route except register and login', async (t) => {
      const { app } = await build(t, dialect);
      const anon = client(app);
      assertError(await anon.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
      assertError(await anon.post('/api/auth/logout'), 401, 'UNAUTHENTICATED');
      assertError(await anon.post('/api/auth/tokens', { name: 'x' }), 401, 'UNAUTHENTICATED');
      assertError(await anon.get('/api/auth/tokens'), 401, 'UNAUTHENTICATED');
      assertError(await anon.delete('/api/auth/tokens/tok_00000000000000000000000000'), 401, 'UNAUTHENTICATED');
      assertError(await anon.get('/api/users/lookup?email=a%40example.com'), 401, 'UNAUTHENTICATED');
    });

    it('refuses an expired token', async (t) => {
      const { app, database } = await build(t, dialect);
      const user = await signUp(app);
      const created = (await user.api.post('/api/auth/tokens', { name: 'short-lived', expiresInDays: 1 })).body.data;
      assertOk(await client(app, created.token).get('/api/auth/me'));
      // Changed behind the app's back, as an administrator would: over PostgreSQL the instance
      // hears of it through the tokens trigger's notification, a few milliseconds later.
      await database.db
        .updateTable('tokens')
        .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
        .where('id', '=', created.id)
        .execute();
      assertError(await refusedSoon(client(app, created.token)), 401, 'UNAUTHENTICATED');
      // The same for a session token.
      await database.db
        .updateTable('tokens')
        .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
        .where('kind', '=', 'session')
        .execute();
      assertError(await refusedSoon(user.api), 401, 'UNAUTHENTICATED');
    });
  });

  describe(`accounts: personal tokens [${dialect}]`, () => {
    it('creates a token (201), shown once, that authenticates', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const res = await user.api.post('/api/auth/tokens', { name: '  backup script ' });
      assertOk(res, 201);
      const created = res.body.data;
      assert.deepEqual(Object.keys(created).sort(), [...TOKEN_KEYS, 'token'].sort());
      assert.match(created.id, id('tok'));
      assert.equal(created.name, 'backup script');
      assert.match(created.token, BEARER);
      assert.ok(created.token.startsWith('cof_'));
      assert.notEqual(created.token, user.token);
      assertAbout(created.createdAt, Date.now());
      assert.equal(created.expiresAt, null, 'no expiresInDays: the token does not expire');
      assert.equal(created.lastUsedAt, null);

      const me = await client(app, created.token).get('/api/auth/me');
      assertOk(me);
      assert.equal(me.body.data.id, user.id);
      assert.equal(me.body.data.email, user.email);
    });

    it('lists personal tokens without their secret, and not the sessions', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const empty = await user.api.get('/api/auth/tokens');
      assertOk(empty);
      assert.deepEqual(empty.body.data, [], 'the session token is not a personal token');
      const a = (await user.api.post('/api/auth/tokens', { name: 'alpha' })).body.data;
      const b = (await user.api.post('/api/auth/tokens', { name: 'beta', expiresInDays: 3 })).body.data;
      const list = await user.api.get('/api/auth/tokens');
      assertOk(list);
      assert.equal(list.body.data.length, 2);
      const raw = JSON.stringify(list.body);
      for (const secret of [a.token, b.token, user.token]) assert.ok(!raw.includes(secret), 'a token secret appears in the list');
      for (const item of list.body.data) assert.deepEqual(Object.keys(item).sort(), TOKEN_KEYS);
      const byId = new Map(list.body.data.map((item: { id: string }) => [item.id, item]));
      const { token: _a, ...aView } = a;
      const { token: _b, ...bView } = b;
      assert.deepEqual(byId.get(a.id), aView);
      assert.deepEqual(byId.get(b.id), bView);
      // Another user does not see them.
      const other = await signUp(app);
      assert.deepEqual((await other.api.get('/api/auth/tokens')).body.data, []);
    });

    it('records when a personal token was last used', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const created = (await user.api.post('/api/auth/tokens', { name: 'cron' })).body.data;
      const before = Date.now();
      assertOk(await client(app, created.token).get('/api/auth/me'));
      const item = (await user.api.get('/api/auth/tokens')).body.data.find((x: { id: string }) => x.id === created.id);
      assert.ok(item.lastUsedAt, 'lastUsedAt is set after a use');
      assertAbout(item.lastUsedAt, before);
    });

    it('deleting a token makes it stop working; deleting it again is 404', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const keep = (await user.api.post('/api/auth/tokens', { name: 'keep' })).body.data;
      const drop = (await user.api.post('/api/auth/tokens', { name: 'drop' })).body.data;
      assertOk(await client(app, drop.token).get('/api/auth/me'));
      const res = await user.api.delete(`/api/auth/tokens/${drop.id}`);
      assertOk(res);
      assert.equal(res.body.data, null);
      assertError(await client(app, drop.token).get('/api/auth/me'), 401, 'UNAUTHENTICATED');
      assert.deepEqual(
        (await user.api.get('/api/auth/tokens')).body.data.map((x: { id: string }) => x.id),
        [keep.id],
      );
      assertOk(await client(app, keep.token).get('/api/auth/me'));
      assertOk(await user.api.get('/api/auth/me'), 200);
      assertError(await user.api.delete(`/api/auth/tokens/${drop.id}`), 404, 'TOKEN_NOT_FOUND');
    });

    it('a token can revoke itself, and logout with a personal token revokes it', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const self = (await user.api.post('/api/auth/tokens', { name: 'self' })).body.data;
      assertOk(await client(app, self.token).delete(`/api/auth/tokens/${self.id}`));
      assertError(await client(app, self.token).get('/api/auth/me'), 401, 'UNAUTHENTICATED');
      const viaLogout = (await user.api.post('/api/auth/tokens', { name: 'logout' })).body.data;
      assertOk(await client(app, viaLogout.token).post('/api/auth/logout'));
      assertError(await client(app, viaLogout.token).get('/api/auth/me'), 401, 'UNAUTHENTICATED');
      assert.deepEqual((await user.api.get('/api/auth/tokens')).body.data, []);
    });

    it('logging out of a session leaves personal tokens working', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const pat = (await user.api.post('/api/auth/tokens', { name: 'script' })).body.data;
      assertOk(await user.api.post('/api/auth/logout'));
      assertOk(await client(app, pat.token).get('/api/auth/me'));
    });

    it("delete: unknown id 404 TOKEN_NOT_FOUND, malformed id 400 INVALID_ID, another user's token 404", async (t) => {
      const { app } = await build(t, dialect);
      const alice = await signUp(app, 'Alice');
      const bob = await signUp(app, 'Bob');
      assertError(await alice.api.delete('/api/auth/tokens/tok_00000000000000000000000000'), 404, 'TOKEN_NOT_FOUND');
      for (const bad of [
        'nope',
        'tok_short',
        'usr_00000000000000000000000000',
        'tok_0000000000000000000000000U',
        'TOK_00000000000000000000000000',
      ]) {
        const res = await alice.api.delete(`/api/auth/tokens/${bad}`);
        assertError(res, 400, 'INVALID_ID');
      }
      const bobs = (await bob.api.post('/api/auth/tokens', { name: 'bob only' })).body.data;
      assertError(await alice.api.delete(`/api/auth/tokens/${bobs.id}`), 404, 'TOKEN_NOT_FOUND');
      assertOk(await client(app, bobs.token).get('/api/auth/me'), 200);
      assert.equal((await bob.api.get('/api/auth/tokens')).body.data.length, 1);
    });

    it('expiresInDays sets expiresAt to about now + days', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      for (const days of [1, 30, 3650]) {
        const before = Date.now();
        const res = await user.api.post('/api/auth/tokens', { name: `for ${days} days`, expiresInDays: days });
        assertOk(res, 201);
        assertAbout(res.body.data.expiresAt, before + days * DAY_MS, 10_000);
        assert.ok(Date.parse(res.body.data.expiresAt) >= Date.parse(res.body.data.createdAt) + days * DAY_MS - 1000);
        assertOk(await client(app, res.body.data.token).get('/api/auth/me'));
      }
    });

    it('refuses invalid token requests with 400 VALIDATION_FAILED', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      assertValidation(await user.api.post('/api/auth/tokens', {}), 'body.name');
      assertValidation(await user.api.post('/api/auth/tokens', { name: '' }), 'body.name');
      assertValidation(await user.api.post('/api/auth/tokens', { name: '   ' }), 'body.name');
      assertValidation(await user.api.post('/api/auth/tokens', { name: 'x'.repeat(101) }), 'body.name');
      for (const expiresInDays of [0, -1, 3651, 1.5, 'soon']) {
        assertValidation(await user.api.post('/api/auth/tokens', { name: 'x', expiresInDays }), 'body.expiresInDays');
      }
      assert.deepEqual((await user.api.get('/api/auth/tokens')).body.data, [], 'nothing was created');
    });
  });

  describe(`accounts: user lookup [${dialect}]`, () => {
    it('finds an exact e-mail match, case-insensitively, with only id and name', async (t) => {
      const { app } = await build(t, dialect);
      const asker = await signUp(app);
      const reg = (await register(app, 'colleague@example.com', 'Col League')).body.data.user;
      for (const email of ['colleague@example.com', 'COLLEAGUE@Example.com']) {
        const res = await asker.api.get(`/api/users/lookup?email=${encodeURIComponent(email)}`);
        assertOk(res);
        assert.deepEqual(res.body.data, { id: reg.id, name: 'Col League' });
      }
    });

    it('answers 404 USER_NOT_FOUND for an unknown or partial e-mail', async (t) => {
      const { app } = await build(t, dialect);
      const asker = await signUp(app);
      await register(app, 'colleague@example.com', 'Col');
      for (const email of [
        'nobody@example.com',
        'colleague@example',
        'colleague',
        'olleague@example.com',
        'colleague@example.com.evil',
        '%@example.com',
      ]) {
        assertError(await asker.api.get(`/api/users/lookup?email=${encodeURIComponent(email)}`), 404, 'USER_NOT_FOUND');
      }
    });

    it('needs a signed-in caller and an e-mail', async (t) => {
      const { app } = await build(t, dialect);
      const asker = await signUp(app);
      assertError(await client(app).get(`/api/users/lookup?email=${encodeURIComponent(asker.email)}`), 401, 'UNAUTHENTICATED');
      assertValidation(await asker.api.get('/api/users/lookup'), 'querystring.email');
    });
  });

  describe(`accounts: secrets at rest [${dialect}]`, () => {
    it('stores tokens only as hashes and passwords only as Argon2id hashes', async (t) => {
      const { app, database } = await build(t, dialect);
      const user = await signUp(app);
      const session = (await login(app, user.email, PASSWORD)).body.data.accessToken;
      const pat = (await user.api.post('/api/auth/tokens', { name: 'p' })).body.data.token;
      const secrets = [user.token, session, pat];

      const tokens = await database.db.selectFrom('tokens').selectAll().execute();
      assert.equal(tokens.length, 3);
      assert.deepEqual(tokens.map((row) => row.kind).sort(), ['personal', 'session', 'session']);
      const everyTokenCell = JSON.stringify(tokens);
      for (const secret of secrets) {
        assert.ok(!everyTokenCell.includes(secret), 'a token is stored in clear');
        assert.ok(!everyTokenCell.includes(secret.slice(4)), 'a token body is stored in clear');
      }
      for (const row of tokens) {
        assert.ok(!secrets.includes(row.token_hash));
        assert.ok(row.token_hash.length >= 32);
      }
      assert.equal(new Set(tokens.map((row) => row.token_hash)).size, 3, 'every token has its own hash');

      const users = await database.db.selectFrom('users').selectAll().execute();
      assert.equal(users.length, 1);
      assert.match(users[0].password_hash, /^\$argon2id\$/);
      assert.ok(!JSON.stringify(users).includes(PASSWORD), 'the password is stored in clear');
      // Two accounts with the same password get different hashes (salted).
      await signUp(app);
      const hashes = (await database.db.selectFrom('users').select('password_hash').execute()).map((r) => r.password_hash);
      assert.equal(new Set(hashes).size, 2);
    });
  });
}
