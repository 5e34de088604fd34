import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, build, client, signUp } from './helper.js';

const PASSWORD = 'correct horse battery';

for (const dialect of DIALECTS) {
  describe(`accounts [${dialect}]`, () => {
    it('registers with a default datahub, bucket and root folder, and stores no secret in clear', async (t) => {
      const { app, database } = await build(t, dialect);
      const res = await client(app).post('/api/auth/register', { email: 'Ada@Example.com', password: PASSWORD, name: 'Ada' });
      assert.equal(res.status, 201);
      assert.equal(res.body.status, 201);
      const { user, accessToken, expiresAt } = res.body.data;
      assert.equal(user.email, 'ada@example.com');
      assert.match(user.id, /^usr_[0-9a-z]{26}$/);
      assert.match(user.defaultDatahubId, /^dhb_/);
      assert.match(user.defaultBucketId, /^bkt_/);
      assert.equal(user.quotaBytes, 10 * 1024 ** 3);
      assert.match(accessToken, /^cof_[A-Za-z0-9_-]{43}$/);
      assert.ok(Date.parse(expiresAt) > Date.now() + 29 * 86_400_000);
      const bucket = await database.db.selectFrom('buckets').selectAll().where('id', '=', user.defaultBucketId).executeTakeFirstOrThrow();
      const root = await database.db.selectFrom('folders').selectAll().where('id', '=', bucket.root_folder_id!).executeTakeFirstOrThrow();
      assert.equal(root.is_root, 1);
      const datahub = await database.db.selectFrom('datahubs').selectAll().where('id', '=', user.defaultDatahubId).executeTakeFirstOrThrow();
      assert.equal(datahub.location_id, 1, 'the first active location');
      const stored = await database.db.selectFrom('users').select('password_hash').where('id', '=', user.id).executeTakeFirstOrThrow();
      assert.match(stored.password_hash, /^\$argon2id\$/);
      const tokens = await database.db.selectFrom('tokens').select('token_hash').execute();
      assert.ok(tokens.length > 0 && tokens.every((row) => row.token_hash !== accessToken && !row.token_hash.includes(accessToken)));
    });

    it('refuses duplicate e-mails (case-insensitive) and invalid input with details', async (t) => {
      const { app } = await build(t, dialect);
      const api = client(app);
      await api.post('/api/auth/register', { email: 'bob@example.com', password: PASSWORD, name: 'Bob' });
      const dup = await api.post('/api/auth/register', { email: 'BOB@example.com', password: PASSWORD, name: 'Bob 2' });
      assert.equal(dup.status, 409);
      assert.equal(dup.body.code, 'EMAIL_TAKEN');
      for (const body of [
        { email: 'x@example.com', password: 'short', name: 'X' },
        { email: 'not-an-email', password: PASSWORD, name: 'X' },
        { email: 'y@example.com', password: PASSWORD },
      ]) {
        const res = await api.post('/api/auth/register', body);
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal(res.body.code, 'VALIDATION_FAILED');
        assert.ok(Array.isArray(res.body.details) && res.body.details.length > 0);
        assert.equal(typeof res.body.details[0].field, 'string');
      }
    });

    it('follows the registration policy', async (t) => {
      const closed = await build(t, dialect, { config: { registration: 'closed' } });
      const res = await client(closed.app).post('/api/auth/register', { email: 'a@example.com', password: PASSWORD, name: 'A' });
      assert.equal(res.status, 403);
      assert.equal(res.body.code, 'REGISTRATION_CLOSED');

      const first = await build(t, dialect, { config: { registration: 'first-user' } });
      const api = client(first.app);
      assert.equal((await api.post('/api/auth/register', { email: 'first@example.com', password: PASSWORD, name: 'First' })).status, 201);
      const second = await api.post('/api/auth/register', { email: 'second@example.com', password: PASSWORD, name: 'Second' });
      assert.equal(second.status, 403);
      assert.equal(second.body.code, 'REGISTRATION_CLOSED');
    });

    it('logs in and out; a logged-out token stops working', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const api = client(app);
      const login = await api.post('/api/auth/login', { email: user.email.toUpperCase(), password: PASSWORD });
      assert.equal(login.status, 200);
      const token = login.body.data.accessToken;
      assert.notEqual(token, user.token);
      const session = client(app, token);
      assert.equal((await session.get('/api/auth/me')).body.data.id, user.id);
      assert.equal((await session.post('/api/auth/logout')).status, 200);
      const after = await session.get('/api/auth/me');
      assert.equal(after.status, 401);
      assert.equal(after.body.code, 'UNAUTHENTICATED');
      assert.equal((await user.api.get('/api/auth/me')).status, 200, 'other sessions keep working');
      for (const body of [{ email: user.email, password: 'wrong password' }, { email: 'nobody@example.com', password: PASSWORD }]) {
        const res = await api.post('/api/auth/login', body);
        assert.equal(res.status, 401);
        assert.equal(res.body.code, 'INVALID_CREDENTIALS');
      }
    });

    it('throttles failed logins per account, with Retry-After, and a success resets the count', async (t) => {
      const { app } = await build(t, dialect, { config: { loginMaxFailuresPerAccount: 3, loginMaxFailuresPerAddress: 100 } });
      const victim = await signUp(app);
      const bystander = await signUp(app);
      const api = client(app);
      assert.equal((await api.post('/api/auth/login', { email: victim.email, password: 'wrong 1' })).status, 401);
      assert.equal((await api.post('/api/auth/login', { email: victim.email, password: 'wrong 2' })).status, 401);
      assert.equal((await api.post('/api/auth/login', { email: victim.email, password: PASSWORD })).status, 200, 'a success resets');
      for (let i = 0; i < 3; i++) assert.equal((await api.post('/api/auth/login', { email: victim.email, password: `bad ${i}` })).status, 401);
      const blocked = await api.post('/api/auth/login', { email: victim.email, password: PASSWORD });
      assert.equal(blocked.status, 429);
      assert.equal(blocked.body.code, 'RATE_LIMITED');
      const retryAfter = Number(blocked.headers['retry-after']);
      assert.ok(Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= 900, `Retry-After ${blocked.headers['retry-after']}`);
      assert.equal((await api.post('/api/auth/login', { email: bystander.email, password: PASSWORD })).status, 200);
    });

    it('throttles failed logins per client address across accounts', async (t) => {
      const { app } = await build(t, dialect, { config: { loginMaxFailuresPerAccount: 100, loginMaxFailuresPerAddress: 3 } });
      const user = await signUp(app);
      const api = client(app);
      for (let i = 0; i < 3; i++) assert.equal((await api.post('/api/auth/login', { email: `ghost${i}@example.com`, password: 'nope nope' })).status, 401);
      assert.equal((await api.post('/api/auth/login', { email: user.email, password: PASSWORD })).status, 429);
    });

    it('rejects missing, malformed and unknown tokens with the error envelope', async (t) => {
      const { app } = await build(t, dialect);
      for (const headers of [{}, { authorization: 'Basic abc' }, { authorization: 'Bearer' }, { authorization: 'Bearer cof_unknown' }]) {
        const res = await app.inject({ method: 'GET', url: '/api/auth/me', headers });
        assert.equal(res.statusCode, 401, JSON.stringify(headers));
        const body = res.json() as Record<string, unknown>;
        assert.deepEqual(Object.keys(body).sort(), ['code', 'data', 'message', 'status']);
        assert.deepEqual([body.status, body.code, body.data, typeof body.message], [401, 'UNAUTHENTICATED', null, 'string']);
      }
    });

    it('manages personal access tokens', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const other = await signUp(app);
      const created = await user.api.post('/api/auth/tokens', { name: 'backup script', expiresInDays: 7 });
      assert.equal(created.status, 201);
      const { id, token, expiresAt } = created.body.data;
      assert.match(token, /^cof_/);
      assert.ok(Math.abs(Date.parse(expiresAt) - (Date.now() + 7 * 86_400_000)) < 60_000);
      const pat = client(app, token);
      assert.equal((await pat.get('/api/auth/me')).body.data.id, user.id);
      const list = await user.api.get('/api/auth/tokens');
      assert.deepEqual(list.body.data.map((x: any) => x.id), [id]);
      assert.ok(!JSON.stringify(list.body).includes(token), 'the secret is never listed');
      assert.equal((await other.api.delete(`/api/auth/tokens/${id}`)).status, 404);
      assert.equal((await user.api.delete('/api/auth/tokens/tok_00000000000000000000000000')).body.code, 'TOKEN_NOT_FOUND');
      assert.equal((await user.api.delete('/api/auth/tokens/nope')).body.code, 'INVALID_ID');
      assert.equal((await user.api.delete(`/api/auth/tokens/${id}`)).status, 200);
      assert.equal((await pat.get('/api/auth/me')).status, 401);
    });

    it('looks users up by exact e-mail', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app, 'Grace');
      const other = await signUp(app);
      const found = await other.api.get(`/api/users/lookup?email=${encodeURIComponent(user.email.toUpperCase())}`);
      assert.equal(found.status, 200);
      assert.deepEqual(found.body.data, { id: user.id, name: 'Grace' });
      assert.equal((await other.api.get('/api/users/lookup?email=missing@example.com')).body.code, 'USER_NOT_FOUND');
      assert.equal((await other.api.get(`/api/users/lookup?email=${user.email.slice(0, 5)}`)).status, 404);
      assert.equal((await client(app).get(`/api/users/lookup?email=${user.email}`)).status, 401);
    });
  });
}
