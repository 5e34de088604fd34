// Teams from the browser (issue 34): the first account is an administrator; administrators list
// the accounts, set quotas, disable and enable them, and hand out one-time links with which a
// person joins or sets a new password. Everyone else gets 403 ADMIN_ONLY.
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { DIALECTS, build, client, signUp, type TestUser } from '../../helper.js';
import { assertError } from '../../support/errors.js';

const PASSWORD = 'correct horse battery';

/** The token at the end of an invitation link. */
const tokenOf = (link: string) => new URL(link).pathname.replace('/invite/', '');

for (const dialect of DIALECTS) {
  describe(`administration of accounts [${dialect}]`, () => {
    async function setUp(t: TestContext) {
      const { app, database } = await build(t, dialect);
      const admin = await signUp(app, 'Admin');
      const member = await signUp(app, 'Member');
      return { app, database, admin, member, anonymous: client(app) };
    }

    async function invite(admin: TestUser, email: string, quotaBytes?: number) {
      const res = await admin.api.post('/api/admin/invitations', { email, ...(quotaBytes === undefined ? {} : { quotaBytes }) });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body.data;
    }

    it('the first account is the administrator; others get 403 ADMIN_ONLY, strangers 401', async (t) => {
      const { admin, member, anonymous } = await setUp(t);
      assert.equal((await admin.api.get('/api/auth/me')).body.data.isAdmin, true);
      assert.equal((await member.api.get('/api/auth/me')).body.data.isAdmin, false);
      const calls = [
        (c: typeof anonymous) => c.get('/api/admin/users'),
        (c: typeof anonymous) => c.patch(`/api/admin/users/${admin.id}`, { disabled: true }),
        (c: typeof anonymous) => c.post('/api/admin/invitations', { email: 'x@example.com' }),
        (c: typeof anonymous) => c.get('/api/admin/invitations'),
        (c: typeof anonymous) => c.post(`/api/admin/users/${admin.id}/password-reset`),
      ];
      for (const call of calls) {
        assertError(await call(member.api), 403, 'ADMIN_ONLY');
        assertError(await call(anonymous), 401, 'UNAUTHENTICATED');
      }
      const users = (await admin.api.get('/api/admin/users')).body.data;
      assert.deepEqual(
        users.map((u: any) => [u.email, u.isAdmin, u.disabled, u.customQuota]),
        [
          [admin.email, true, false, false],
          [member.email, false, false, false],
        ],
      );
      assert.ok(users.every((u: any) => typeof u.lastActiveAt === 'string' && u.usedBytes === 0));
    });

    it('an invitation: joins once with the chosen password and the quota given, then is used up', async (t) => {
      const { app, admin, anonymous } = await setUp(t);
      const invitation = await invite(admin, 'Colleague@Example.com', 5_000_000);
      assert.equal(invitation.email, 'colleague@example.com');
      assert.match(invitation.invitationLink, /^http:\/\/localhost\/invite\/[A-Za-z0-9_-]{43}$/);
      const token = tokenOf(invitation.invitationLink);
      assert.deepEqual(
        (await admin.api.get('/api/admin/invitations')).body.data.map((i: any) => i.email),
        ['colleague@example.com'],
      );
      const info = await anonymous.get(`/api/invitations/${token}`);
      assert.deepEqual([info.status, info.body.data.purpose, info.body.data.email], [200, 'join', 'colleague@example.com']);
      assertError(await anonymous.post(`/api/invitations/${token}/accept`, { password: PASSWORD }), 400, 'VALIDATION_FAILED');
      assertError(await anonymous.post(`/api/invitations/${token}/accept`, { name: 'Col', password: 'short' }), 400);
      const joined = await anonymous.post(`/api/invitations/${token}/accept`, { name: 'Colleague', password: PASSWORD });
      assert.equal(joined.status, 201, JSON.stringify(joined.body));
      assert.deepEqual(
        [joined.body.data.user.email, joined.body.data.user.quotaBytes, joined.body.data.user.isAdmin],
        ['colleague@example.com', 5_000_000, false],
      );
      const me = await client(app, joined.body.data.accessToken).get('/api/auth/me');
      assert.equal(me.body.data.name, 'Colleague');
      const signIn = await anonymous.post('/api/auth/login', { email: 'colleague@example.com', password: PASSWORD });
      assert.equal(signIn.status, 200, JSON.stringify(signIn.body));
      assertError(await anonymous.post(`/api/invitations/${token}/accept`, { name: 'Again', password: PASSWORD }), 410, 'INVITATION_USED');
      assertError(await anonymous.get(`/api/invitations/${token}`), 410, 'INVITATION_USED');
      assert.deepEqual((await admin.api.get('/api/admin/invitations')).body.data, []);
      assertError(await admin.api.post('/api/admin/invitations', { email: 'colleague@example.com' }), 409, 'EMAIL_TAKEN');
    });

    it('a new invitation replaces the unused one; withdrawn, unknown and expired links are refused', async (t) => {
      const { database, admin, anonymous } = await setUp(t);
      const first = tokenOf((await invite(admin, 'late@example.com')).invitationLink);
      const second = await invite(admin, 'late@example.com');
      assertError(await anonymous.get(`/api/invitations/${first}`), 404, 'INVITATION_NOT_FOUND');
      assertError(await anonymous.get(`/api/invitations/${'A'.repeat(43)}`), 404, 'INVITATION_NOT_FOUND');
      await database.db.updateTable('invitations').set({ expires_at: '2020-01-01T00:00:00.000Z' }).execute();
      const expired = tokenOf(second.invitationLink);
      assertError(await anonymous.get(`/api/invitations/${expired}`), 410, 'INVITATION_EXPIRED');
      assertError(
        await anonymous.post(`/api/invitations/${expired}/accept`, { name: 'Late', password: PASSWORD }),
        410,
        'INVITATION_EXPIRED',
      );
      const withdrawn = await invite(admin, 'withdrawn@example.com');
      assert.equal((await admin.api.delete(`/api/admin/invitations/${withdrawn.id}`)).status, 200);
      assertError(await anonymous.get(`/api/invitations/${tokenOf(withdrawn.invitationLink)}`), 404, 'INVITATION_NOT_FOUND');
      assertError(await admin.api.delete(`/api/admin/invitations/${withdrawn.id}`), 404, 'INVITATION_NOT_FOUND');
    });

    it('disabling stops every token at once and refuses sign-in; enabling lets the password in again', async (t) => {
      const { app, admin, member, anonymous } = await setUp(t);
      const personal = await member.api.post('/api/auth/tokens', { name: 'script' });
      assert.equal(personal.status, 201, JSON.stringify(personal.body));
      const scriptToken: string = personal.body.data.token;
      const basic = `Basic ${Buffer.from(`${member.email}:${scriptToken}`).toString('base64')}`;
      const propfind = () => app.inject({ method: 'PROPFIND', url: '/dav/', headers: { authorization: basic, depth: '0' } });
      assert.equal((await propfind()).statusCode, 207);
      const disabled = await admin.api.patch(`/api/admin/users/${member.id}`, { disabled: true });
      assert.deepEqual([disabled.status, disabled.body.data.disabled], [200, true]);
      assertError(await member.api.get('/api/auth/me'), 401, 'UNAUTHENTICATED');
      assertError(await client(app, scriptToken).get('/api/auth/me'), 401, 'UNAUTHENTICATED');
      assert.equal((await propfind()).statusCode, 401);
      assertError(await anonymous.post('/api/auth/login', { email: member.email, password: PASSWORD }), 403, 'ACCOUNT_DISABLED');
      assertError(await anonymous.post('/api/auth/login', { email: member.email, password: 'wrong password' }), 401, 'INVALID_CREDENTIALS');
      assertError(await admin.api.patch(`/api/admin/users/${admin.id}`, { disabled: true }), 409, 'OWN_ACCOUNT');
      const enabled = await admin.api.patch(`/api/admin/users/${member.id}`, { disabled: false, quotaBytes: 1234 });
      assert.deepEqual([enabled.body.data.disabled, enabled.body.data.quotaBytes, enabled.body.data.customQuota], [false, 1234, true]);
      const back = await anonymous.post('/api/auth/login', { email: member.email, password: PASSWORD });
      assert.equal(back.status, 200);
      assert.equal(back.body.data.user.quotaBytes, 1234);
      assertError(await client(app, scriptToken).get('/api/auth/me'), 401, 'UNAUTHENTICATED', 'the tokens stay deleted');
      assertError(await admin.api.patch('/api/admin/users/usr_0000000000000000000000000z', { disabled: true }), 404, 'USER_NOT_FOUND');
      assertError(await admin.api.patch(`/api/admin/users/${member.id}`, {}), 400);
    });

    it('a password reset link sets a new password once and signs out the other sessions', async (t) => {
      const { admin, member, anonymous } = await setUp(t);
      const reset = await admin.api.post(`/api/admin/users/${member.id}/password-reset`);
      assert.equal(reset.status, 201, JSON.stringify(reset.body));
      const token = tokenOf(reset.body.data.invitationLink);
      assert.deepEqual((await anonymous.get(`/api/invitations/${token}`)).body.data.purpose, 'reset');
      const accepted = await anonymous.post(`/api/invitations/${token}/accept`, { password: 'a brand new password' });
      assert.equal(accepted.status, 201, JSON.stringify(accepted.body));
      assert.equal(accepted.body.data.user.id, member.id);
      assertError(await member.api.get('/api/auth/me'), 401, 'UNAUTHENTICATED', 'the old session is signed out');
      assertError(await anonymous.post('/api/auth/login', { email: member.email, password: PASSWORD }), 401, 'INVALID_CREDENTIALS');
      assert.equal((await anonymous.post('/api/auth/login', { email: member.email, password: 'a brand new password' })).status, 200);
      assertError(await anonymous.post(`/api/invitations/${token}/accept`, { password: 'yet another one' }), 410, 'INVITATION_USED');
    });
  });
}
