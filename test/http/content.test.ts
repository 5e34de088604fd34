// sendContent (src/http/content.ts): a HEAD of a download answers GET's status and headers without
// opening the content. Node discards a HEAD's body, so content handed to it would be read (and
// decrypted) to its end for nothing: a whole archive, a whole file.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LogEvent } from 'kysely';
import { DIALECTS, build, signUp } from '../helper.js';
import { putFile } from '../support/files.js';
import { mkdir } from '../support/folders.js';

/** A statement reading a small file's content, which is stored in the database (blobs.content). */
const readsInlineContent = (event: LogEvent) => /select\s+"content"\s+from\s+"blobs"/i.test(event.query.sql);

const SAME_HEADERS = ['content-length', 'content-type', 'etag', 'content-disposition', 'accept-ranges', 'cache-control', 'content-range'];

for (const dialect of DIALECTS) {
  describe(`HEAD of downloads [${dialect}]`, () => {
    it("answers GET's status and headers, whole or ranged, and reads no content", async (t) => {
      const statements: LogEvent[] = [];
      const { app } = await build(t, dialect, { onQuery: (event) => statements.push(event) });
      const owner = await signUp(app);
      const folder = await mkdir(owner, 'Head');
      const file = await putFile(app, owner, folder, 'small.txt', 'a small file, stored inline');
      await putFile(app, owner, folder, 'other.txt', 'another one');
      const auth = { authorization: `Bearer ${owner.token}` };

      for (const url of [`/api/files/download/${file.id}`, `/api/folders/download/${folder}`])
        for (const range of [undefined, 'bytes=2-']) {
          const headers = range ? { ...auth, range } : auth;
          statements.length = 0;
          const get = await app.inject({ method: 'GET', url, headers });
          assert.equal(get.statusCode, range ? 206 : 200, get.body);
          assert.ok(statements.some(readsInlineContent), `GET ${url} reads the content (the check below can fail)`);

          statements.length = 0;
          const head = await app.inject({ method: 'HEAD', url, headers });
          assert.equal(head.statusCode, get.statusCode, `HEAD ${url} ${range ?? ''}`);
          for (const name of SAME_HEADERS) assert.equal(head.headers[name], get.headers[name], `HEAD ${url} ${range ?? ''}: ${name}`);
          assert.equal(head.rawPayload.length, 0);
          assert.deepEqual(statements.filter(readsInlineContent), [], `HEAD ${url} reads no content`);
        }
    });
  });
}
