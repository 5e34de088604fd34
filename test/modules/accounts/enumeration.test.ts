import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { hashPassword } from '../../../src/lib/secrets.js';
import { DIALECTS, build, client, signUp, type ApiResponse, type TestUser } from '../../helper.js';
import { assertRateLimited } from '../../support/errors.js';

// Issue 29 item 5: which e-mails have accounts must not be learnt in bulk, neither from sign-up
// (409 EMAIL_TAKEN, answered without the password hashing a real sign-up does) nor from
// `GET /users/lookup`.

const PASSWORD = 'correct horse battery';

async function registerFrom(
  app: FastifyInstance,
  email: string,
  remoteAddress = '127.0.0.1',
  headers: Record<string, string> = {},
): Promise<ApiResponse> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/auth/register',
    payload: { email, password: PASSWORD, name: 'Someone' },
    remoteAddress,
    headers,
  });
  return { status: res.statusCode, body: res.json(), headers: res.headers };
}

async function lookup(app: FastifyInstance, user: TestUser, email: string, remoteAddress = '127.0.0.1'): Promise<ApiResponse> {
  const res = await app.inject({
    method: 'GET',
    url: `/api/users/lookup?email=${encodeURIComponent(email)}`,
    headers: { authorization: `Bearer ${user.token}` },
    remoteAddress,
  });
  return { status: res.statusCode, body: res.json(), headers: res.headers };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function elapsedMs(work: () => Promise<unknown>): Promise<number> {
  const started = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

for (const dialect of DIALECTS) {
  describe(`accounts: sign-up does not tell which e-mails have accounts [${dialect}]`, () => {
    it('sign-ups are limited per client address, taken e-mails and new ones alike', async (t) => {
      const { app } = await build(t, dialect, { config: { registrationMaxPerAddress: 3, registrationWindowSeconds: 600 } });
      assert.equal((await registerFrom(app, 'a@example.com')).status, 201);
      assert.equal((await registerFrom(app, 'a@example.com')).status, 409);
      assert.equal((await registerFrom(app, 'b@example.com')).status, 201);
      // The fourth attempt from this address, whether the e-mail is taken or not.
      assertRateLimited(await registerFrom(app, 'a@example.com'), 600);
      assertRateLimited(await registerFrom(app, 'c@example.com'), 600);
      // Another address has its own allowance.
      assert.equal((await registerFrom(app, 'c@example.com', '10.0.0.7')).status, 201);
      assert.equal((await registerFrom(app, 'a@example.com', '10.0.0.7')).status, 409);
    });

    it('X-Forwarded-For does not open a new allowance unless the proxy is trusted', async (t) => {
      const { app } = await build(t, dialect, { config: { registrationMaxPerAddress: 2 } });
      assert.equal((await registerFrom(app, 'a@example.com', '127.0.0.1', { 'x-forwarded-for': '1.1.1.1' })).status, 201);
      assert.equal((await registerFrom(app, 'b@example.com', '127.0.0.1', { 'x-forwarded-for': '2.2.2.2' })).status, 201);
      assert.equal((await registerFrom(app, 'c@example.com', '127.0.0.1', { 'x-forwarded-for': '3.3.3.3' })).status, 429);
    });

    it('a taken e-mail is answered no faster than a password hash: it costs the same Argon2 work as a sign-up', async (t) => {
      const { app } = await build(t, dialect, { config: { registrationMaxPerAddress: 1000 } });
      assert.equal((await registerFrom(app, 'taken@example.com')).status, 201);
      const taken: number[] = [];
      const hashing: number[] = [];
      // Interleaved, so a burst of load on the machine weighs on both series alike.
      for (let i = 0; i < 7; i++) {
        taken.push(await elapsedMs(async () => assert.equal((await registerFrom(app, 'taken@example.com')).status, 409)));
        hashing.push(await elapsedMs(() => hashPassword(PASSWORD)));
      }
      // Before: about 1 ms against 12 ms. Half a hash leaves room for noise and none for a shortcut.
      assert.ok(
        median(taken) >= 0.5 * median(hashing),
        `taken e-mail ${median(taken).toFixed(1)} ms, one hash ${median(hashing).toFixed(1)} ms`,
      );
    });
  });

  describe(`accounts: user lookups are limited [${dialect}]`, () => {
    it('per user: found and not found count alike; another user keeps their allowance', async (t) => {
      const { app } = await build(t, dialect, { config: { lookupMaxPerUser: 3, lookupMaxPerAddress: 100, lookupWindowSeconds: 300 } });
      const asker = await signUp(app);
      const other = await signUp(app);
      assert.equal((await lookup(app, asker, other.email)).status, 200);
      assert.equal((await lookup(app, asker, 'nobody@example.com')).status, 404);
      // From another address: the counter is the user's.
      assert.equal((await lookup(app, asker, other.email, '10.0.0.8')).status, 200);
      assertRateLimited(await lookup(app, asker, other.email), 300);
      assertRateLimited(await lookup(app, asker, 'nobody@example.com', '10.0.0.9'), 300);
      assert.equal((await lookup(app, other, asker.email)).status, 200);
    });

    it('per address: signed-in users behind one address share its allowance', async (t) => {
      const { app } = await build(t, dialect, { config: { lookupMaxPerUser: 100, lookupMaxPerAddress: 3 } });
      const [a, b, c] = [await signUp(app), await signUp(app), await signUp(app)];
      assert.equal((await lookup(app, a, b.email)).status, 200);
      assert.equal((await lookup(app, b, c.email)).status, 200);
      assert.equal((await lookup(app, c, 'nobody@example.com')).status, 404);
      assertRateLimited(await lookup(app, a, c.email), 900);
      assert.equal((await lookup(app, a, c.email, '10.0.0.2')).status, 200);
    });

    it('answers exact e-mails only, with no pattern matching', async (t) => {
      const { app } = await build(t, dialect);
      const asker = await signUp(app);
      const known = await signUp(app, 'Known');
      const [local, domain] = known.email.split('@');
      for (const probe of [
        `%@${domain}`,
        `${local.slice(0, 3)}%`,
        `_${local.slice(1)}@${domain}`,
        `${local}@%`,
        `${local}*@${domain}`,
        ` ${known.email}x`,
      ]) {
        assert.equal((await lookup(app, asker, probe)).status, 404, probe);
      }
      const found = await lookup(app, asker, ` ${known.email.toUpperCase()} `);
      assert.deepEqual(found.body.data, { id: known.id, name: 'Known' });
      assert.equal((await client(app).get(`/api/users/lookup?email=${encodeURIComponent(known.email)}`)).status, 401);
    });
  });
}
