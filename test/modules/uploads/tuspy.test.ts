import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { DIALECTS } from '../../helper.js';
import { tempDir } from '../../support/disk.js';
import { prng, prngBytes } from '../../support/prng.js';
import {
  TUS_PATH,
  assertUploadedFile,
  requirePythonModule,
  runTuspy,
  tusMetadata,
  tusTarget,
  unfinishedUploads,
} from '../../support/tus.js';

// tuspy (Debian `python3-tuspy`, the Python module `tusclient`) as a second tus client nobody here
// wrote: it uploads a file in several PATCHes through /api/uploads/, and a new uploader (in a new
// process) resumes an upload another one left half done. What the API then downloads is the source.

const KiB = 1024;
const MiB = 1024 * KiB;
// Accents, CJK and a dash: tuspy sends the name base64-encoded UTF-8 in Upload-Metadata.
const NAME = 'résumé – 日本語 tuspy.bin';

for (const dialect of DIALECTS) {
  describe(`tuspy against ${TUS_PATH} (${dialect})`, () => {
    it('uploads a 3 MiB file in 512 KiB PATCHes with upload(): the last names the file, whose bytes are the source', async (t) => {
      const python = requirePythonModule(t, 'tusclient', 'python3-tuspy');
      if (!python) return;
      const target = await tusTarget(t, dialect);
      const data = prngBytes(prng(dialect === 'sqlite' ? 3201 : 3202), 3 * MiB + 4321);
      const file = path.join(tempDir(t, 'tuspy-src'), 'source.bin');
      fs.writeFileSync(file, data);
      const chunkSize = 512 * KiB;

      const result = await runTuspy(t, python, {
        endpoint: target.endpoint,
        token: target.token,
        file,
        chunkSize,
        metadata: tusMetadata(target, NAME, 'application/x-tuspy-test'),
      });
      const trace = `tuspy printed ${JSON.stringify(result.patches)}`;
      assert.match(new URL(result.url).pathname, /^\/api\/uploads\/[^/]+$/, `the upload's URL is below the endpoint: ${result.url}`);
      assert.equal(result.startedAt, 0, 'a new upload starts at 0');
      assert.equal(result.offset, data.length, trace);
      assert.equal(result.patches.length, Math.ceil(data.length / chunkSize), `one PATCH a chunk: ${trace}`);
      assert.deepEqual(
        result.patches.map((p) => p.status),
        result.patches.map(() => 204),
        trace,
      );
      assert.deepEqual(
        result.patches.map((p) => p.offset),
        result.patches.map((_, i) => Math.min((i + 1) * chunkSize, data.length)),
        `each PATCH is taken whole: ${trace}`,
      );
      assert.deepEqual(
        result.patches.slice(0, -1).filter((p) => p.fileId),
        [],
        `only the PATCH that brings the last byte names a file: ${trace}`,
      );
      await assertUploadedFile(target, result.fileId ?? undefined, { name: NAME, data, contentType: 'application/x-tuspy-test' });
      assert.deepEqual(await unfinishedUploads(target), [], 'a finished upload is no longer listed as unfinished');
    });

    it('a new uploader given the URL resumes where another stopped after three chunks, with sha1 Upload-Checksum', async (t) => {
      const python = requirePythonModule(t, 'tusclient', 'python3-tuspy');
      if (!python) return;
      const target = await tusTarget(t, dialect);
      const data = prngBytes(prng(dialect === 'sqlite' ? 3203 : 3204), 2 * MiB + 777);
      const file = path.join(tempDir(t, 'tuspy-src'), 'resumed.bin');
      fs.writeFileSync(file, data);
      const chunkSize = 256 * KiB;
      const common = { endpoint: target.endpoint, token: target.token, file, chunkSize, checksum: true };

      const first = await runTuspy(t, python, { ...common, metadata: tusMetadata(target, 'resumed.bin'), chunks: 3 });
      assert.equal(first.offset, 3 * chunkSize, `three chunks taken: ${JSON.stringify(first.patches)}`);
      assert.deepEqual(
        first.patches.map((p) => [p.status, p.fileId]),
        [
          [204, null],
          [204, null],
          [204, null],
        ],
        'no file before the last byte',
      );
      const listed = await unfinishedUploads(target);
      const id = first.url.slice(first.url.lastIndexOf('/') + 1);
      assert.deepEqual(
        listed.map(({ id, folderId, name, length, offset }) => ({ id, folderId, name, length, offset })),
        [{ id, folderId: target.folderId, name: 'resumed.bin', length: data.length, offset: 3 * chunkSize }],
        'the half-done upload is listed with its offset',
      );

      // A new process: tuspy's uploader asks the offset with HEAD, then PATCHes the rest.
      const second = await runTuspy(t, python, { ...common, url: first.url });
      assert.equal(second.url, first.url);
      assert.equal(second.startedAt, 3 * chunkSize, 'HEAD told the second uploader where the first stopped');
      assert.equal(second.offset, data.length);
      assert.equal(second.patches.length, Math.ceil((data.length - 3 * chunkSize) / chunkSize), JSON.stringify(second.patches));
      assert.ok(
        second.patches.every((p) => p.status === 204),
        `every PATCH (with its sha1) is taken: ${JSON.stringify(second.patches)}`,
      );
      await assertUploadedFile(target, second.fileId ?? undefined, { name: 'resumed.bin', data });
      assert.deepEqual(await unfinishedUploads(target), [], 'the resumed upload is finished');
    });
  });
}
