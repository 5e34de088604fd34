import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { DIALECTS, build, signUp } from '../../helper.js';
import { findFolder } from '../../../src/modules/folders/folders.repository.js';
import { findFolderWithKeyChain, keyChain } from '../../../src/modules/folders/key-chain.repository.js';
import { putFile, rootFolderId } from '../../support/files.js';

// The raw upload's path through the database (upload-recorder.ts recordUpload) and its two ways of
// reading a body: whole when announced small, streamed otherwise (files.routes.ts rawBody).
for (const dialect of DIALECTS) {
  describe(`raw upload path [${dialect}]`, () => {
    // A small file's blob row is inserted with its bytes by the transaction (see migration 010);
    // a file in the blob store has its row written before its bytes, then marked ready.
    for (const [label, inlineBlobBytes, blobWrite, before] of [
      ['kept in the database', 64 * 1024, 'insert blob', 0],
      ['in the blob store', 0, 'mark blob', 1],
    ] as const) {
      it(`a new file ${label}: the owner row is the first tree row written in the transaction, no tree lock query, nothing read after commit`, async (t) => {
        let statements: string[] | null = null;
        const { app, database } = await build(t, dialect, {
          // No background jobs: a blob collection or a thumbnail round on its timer would add statements.
          config: { collectIntervalSeconds: 0, thumbnailIntervalSeconds: 0, inlineBlobBytes },
          onQuery: (event) => statements?.push(event.query.sql.replace(/\s+/g, ' ').trim()),
        });
        const user = await signUp(app);
        const root = await rootFolderId(user);
        await putFile(app, user, root, 'warm-up.bin', 'x');
        statements = [];
        await putFile(app, user, root, 'new.bin', randomBytes(4096));
        const all = statements;
        statements = null;

        const begin = all.findIndex((s) => /^begin/i.test(s));
        const commit = all.findIndex((s) => /^commit/i.test(s));
        assert.ok(begin >= 0 && commit > begin, all.join('\n'));
        const inside = all.slice(begin + 1, commit);
        const kindOf = (s: string) => {
          if (/^update blobs set state = 'ready'/.test(s)) return 'mark blob';
          if (/^insert into "blobs" \("id", "state", "ref_count", "stored_size", "content"/.test(s)) return 'insert blob';
          if (/^update users set used_bytes/.test(s)) return 'reserve quota';
          if (/^select \* from "folders" where "id"/.test(s)) return 'folder again';
          if (/^select files\.\*/.test(s)) return 'name lookup';
          if (/^insert into "files"/.test(s)) return 'insert file';
          if (/^insert into "file_versions"/.test(s)) return 'insert version';
          if (/^update folders set subtree_folders/.test(s)) return 'aggregates';
          return s;
        };
        // The writes go as one statement where the engine allows it (write-batch.ts): `with "w0" as (…), "w1" as (…) select 1`.
        const kinds = inside.flatMap((s) =>
          /^with "w0" as/.test(s)
            ? s
                .split(/"w\d+" as \( ?/)
                .slice(1)
                .map((part) => kindOf(part))
            : [kindOf(s)],
        );
        assert.deepEqual(kinds, ['reserve quota', 'folder again', 'name lookup', blobWrite, 'insert file', 'insert version', 'aggregates']);
        assert.equal(inside.length, database.capabilities.writesInOneStatement ? 4 : 7, inside.join('\n'));
        assert.equal(all.length, commit + 1, `statements after the commit: ${all.slice(commit + 1).join('\n')}`);
        assert.ok(!all.some((s) => /for no key update/.test(s)), 'the quota reservation is the owner lock');
        // Before the transaction: the blob row of a file in the store only. The token is kept in
        // memory once resolved where revocations are heard (tokens.cache.ts), and the folder with
        // its key since the warm-up upload into it (upload-targets.cache.ts).
        const tokenLookups = all.filter((s) => /from "tokens"/.test(s)).length;
        assert.ok(database.listen ? tokenLookups <= 1 : tokenLookups === 1, `${tokenLookups} token lookups`);
        assert.equal(all.filter((s) => /^insert into "blobs"/.test(s) && !/"content"/.test(s)).length, before, all.join('\n'));
        assert.equal(all.length - tokenLookups, before + 2 + inside.length, all.join('\n'));
        assert.equal(
          all.filter((s) => /with recursive chain/.test(s)).length,
          1,
          'the key chain is not read again; the aggregates walk the ancestors',
        );
      });
    }

    it('a folder kept from an earlier upload is checked again when the upload is recorded: trashed, it refuses; moved, the file follows it', async (t) => {
      const { app, database } = await build(t, dialect, { config: { collectIntervalSeconds: 0 } });
      const user = await signUp(app);
      const api = user.api;
      const folderIn = async (name: string, bucketId: string) =>
        (await api.post(`/api/folders/create/${bucketId}`, { name })).body.data.id as string;
      const trashed = await folderIn('Soon trashed', user.defaultBucketId);
      const moved = await folderIn('Soon moved', user.defaultBucketId);
      for (const folder of [trashed, moved]) await putFile(app, user, folder, 'first.bin', 'kept');

      assert.equal((await api.delete(`/api/folders/delete/${trashed}`)).status, 200);
      const refused = await app.inject({
        method: 'PUT',
        url: `/api/files/upload/${trashed}?name=second.bin`,
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/octet-stream' },
        payload: randomBytes(4096),
      });
      assert.ok(refused.statusCode >= 400 && refused.statusCode < 500, `answered ${refused.statusCode}`);
      const live = await database.db
        .selectFrom('files')
        .select('name')
        .where('folder_id', '=', trashed)
        .where('trash_batch', '=', '')
        .execute();
      assert.deepEqual(live, [], 'nothing recorded in the trashed folder');
      const blobs = await database.db.selectFrom('blobs').select(['state']).execute();
      assert.ok(blobs.every((b) => b.state === 'ready') && blobs.length === 2, 'the refused upload left no blob behind');

      const created = await api.post(`/api/bucket/create/${user.defaultDatahubId}`, { name: 'other' });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const otherBucket = created.body.data.id as string;
      const target = await rootFolderId(user, otherBucket);
      const move = await api.post(`/api/folders/move/${moved}`, { targetParentId: target });
      assert.equal(move.status, 200, JSON.stringify(move.body));
      const after = await putFile(app, user, moved, 'second.bin', randomBytes(4096));
      const row = await database.db.selectFrom('files').select(['bucket_id']).where('id', '=', after.id).executeTakeFirstOrThrow();
      assert.equal(row.bucket_id, otherBucket, 'the file is recorded in the bucket the folder is in now');
      assert.equal((await api.get(`/api/files/download/${after.id}`)).status, 200);
    });

    it('the folder read with its key chain is the folder row and the chain the key chain read alone', async (t) => {
      const { app, database } = await build(t, dialect);
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const parent = (await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name: 'Outer' })).body.data.id as string;
      const inner = (await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name: 'Inner', parentId: parent })).body.data
        .id as string;
      for (const id of [root, parent, inner]) {
        const found = await findFolderWithKeyChain(database.db, id);
        assert.deepEqual(found?.folder, await findFolder(database.db, id));
        assert.deepEqual(found?.chain, await keyChain(database.db, id));
      }
      assert.equal((await findFolderWithKeyChain(database.db, inner))?.chain.folders.length, 3);
      assert.equal(await findFolderWithKeyChain(database.db, 'fld_unknown'), undefined);
    });

    it('concurrent uploads of one owner are recorded in groups: new names together, repeated and taken names one by one, all exact', async (t) => {
      const inserts: string[] = [];
      const blobInserts: string[] = [];
      const { app, database } = await build(t, dialect, {
        // The uploading rows of files in the blob store (small files kept in the database have none).
        config: { collectIntervalSeconds: 0, inlineBlobBytes: 0 },
        onQuery: (event) => {
          // Alone, or one part of a statement of several writes (write-batch.ts).
          const at = event.query.sql.indexOf('insert into "files"');
          if (at >= 0) inserts.push(event.query.sql.slice(at).split('insert into "file_versions"')[0]);
          if (/^insert into "blobs"/.test(event.query.sql)) blobInserts.push(event.query.sql);
        },
      });
      const user = await signUp(app);
      const root = await rootFolderId(user);
      await putFile(app, user, root, 'taken.bin', 'old');
      blobInserts.length = 0;
      const upload = (name: string, onConflict: string, size: number) =>
        app.inject({
          method: 'PUT',
          url: `/api/files/upload/${root}?name=${name}&onConflict=${onConflict}`,
          headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/octet-stream' },
          payload: randomBytes(size),
        });
      const fresh = Array.from({ length: 12 }, (_, i) => upload(`n${i}.bin`, 'version', 100 + i));
      const repeated = Array.from({ length: 3 }, () => upload('again.bin', 'version', 1000));
      const results = await Promise.all([
        ...fresh,
        ...repeated,
        upload('taken.bin', 'fail', 10),
        upload('taken.bin', 'rename', 20),
        upload('taken.bin', 'version', 30),
      ]);
      assert.deepEqual(
        results.map((r) => r.statusCode),
        [...Array(15).fill(201), 409, 201, 201],
        results.map((r) => r.body).join('\n'),
      );
      // Some insert wrote several files at once (a group formed while the first upload was recorded).
      assert.ok(
        inserts.some((text) => (text.match(/\(\$?\d*\??(, \$?\d*\??)+\)/g) ?? []).length > 1),
        inserts.join('\n'),
      );
      // The uploading blob rows of uploads starting together went in with fewer inserts than uploads.
      const rowsOf = (text: string) => (text.match(/\(\$?\d*\??(, \$?\d*\??)+\)/g) ?? []).length;
      assert.ok(
        blobInserts.some((text) => rowsOf(text) > 1),
        blobInserts.join('\n'),
      );
      assert.ok(blobInserts.length < results.length, blobInserts.join('\n'));
      // One row per upload that stored bytes: all but the one refused (onConflict=fail) before storing.
      assert.equal(
        blobInserts.reduce((sum, text) => sum + rowsOf(text), 0),
        results.length - 1,
      );
      assert.equal(results[17].json().data.versionCount, 2);
      assert.notEqual(results[16].json().data.name, 'taken.bin');
      const files = await database.db.selectFrom('files').selectAll().where('owner_id', '=', user.id).execute();
      const again = files.filter((f) => f.name === 'again.bin');
      assert.equal(again.length, 1);
      assert.equal(Number(again[0].version_count), 3);
      const versionBytes = files.reduce((sum, f) => sum + Number(f.versions_bytes), 0);
      const owner = await database.db.selectFrom('users').select('used_bytes').where('id', '=', user.id).executeTakeFirstOrThrow();
      assert.equal(Number(owner.used_bytes), versionBytes);
      const folder = await database.db.selectFrom('folders').selectAll().where('id', '=', root).executeTakeFirstOrThrow();
      assert.equal(Number(folder.subtree_files), files.length);
      assert.equal(Number(folder.child_files), files.length);
      assert.equal(
        Number(folder.subtree_bytes),
        files.reduce((sum, f) => sum + Number(f.size), 0),
      );
      const blobs = await database.db.selectFrom('blobs').select(['state', 'ref_count', 'stored_size']).execute();
      assert.equal(
        blobs.length,
        files.reduce((sum, f) => sum + Number(f.version_count), 0),
      );
      assert.ok(
        blobs.every((b) => b.state === 'ready' && Number(b.ref_count) === 1 && Number(b.stored_size) > 0),
        JSON.stringify(blobs),
      );
    });

    it('a small body read whole and the same bytes streamed store the same content and checksum', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const data = randomBytes(70_000);
      const checksum = `sha256:${createHash('sha256').update(data).digest('hex')}`;
      const whole = await putFile(app, user, root, 'whole.bin', data.subarray(0, 4096));
      assert.equal(whole.checksum, `sha256:${createHash('sha256').update(data.subarray(0, 4096)).digest('hex')}`);
      // No Content-Length (a stream payload): the body is streamed whatever its size.
      const streamed = await app.inject({
        method: 'PUT',
        url: `/api/files/upload/${root}?name=streamed.bin`,
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/octet-stream' },
        payload: Readable.from([data.subarray(0, 30_000), data.subarray(30_000)]),
      });
      assert.equal(streamed.statusCode, 201, streamed.body);
      assert.equal(streamed.json().data.checksum, checksum);
      for (const [id, bytes] of [
        [whole.id, data.subarray(0, 4096)],
        [streamed.json().data.id, data],
      ] as const) {
        const res = await app.inject({
          method: 'GET',
          url: `/api/files/download/${id}`,
          headers: { authorization: `Bearer ${user.token}` },
        });
        assert.equal(res.statusCode, 200);
        assert.ok(res.rawPayload.equals(bytes));
      }
    });

    it('over a real socket, a streamed body (its chunks moved to the cipher thread uncopied) stores the exact content and checksum', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const root = await rootFolderId(user);
      await app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = app.server.address() as import('node:net').AddressInfo;
      const data = randomBytes(3 * 1024 * 1024 + 5);
      const put = (name: string, chunked: boolean) =>
        new Promise<{ status: number; body: any }>((resolve, reject) => {
          const headers: Record<string, string | number> = {
            authorization: `Bearer ${user.token}`,
            'content-type': 'application/octet-stream',
          };
          if (!chunked) headers['content-length'] = data.length;
          const req = http.request({ port, method: 'PUT', path: `/api/files/upload/${root}?name=${name}`, headers }, (res) => {
            const out: Buffer[] = [];
            res.on('data', (c) => out.push(c));
            res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(out).toString()) }));
          });
          req.on('error', reject);
          for (let at = 0, step = 1; at < data.length; at += step, step = (step * 7 + 4099) % 200_000)
            req.write(data.subarray(at, at + step));
          req.end();
        });
      const checksum = `sha256:${createHash('sha256').update(data).digest('hex')}`;
      for (const chunked of [false, true]) {
        const uploaded = await put(`socket-${chunked}.bin`, chunked);
        assert.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
        assert.equal(uploaded.body.data.checksum, checksum, `chunked: ${chunked}`);
        const res = await app.inject({
          method: 'GET',
          url: `/api/files/download/${uploaded.body.data.id}`,
          headers: { authorization: `Bearer ${user.token}` },
        });
        assert.equal(res.statusCode, 200);
        assert.ok(res.rawPayload.equals(data), `chunked: ${chunked}`);
      }
    });

    it('a small body over COFFRE_MAX_UPLOAD_BYTES is 413 and leaves no blob row', async (t) => {
      const { app, database } = await build(t, dialect, { config: { maxUploadBytes: 1000 } });
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const blobRows = async () => (await database.db.selectFrom('blobs').select('id').execute()).length;
      const before = await blobRows();
      const res = await app.inject({
        method: 'PUT',
        url: `/api/files/upload/${root}?name=over.bin`,
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/octet-stream' },
        payload: randomBytes(1001),
      });
      assert.equal(res.statusCode, 413, res.body);
      assert.equal(res.json().code, 'PAYLOAD_TOO_LARGE');
      assert.equal(await blobRows(), before);
      await putFile(app, user, root, 'fits.bin', randomBytes(1000));
    });
  });
}
