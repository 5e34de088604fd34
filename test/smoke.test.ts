import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, build, signUp } from './helper.js';

for (const dialect of DIALECTS) {
  describe(`smoke [${dialect}]`, () => {
    it('registers and reads me', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const me = await user.api.get('/api/auth/me');
      assert.equal(me.status, 200);
      assert.equal(me.body.data.email, user.email);
    });
  });
}
