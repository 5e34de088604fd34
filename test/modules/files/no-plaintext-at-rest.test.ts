import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DIALECTS, build, signUp } from '../../helper.js';
import { putFile, rootFolderId } from '../../support/files.js';
import { listFiles } from '../../support/disk.js';

function assertNoFileContains(files: string[], dataDir: string, needle: Buffer): void {
  for (const file of files) {
    assert.equal(fs.readFileSync(file).indexOf(needle), -1, `${path.relative(dataDir, file)} contains the plaintext`);
  }
}

for (const dialect of DIALECTS) {
  describe(`no plaintext at rest [${dialect}]`, () => {
    it('no file under the data folder contains the content of an uploaded file', async (t) => {
      const { app, config } = await build(t, dialect);
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const marker = `COFFRE-MARKER-${randomBytes(12).toString('hex')}`;
      // The marker repeated across several segments, at segment edges too.
      const content = Buffer.from(`${marker}\n`.repeat(20_000));
      const uploaded = await putFile(app, user, root, 'notes.txt', content);
      const download = await app.inject({
        method: 'GET',
        url: `/api/files/download/${uploaded.id}`,
        headers: { authorization: `Bearer ${user.token}` },
      });
      assert.ok(download.rawPayload.equals(content), 'the content itself round-trips');

      const needle = Buffer.from(marker);
      const files = listFiles(config.dataDir);
      assert.ok(
        files.some((f) => f.includes(`${path.sep}blobs${path.sep}`)),
        'the blob is under the data folder',
      );
      assertNoFileContains(files, config.dataDir, needle);
    });

    it('a small file kept in the database is ciphertext there too', async (t) => {
      const { app, config, database } = await build(t, dialect);
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const marker = `COFFRE-SMALL-MARKER-${randomBytes(12).toString('hex')}`;
      const content = Buffer.from(`${marker}\n`.repeat(50));
      await putFile(app, user, root, 'small.txt', content);
      const needle = Buffer.from(marker);
      const rows = await database.db.selectFrom('blobs').select('content').execute();
      assert.equal(rows.length, 1);
      assert.ok(rows[0].content && rows[0].content.length > content.length, 'the file is kept in its blob row');
      assert.equal(rows[0].content.indexOf(needle), -1, 'the row holds the plaintext');
      // On SQLite the database (and its write-ahead log) are files of the data folder.
      assertNoFileContains(listFiles(config.dataDir), config.dataDir, needle);
    });
  });
}
