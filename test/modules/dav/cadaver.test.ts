import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { DIALECTS } from '../../helper.js';
import { basicAuth, coffreDav, describeCadaver, propfindNames, requireTool, runCadaver } from '../../support/dav-clients.js';
import { tempDir } from '../../support/disk.js';
import { prng } from '../../support/prng.js';

// cadaver (Debian `cadaver`, the command-line WebDAV client on neon) in a scripted session against
// /dav/: every command succeeds as cadaver reports it, and the end state is checked by PROPFIND
// and GET. Names carry accents, CJK, an emoji and spaces.

const FOLDER = 'dossier été';
const SOURCE = 'été 日本.bin';
const MOVED = 'déplacé 😀.bin';
const COPY = 'copie.bin';

for (const dialect of DIALECTS) {
  describe(`cadaver against /dav/ (${dialect})`, () => {
    it('mkcol, put, get, move, copy, lock, discover, unlock and delete in a scripted session', { timeout: 90_000 }, async (t) => {
      const cadaver = requireTool(t, 'cadaver');
      if (!cadaver) return;
      const dav = await coffreDav(t, dialect);
      // An app password, as a desktop client would be given (the account's has spaces, which .netrc cannot hold).
      const created = await dav.owner.api.post('/api/auth/tokens', { name: 'cadaver' });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const target = { ...dav, pass: created.body.data.token as string };
      const cwd = tempDir(t, 'cadaver-files');
      const random = prng(7);
      const payload = Buffer.from(Array.from({ length: 300_000 }, () => Math.floor(random() * 256)));
      fs.writeFileSync(path.join(cwd, SOURCE), payload);
      const commands = [
        `mkcol "${FOLDER}"`,
        `cd "${FOLDER}"`,
        `put "${SOURCE}"`,
        `get "${SOURCE}" back.bin`,
        `move "${SOURCE}" "${MOVED}"`,
        `copy "${MOVED}" ${COPY}`,
        `get ${COPY} copy-back.bin`,
        `lock "${MOVED}"`,
        `discover "${MOVED}"`,
        `unlock "${MOVED}"`,
        `delete ${COPY}`,
        'mkcol sub',
        `copy "${MOVED}" "sub/${MOVED}"`,
        'ls',
      ];
      const session = await runCadaver(t, cadaver, target, commands, { cwd, timeoutMs: 60_000 });
      const failed = session.steps.filter((s) => !s.ok).map((s) => s.command);
      assert.deepEqual(failed, [], `cadaver ${target.url} on ${dialect}: these commands failed\n${describeCadaver(session)}`);
      assert.ok(!session.run.timedOut, describeCadaver(session));
      const discovered = session.steps.find((s) => s.command.startsWith('discover'))!.output;
      assert.match(discovered, /Scope: exclusive\s+Type: write/, 'discover shows the exclusive write lock taken');

      assert.ok(fs.readFileSync(path.join(cwd, 'back.bin')).equals(payload), 'get brings back the bytes put');
      assert.ok(fs.readFileSync(path.join(cwd, 'copy-back.bin')).equals(payload), 'the copy holds the same bytes');
      const folder = `${target.url}${encodeURIComponent(FOLDER)}/`;
      assert.deepEqual(await propfindNames(target, target.url), [`${FOLDER}/`], 'the bucket holds the new collection only');
      assert.deepEqual(await propfindNames(target, folder), [MOVED, 'sub/'], 'moved away, copied then deleted');
      assert.deepEqual(await propfindNames(target, `${folder}sub/`), [MOVED]);
      for (const url of [`${folder}${encodeURIComponent(MOVED)}`, `${folder}sub/${encodeURIComponent(MOVED)}`]) {
        const answer = await fetch(url, { headers: { authorization: basicAuth(target) }, signal: AbortSignal.timeout(30_000) });
        assert.equal(answer.status, 200, `GET ${url}`);
        assert.ok(Buffer.from(await answer.arrayBuffer()).equals(payload), `GET ${url}: the bytes put`);
      }
    });
  });
}
