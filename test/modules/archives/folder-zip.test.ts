// Zip archives of folders and selections (issue 33): owners and grantees, ranges, refusals; every
// archive checked by unzip -t, 7z t and zipdetails and extracted back.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { crc32 } from 'node:zlib';
import { DIALECTS, build, signUp, type TestUser } from '../../helper.js';
import { tempDir } from '../../support/disk.js';
import { assertError } from '../../support/errors.js';
import { putFile, rootFolderId, unknownId } from '../../support/files.js';
import { listen } from '../../support/raw-http.js';
import { assertStatus, mkdir } from '../../support/folders.js';
import { checkZipWithTools, unzipInto } from '../../support/zip-tools.js';
import type { FastifyInstance } from 'fastify';
import { WHOLE_READ_LIMIT } from '../../../src/content/index.js';

const TOOLS = { timeout: 300_000 };

async function getZip(app: FastifyInstance, user: TestUser, url: string, headers: Record<string, string> = {}) {
  return app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${user.token}`, ...headers } });
}

async function postZip(app: FastifyInstance, user: TestUser, body: object) {
  return app.inject({ method: 'POST', url: '/api/files/download-zip', headers: { authorization: `Bearer ${user.token}` }, payload: body });
}

/** Writes an archive, has the tools check it, extracts it and returns the extraction's folder. */
async function checkedExtraction(t: TestContext, bytes: Buffer, name = 'archive.zip'): Promise<string | null> {
  const dir = tempDir(t, 'coffre-zip-route-');
  const file = path.join(dir, name);
  fs.writeFileSync(file, bytes);
  await checkZipWithTools(t, file);
  const out = path.join(dir, 'out');
  return (await unzipInto(t, file, out)) ? out : null;
}

/** Every path under `dir`, folders ending with `/`, sorted. */
function tree(dir: string, prefix = ''): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? [`${prefix}${e.name}/`, ...tree(path.join(dir, e.name), `${prefix}${e.name}/`)] : [`${prefix}${e.name}`],
    )
    .sort();
}

/** The names of an archive's entries in its central directory's order (an archive without zip64 records). */
function entryNames(zip: Buffer): string[] {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const names: string[] = [];
  for (let at = zip.readUInt32LE(end + 16), i = 0; i < zip.readUInt16LE(end + 10); i++) {
    const nameLength = zip.readUInt16LE(at + 28);
    names.push(zip.toString('utf8', at + 46, at + 46 + nameLength));
    at += 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return names;
}

for (const dialect of DIALECTS) {
  describe(`folder and selection zips [${dialect}]`, () => {
    it('a folder: its live subtree under its name, empty folders kept, no trash, the current versions', TOOLS, async (t) => {
      const { app } = await build(t, dialect);
      const owner = await signUp(app);
      const trip = await mkdir(owner, 'Trip été');
      const photos = await mkdir(owner, 'Photos', trip);
      await mkdir(owner, 'Empty', trip);
      const big = randomBytes(300_000);
      await putFile(app, owner, photos, 'big.bin', big);
      await putFile(app, owner, trip, 'notes.txt', 'old notes');
      await putFile(app, owner, trip, 'notes.txt', 'new notes');
      await putFile(app, owner, trip, 'zéro.txt', '');
      const trashed = await putFile(app, owner, trip, 'trashed.txt', 'gone');
      assertStatus(await owner.api.delete(`/api/files/delete/${trashed.id}?trash=soft`), 200);
      const trashedFolder = await mkdir(owner, 'Old', trip);
      assertStatus(await owner.api.delete(`/api/folders/delete/${trashedFolder}`), 200);

      const res = await getZip(app, owner, `/api/folders/download/${trip}`);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['content-type'], 'application/zip');
      assert.equal(Number(res.headers['content-length']), res.rawPayload.length, 'Content-Length is the archive length');
      assert.match(String(res.headers['content-disposition']), /^attachment; .*filename\*=UTF-8''Trip%20%C3%A9t%C3%A9\.zip$/);
      assert.equal(res.headers['accept-ranges'], 'bytes');
      const out = await checkedExtraction(t, res.rawPayload);
      if (!out) return;
      assert.deepEqual(tree(out), [
        'Trip été/',
        'Trip été/Empty/',
        'Trip été/Photos/',
        'Trip été/Photos/big.bin',
        'Trip été/notes.txt',
        'Trip été/zéro.txt',
      ]);
      assert.ok(fs.readFileSync(path.join(out, 'Trip été/Photos/big.bin')).equals(big));
      assert.equal(fs.readFileSync(path.join(out, 'Trip été/notes.txt'), 'utf8'), 'new notes');
      assert.deepEqual(
        entryNames(res.rawPayload),
        ['Trip été/', 'Trip été/notes.txt', 'Trip été/zéro.txt', 'Trip été/Empty/', 'Trip été/Photos/', 'Trip été/Photos/big.bin'],
        'each folder, then its files by name, then its subfolders by name',
      );
    });

    it('a version stored before CRC-32s were recorded gets its CRC computed once, and recorded', TOOLS, async (t) => {
      const { app, database } = await build(t, dialect);
      const owner = await signUp(app);
      const folder = await mkdir(owner, 'Legacy');
      const content = randomBytes(150_000);
      const file = await putFile(app, owner, folder, 'old.bin', content);
      const crcOf = async () =>
        (await database.db.selectFrom('file_versions').select('crc32').where('file_id', '=', file.id).executeTakeFirstOrThrow()).crc32;
      assert.equal(Number(await crcOf()), crc32(content), 'an upload records its CRC-32');
      await database.db.updateTable('file_versions').set({ crc32: null }).where('file_id', '=', file.id).execute();
      const res = await getZip(app, owner, `/api/folders/download/${folder}`);
      assert.equal(res.statusCode, 200);
      const out = await checkedExtraction(t, res.rawPayload);
      if (out) assert.ok(fs.readFileSync(path.join(out, 'Legacy/old.bin')).equals(content));
      assert.equal(Number(await crcOf()), crc32(content), 'the computed CRC-32 is recorded');
    });

    it('a range resumes the download with the same bytes; If-Range with another tag gets the whole', TOOLS, async (t) => {
      const { app } = await build(t, dialect);
      const owner = await signUp(app);
      const folder = await mkdir(owner, 'Resume');
      for (let i = 0; i < 5; i++) await putFile(app, owner, folder, `part ${i}.bin`, randomBytes(70_000 + i));
      const whole = await getZip(app, owner, `/api/folders/download/${folder}`);
      assert.equal(whole.statusCode, 200);
      const etag = String(whole.headers.etag);
      const cut = 123_457;
      const rest = await getZip(app, owner, `/api/folders/download/${folder}`, { range: `bytes=${cut}-`, 'if-range': etag });
      assert.equal(rest.statusCode, 206);
      assert.equal(rest.headers['content-range'], `bytes ${cut}-${whole.rawPayload.length - 1}/${whole.rawPayload.length}`);
      const resumed = Buffer.concat([whole.rawPayload.subarray(0, cut), rest.rawPayload]);
      assert.ok(resumed.equals(whole.rawPayload), 'the resumed download is byte-identical to the whole');
      await checkedExtraction(t, resumed, 'resumed.zip');
      const again = await getZip(app, owner, `/api/folders/download/${folder}`);
      assert.equal(again.headers.etag, etag, 'an unchanged folder keeps its tag');
      await putFile(app, owner, folder, 'new.txt', 'added');
      const changed = await getZip(app, owner, `/api/folders/download/${folder}`, { range: `bytes=${cut}-`, 'if-range': etag });
      assert.equal(changed.statusCode, 200, 'a changed folder answers whole to a stale If-Range');
      assert.notEqual(changed.headers.etag, etag);
    });

    it('a selection of one folder: the chosen files and folders at the top, named after the folder', TOOLS, async (t) => {
      const { app } = await build(t, dialect);
      const owner = await signUp(app);
      const base = await mkdir(owner, 'Base');
      const a = await putFile(app, owner, base, 'a.txt', 'A');
      await putFile(app, owner, base, 'left out.txt', 'B');
      const sub = await mkdir(owner, 'Sub', base);
      await putFile(app, owner, sub, 'inside.txt', 'C');
      const res = await postZip(app, owner, { fileIds: [a.id, a.id], folderIds: [sub] });
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(res.headers['content-disposition']), /filename\*=UTF-8''Base\.zip$/);
      const out = await checkedExtraction(t, res.rawPayload);
      if (out) assert.deepEqual(tree(out), ['Sub/', 'Sub/inside.txt', 'a.txt']);
    });

    it("refuses empty, oversized, scattered, unknown, trashed and others' selections, naming the limit", async (t) => {
      const { app } = await build(t, dialect);
      const owner = await signUp(app);
      const stranger = await signUp(app);
      const one = await mkdir(owner, 'One');
      const two = await mkdir(owner, 'Two');
      const x = await putFile(app, owner, one, 'x.txt', 'x');
      const y = await putFile(app, owner, two, 'y.txt', 'y');
      const theirs = await putFile(app, stranger, await rootFolderId(stranger), 'theirs.txt', 'no');
      const json = (res: Awaited<ReturnType<typeof postZip>>) => ({ status: res.statusCode, body: res.json(), headers: res.headers });
      assertError(json(await postZip(app, owner, {})), 400, 'EMPTY_SELECTION');
      assertError(json(await postZip(app, owner, { fileIds: [], folderIds: [] })), 400, 'EMPTY_SELECTION');
      const many = Array.from({ length: 1001 }, (_, i) => unknownId('fil').slice(0, -4) + String(i).padStart(4, '0'));
      const tooMany = json(await postZip(app, owner, { fileIds: many }));
      assertError(tooMany, 400, 'SELECTION_TOO_LARGE');
      assert.match(tooMany.body.message, /1000/, 'the limit is named');
      assertError(json(await postZip(app, owner, { fileIds: [x.id, y.id] })), 400, 'SELECTION_SPANS_FOLDERS');
      assertError(json(await postZip(app, owner, { fileIds: [x.id], folderIds: [two] })), 400, 'SELECTION_SPANS_FOLDERS');
      assertError(json(await postZip(app, owner, { fileIds: [x.id, theirs.id] })), 400, 'INVALID_SELECTION');
      assertError(json(await postZip(app, stranger, { fileIds: [x.id] })), 400, 'INVALID_SELECTION');
      assertError(json(await postZip(app, owner, { fileIds: [unknownId('fil')] })), 400, 'INVALID_SELECTION');
      assertError(json(await postZip(app, owner, { fileIds: ['nope'] })), 400, 'INVALID_ID');
      assertError(json(await postZip(app, owner, { folderIds: [await rootFolderId(owner)] })), 400, 'INVALID_SELECTION');
      assertStatus(await owner.api.delete(`/api/files/delete/${x.id}?trash=soft`), 200);
      assertError(json(await postZip(app, owner, { fileIds: [x.id] })), 400, 'INVALID_SELECTION');
      const strangerGet = await getZip(app, stranger, `/api/folders/download/${one}`);
      assertError({ status: strangerGet.statusCode, body: strangerGet.json() }, 404, 'FOLDER_NOT_FOUND');
    });

    it('a grantee gets only what they may download; nothing at all is 403', TOOLS, async (t) => {
      const { app } = await build(t, dialect);
      const owner = await signUp(app);
      const viewer = await signUp(app);
      const downloader = await signUp(app);
      const shared = await mkdir(owner, 'Shared');
      const open = await mkdir(owner, 'Open', shared);
      await putFile(app, owner, shared, 'secret.txt', 'view only');
      const granted = await putFile(app, owner, shared, 'granted.txt', 'granted');
      await putFile(app, owner, open, 'free.txt', 'free');
      assertStatus(
        await owner.api.post(`/api/folders/share-users/${shared}`, {
          users: [
            { userId: viewer.id, canView: true, canDownload: false },
            { userId: downloader.id, canDownload: true },
          ],
        }),
        201,
      );
      const refused = await getZip(app, viewer, `/api/folders/download/${shared}`);
      assertError({ status: refused.statusCode, body: refused.json() }, 403, 'DOWNLOAD_FORBIDDEN');
      assertStatus(await owner.api.put(`/api/files/shared/${granted.id}/${viewer.id}`, { canDownload: true }), 201);
      assertStatus(await owner.api.post(`/api/folders/share-users/${open}`, { users: [{ userId: viewer.id, canDownload: true }] }), 201);
      const viewed = await getZip(app, viewer, `/api/folders/download/${shared}`);
      assert.equal(viewed.statusCode, 200, viewed.body);
      const out = await checkedExtraction(t, viewed.rawPayload, 'viewer.zip');
      if (out)
        assert.deepEqual(
          tree(out),
          ['Shared/', 'Shared/Open/', 'Shared/Open/free.txt', 'Shared/granted.txt'],
          'the view-only file is left out',
        );
      const all = await getZip(app, downloader, `/api/folders/download/${shared}`);
      assert.equal(all.statusCode, 200);
      const full = await checkedExtraction(t, all.rawPayload, 'downloader.zip');
      if (full)
        assert.deepEqual(tree(full), ['Shared/', 'Shared/Open/', 'Shared/Open/free.txt', 'Shared/granted.txt', 'Shared/secret.txt']);
      const selected = await postZip(app, viewer, { fileIds: [granted.id] });
      assert.equal(selected.statusCode, 200, selected.body);
    });
  });
}

/** GET through a real socket, read slowly (a pause every few chunks), so the archive waits on its destination. */
function slowDownload(url: string, token: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: { authorization: `Bearer ${token}` } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          if (chunks.length % 4 === 0) {
            res.pause();
            setTimeout(() => res.resume(), 3);
          }
        });
        res.on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks)) : reject(new Error(`answered ${res.statusCode}`))));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

describe('folder zips through a socket', () => {
  it('entries read whole into buffers lent again once written out arrive intact to a slow reader', TOOLS, async (t) => {
    const { app } = await build(t, DIALECTS[0]);
    const owner = await signUp(app);
    const folder = await mkdir(owner, 'Many');
    const contents = new Map<string, Buffer>();
    // Over 64 KiB each (so each is lent a shared buffer), and more of them than are lent at once.
    for (let i = 0; i < 30; i++) {
      const content = randomBytes(70_000 + i * 9_000);
      contents.set(`f${i}.bin`, content);
      await putFile(app, owner, folder, `f${i}.bin`, content);
    }
    const port = await listen(app);
    const zip = await slowDownload(`http://127.0.0.1:${port}/api/folders/download/${folder}`, owner.token);
    const out = await checkedExtraction(t, zip);
    if (!out) return;
    for (const [name, content] of contents) assert.ok(fs.readFileSync(path.join(out, 'Many', name)).equals(content), name);
  });

  it('entries streamed in 1 MiB chunks, whose buffers are reused once written out, arrive intact to a slow reader', TOOLS, async (t) => {
    const { app } = await build(t, DIALECTS[0]);
    const owner = await signUp(app);
    const folder = await mkdir(owner, 'Large');
    // Past the size read whole (WHOLE_READ_LIMIT), so each streams through its decrypting stream.
    const contents = new Map([
      ['one.bin', randomBytes(WHOLE_READ_LIMIT + 3 * 1024 * 1024 + 17)],
      ['two.bin', randomBytes(WHOLE_READ_LIMIT + 5 * 1024 * 1024 + 5)],
    ]);
    for (const [name, content] of contents) await putFile(app, owner, folder, name, content);
    const port = await listen(app);
    const zip = await slowDownload(`http://127.0.0.1:${port}/api/folders/download/${folder}`, owner.token);
    const out = await checkedExtraction(t, zip);
    if (!out) return;
    for (const [name, content] of contents) assert.ok(fs.readFileSync(path.join(out, 'Large', name)).equals(content), name);
  });
});
