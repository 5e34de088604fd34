import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { FsBlobStore } from '../../../src/blobs/fs/fs-blob-store.js';
import type { AppContext } from '../../../src/context.js';
import { unwrapKey } from '../../../src/crypto/key-wrap.js';
import type { Db } from '../../../src/db/database.js';
import { maintenanceRound } from '../../../src/jobs.js';
import { keyProofOf } from '../../../src/modules/links/links.key-proof.js';
import { PASS_WINDOW_MS, hashPassToken } from '../../../src/modules/links/links.passes.js';
import { DIALECTS, build, signUp } from '../../helper.js';
import { putFile, rootFolderId } from '../../support/files.js';
import { listen } from '../../support/raw-http.js';
import { eventually } from '../../support/wait.js';
import { openSealed } from '../../support/sealed.js';
import { assertError } from '../../support/errors.js';
import { publicPost, splitLink } from '../../support/links.js';

// Fair link counting (issue 29, item 7): an access is spent by a download that delivers its last
// byte; one the client breaks off gives it back; a resume pass continues the same version.

const BIG = 12 * 1024 * 1024;
const STREAMING = { timeout: 120_000 };

const proofOf = (key: string) => keyProofOf(Buffer.from(key, 'base64url'));

interface Cut {
  status: number;
  headers: http.IncomingHttpHeaders;
  received: Buffer;
}

/**
 * POSTs on a real socket and breaks the connection off once `bytes` of the body arrived, as a
 * dropped network does. Gives up (rejects) after 30 s; the socket is destroyed either way.
 */
function cutAfter(port: number, path: string, body: object, bytes: number, headers: Record<string, string> = {}): Promise<Cut> {
  const payload = JSON.stringify(body);
  return new Promise<Cut>((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1',
      port,
      path,
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers },
    });
    const timer = setTimeout(() => req.destroy(new Error('the cut did not happen within 30 s')), 30_000);
    const done = () => {
      clearTimeout(timer);
      req.destroy();
    };
    req.on('error', (error) => {
      done();
      reject(error);
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let got = 0;
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        got += chunk.length;
        if (got < bytes) return;
        done();
        resolve({ status: res.statusCode!, headers: res.headers, received: Buffer.concat(chunks) });
      });
      res.on('end', () => {
        done();
        reject(new Error(`the response (${res.statusCode}) ended after ${got} bytes, before the cut`));
      });
    });
    req.end(payload);
  });
}

/** A download started on a real socket that reads nothing: it stays in flight until `close`. */
function stalled(
  port: number,
  path: string,
  body: object,
  headers: Record<string, string>,
): Promise<{ status: number; close: () => void }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1',
      port,
      path,
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers },
    });
    const timer = setTimeout(() => req.destroy(new Error('no answer within 30 s')), 30_000);
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.on('response', (res) => {
      clearTimeout(timer);
      res.pause();
      resolve({ status: res.statusCode!, close: () => req.destroy() });
    });
    req.end(payload);
  });
}

async function accessCount(db: Db, hash: string): Promise<number> {
  const row = await db.selectFrom('share_links').select('access_count').where('shared_hash', '=', hash).executeTakeFirstOrThrow();
  return Number(row.access_count);
}

async function passRow(db: Db, token: string) {
  return db.selectFrom('link_passes').selectAll().where('token_hash', '=', hashPassToken(token)).executeTakeFirst();
}

/** Polls (bounded) until the link's count is `expected`. */
async function countBecomes(db: Db, hash: string, expected: number): Promise<void> {
  await eventually(async () => assert.equal(await accessCount(db, hash), expected), 20_000);
}

/** The plaintext of a sealed download's stored bytes, opened with the link key through its key chain. */
function openWithChain(key: string, headers: http.IncomingHttpHeaders | Record<string, unknown>, stored: Buffer): Buffer {
  const wraps = String(headers['x-coffre-key-chain']).split(',');
  const ids = String(headers['x-coffre-key-ids']).split(',');
  let k: Buffer = Buffer.from(key, 'base64url');
  for (let i = 0; i < wraps.length; i++) k = unwrapKey(k, wraps[i], ids[i]);
  return openSealed(k, stored);
}

for (const dialect of DIALECTS) {
  describe(`fair link counting [${dialect}]`, () => {
    async function passesFixture(t: TestContext, size = BIG) {
      const ctx = await build(t, dialect);
      const owner = await signUp(ctx.app, 'Owner');
      const root = await rootFolderId(owner);
      const data = randomBytes(size);
      const file = await putFile(ctx.app, owner, root, 'big.bin', data);
      const port = await listen(ctx.app);
      const share = async (settings: object) =>
        splitLink((await owner.api.post(`/api/files/share/${file.id}`, settings)).body.data.shareLink);
      return { ...ctx, db: ctx.database.db, owner, root, data, file, port, share };
    }

    it('a download cut at 25 % gives its access back; the next one is served and spends it', STREAMING, async (t) => {
      const { app, db, port, data, share } = await passesFixture(t);
      const { hash, key } = await share({ maxAccess: 1 });
      const dl = `/api/files/download/public/${hash}`;
      const cut = await cutAfter(port, dl, { encryptionKey: key }, BIG / 4);
      assert.equal(cut.status, 200);
      const pass = String(cut.headers['x-coffre-pass'] ?? '');
      assert.ok(pass.length > 20, 'a counted download carries a pass');
      assert.ok(Date.parse(String(cut.headers['x-coffre-pass-expires'])) > Date.now());
      await countBecomes(db, hash, 0);
      assert.equal((await passRow(db, pass))?.state, 'released');
      assert.ok(
        !JSON.stringify(await db.selectFrom('link_passes').selectAll().execute()).includes(pass),
        'only the hash of the pass is stored',
      );

      // Another visitor gets it whole, which spends the one access.
      const whole = await publicPost(app, dl, { encryptionKey: key }, { address: '10.0.0.2' });
      assert.equal(whole.status, 200);
      assert.ok(whole.raw.equals(data));
      assert.equal(await accessCount(db, hash), 1);
      assertError(await publicPost(app, dl, { encryptionKey: key }, { address: '10.0.0.3' }), 410, 'LINK_EXHAUSTED');
    });

    it('maxAccess 1 on the sealed route: broken once, then another visitor is served, then 410', STREAMING, async (t) => {
      const { app, db, port, data, share } = await passesFixture(t);
      const { hash, key } = await share({ maxAccess: 1 });
      const sealed = `/api/files/download/public/${hash}/sealed`;
      const cut = await cutAfter(port, sealed, { keyProof: proofOf(key) }, BIG / 4);
      assert.equal(cut.status, 200);
      await countBecomes(db, hash, 0);
      const other = await publicPost(app, sealed, { keyProof: proofOf(key) }, { address: '10.0.0.2' });
      assert.equal(other.status, 200);
      assert.ok(openWithChain(key, other.headers, other.raw).equals(data));
      assert.equal(await accessCount(db, hash), 1);
      assertError(await publicPost(app, sealed, { keyProof: proofOf(key) }, { address: '10.0.0.3' }), 410, 'LINK_EXHAUSTED');
    });

    it('three broken downloads then eight at once on maxAccess 3: exactly 3 served, 5 refused', STREAMING, async (t) => {
      const { app, db, port, data, share } = await passesFixture(t);
      const { hash, key } = await share({ maxAccess: 3 });
      const dl = `/api/files/download/public/${hash}`;
      for (let i = 0; i < 3; i++) assert.equal((await cutAfter(port, dl, { encryptionKey: key }, BIG / 4)).status, 200);
      await countBecomes(db, hash, 0);
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => publicPost(app, dl, { encryptionKey: key }, { address: `10.0.1.${i}` })),
      );
      const served = results.filter((r) => r.status === 200);
      assert.equal(served.length, 3);
      for (const r of served) assert.ok(r.raw.equals(data));
      const refused = results.filter((r) => r.status === 410);
      assert.equal(refused.length, 5);
      for (const r of refused) assert.equal(r.body.code, 'LINK_EXHAUSTED');
      assert.equal(await accessCount(db, hash), 3);
    });

    it('a pass resumes the same version with Range: exact bytes, one access in all, others refused', STREAMING, async (t) => {
      const { app, db, port, data, share } = await passesFixture(t);
      const { hash, key } = await share({ maxAccess: 1 });
      const sealed = `/api/files/download/public/${hash}/sealed`;
      const first = await cutAfter(port, sealed, { keyProof: proofOf(key) }, BIG / 4);
      const pass = String(first.headers['x-coffre-pass']);
      await countBecomes(db, hash, 0);

      // The rest of the stored bytes with the pass: re-reserved (it had been given back), then spent.
      const from = first.received.length;
      const rest = await publicPost(
        app,
        sealed,
        { keyProof: proofOf(key) },
        { headers: { 'x-coffre-pass': pass, range: `bytes=${from}-` } },
      );
      assert.equal(rest.status, 206);
      const storedSize = Number(String(rest.headers['content-range']).split('/')[1]);
      assert.equal(rest.headers['content-range'], `bytes ${from}-${storedSize - 1}/${storedSize}`);
      assert.equal(rest.raw.length, storedSize - from);
      assert.ok(openWithChain(key, rest.headers, Buffer.concat([first.received, rest.raw])).equals(data), 'the two parts make the file');
      assert.equal(rest.headers['x-coffre-pass'], pass, 'the same pass');
      assert.equal(await accessCount(db, hash), 1);
      // Settled when the response's last byte went out, which may land just after the client read it.
      await eventually(async () => assert.equal((await passRow(db, pass))?.state, 'spent'), 20_000);

      // Spent: the pass resumes for free on both routes; everyone else is refused.
      const again = await publicPost(
        app,
        sealed,
        { keyProof: proofOf(key) },
        { headers: { 'x-coffre-pass': pass, range: `bytes=${from}-` } },
      );
      assert.equal(again.status, 206);
      assert.ok(again.raw.equals(rest.raw));
      const plain = await publicPost(
        app,
        `/api/files/download/public/${hash}`,
        { encryptionKey: key },
        { headers: { 'x-coffre-pass': pass, range: 'bytes=1000-1999' } },
      );
      assert.equal(plain.status, 206);
      assert.ok(plain.raw.equals(data.subarray(1000, 2000)));
      assert.equal(await accessCount(db, hash), 1);
      assertError(await publicPost(app, sealed, { keyProof: proofOf(key) }, { address: '10.0.0.9' }), 410, 'LINK_EXHAUSTED');
      assertError(
        await publicPost(app, sealed, { keyProof: proofOf(key) }, { headers: { 'x-coffre-pass': randomBytes(24).toString('base64url') } }),
        410,
        'LINK_EXHAUSTED',
      );
      // The pass also gets its holder past the limit on the info route.
      assertError(await publicPost(app, `/api/files/shared/${hash}`, {}), 410, 'LINK_EXHAUSTED');
      assert.equal((await publicPost(app, `/api/files/shared/${hash}`, {}, { headers: { 'x-coffre-pass': pass } })).status, 200);
      // A range past the end is 416, and counts nothing.
      assertError(
        await publicPost(app, sealed, { keyProof: proofOf(key) }, { headers: { 'x-coffre-pass': pass, range: `bytes=${storedSize}-` } }),
        416,
        'RANGE_NOT_SATISFIABLE',
      );

      // Once its window is over, the pass opens nothing (the transfers above are all settled first).
      await eventually(async () => assert.equal(Number((await passRow(db, pass))?.in_flight), 0), 20_000);
      await db
        .updateTable('link_passes')
        .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
        .where('token_hash', '=', hashPassToken(pass))
        .execute();
      assertError(await publicPost(app, sealed, { keyProof: proofOf(key) }, { headers: { 'x-coffre-pass': pass } }), 410, 'LINK_EXHAUSTED');
      assert.equal(await accessCount(db, hash), 1);
    });

    it('parallel transfers on one pass share its access, given back only when the last one broke', STREAMING, async (t) => {
      const { db, port, share } = await passesFixture(t);
      const { hash, key } = await share({ maxAccess: 1 });
      const dl = `/api/files/download/public/${hash}`;
      const first = await cutAfter(port, dl, { encryptionKey: key }, 1024);
      const pass = String(first.headers['x-coffre-pass']);
      await countBecomes(db, hash, 0);
      const held: { close: () => void }[] = [];
      try {
        held.push(await stalled(port, dl, { encryptionKey: key }, { 'x-coffre-pass': pass, range: `bytes=0-${BIG / 2 - 1}` }));
        held.push(await stalled(port, dl, { encryptionKey: key }, { 'x-coffre-pass': pass, range: `bytes=${BIG / 2}-` }));
        await eventually(async () => assert.equal(Number((await passRow(db, pass))?.in_flight), 2), 20_000);
        assert.equal(await accessCount(db, hash), 1, 'two ranges, one access');
        held[0].close();
        await eventually(async () => assert.equal(Number((await passRow(db, pass))?.in_flight), 1), 20_000);
        assert.equal(await accessCount(db, hash), 1, 'still held by the other range');
        held[1].close();
        await countBecomes(db, hash, 0);
        assert.equal((await passRow(db, pass))?.state, 'released');
      } finally {
        for (const h of held) h.close();
      }
    });

    it('a new version is not covered by a pass of the old one', STREAMING, async (t) => {
      const { app, db, owner, root, share } = await passesFixture(t, 100_000);
      const { hash, key } = await share({ maxAccess: 1 });
      const dl = `/api/files/download/public/${hash}`;
      const got = await publicPost(app, dl, { encryptionKey: key });
      assert.equal(got.status, 200);
      const pass = String(got.headers['x-coffre-pass']);
      assert.equal((await publicPost(app, `/api/files/shared/${hash}`, {}, { headers: { 'x-coffre-pass': pass } })).status, 200);
      await putFile(app, owner, root, 'big.bin', Buffer.from('a second version'));
      assertError(await publicPost(app, dl, { encryptionKey: key }, { headers: { 'x-coffre-pass': pass } }), 410, 'LINK_EXHAUSTED');
      assertError(
        await publicPost(app, `${dl}/sealed`, { keyProof: proofOf(key) }, { headers: { 'x-coffre-pass': pass } }),
        410,
        'LINK_EXHAUSTED',
      );
      assertError(await publicPost(app, `/api/files/shared/${hash}`, {}, { headers: { 'x-coffre-pass': pass } }), 410, 'LINK_EXHAUSTED');
      assert.equal(await accessCount(db, hash), 1);
    });

    it('a pass replaces neither the key nor the password', STREAMING, async (t) => {
      const { app, db, share } = await passesFixture(t, 100_000);
      const { hash, key } = await share({ maxAccess: 1, password: 'open sesame' });
      const dl = `/api/files/download/public/${hash}`;
      const got = await publicPost(app, dl, { encryptionKey: key, password: 'open sesame' });
      assert.equal(got.status, 200);
      const headers = { 'x-coffre-pass': String(got.headers['x-coffre-pass']) };
      assert.ok(headers['x-coffre-pass'].length > 20);
      assertError(await publicPost(app, dl, { encryptionKey: key }, { headers }), 401, 'PASSWORD_REQUIRED');
      assertError(
        await publicPost(app, dl, { encryptionKey: randomBytes(32).toString('base64url'), password: 'open sesame' }, { headers }),
        403,
        'INVALID_ENCRYPTION_KEY',
      );
      assertError(await publicPost(app, dl, { password: 'open sesame' }, { headers }), 403, 'INVALID_ENCRYPTION_KEY');
      assertError(await publicPost(app, `${dl}/sealed`, { password: 'open sesame' }, { headers }), 403, 'INVALID_ENCRYPTION_KEY');
      assertError(
        await publicPost(
          app,
          `${dl}/sealed`,
          { password: 'open sesame', keyProof: proofOf(randomBytes(32).toString('base64url')) },
          { headers },
        ),
        403,
        'INVALID_ENCRYPTION_KEY',
      );
      // With both, the pass resumes.
      assert.equal((await publicPost(app, dl, { encryptionKey: key, password: 'open sesame' }, { headers })).status, 200);
      assert.equal(await accessCount(db, hash), 1);
    });

    it('a missing or wrong key proof is refused before anything is counted, and throttled', STREAMING, async (t) => {
      const { app, db, owner, share } = await passesFixture(t, 100_000);
      const { hash, key } = await share({ maxAccess: 5 });
      const sealed = `/api/files/download/public/${hash}/sealed`;
      assertError(await publicPost(app, sealed, {}), 403, 'INVALID_ENCRYPTION_KEY');
      for (let i = 0; i < 9; i++)
        assertError(
          await publicPost(app, sealed, { keyProof: proofOf(randomBytes(32).toString('base64url')) }),
          403,
          'INVALID_ENCRYPTION_KEY',
        );
      assert.equal(await accessCount(db, hash), 0);
      assertError(await publicPost(app, sealed, { keyProof: proofOf(key) }), 429, 'RATE_LIMITED');
      assert.equal((await publicPost(app, sealed, { keyProof: proofOf(key) }, { address: '10.0.0.2' })).status, 200);
      assert.equal(await accessCount(db, hash), 1);
      // Only a hash of the proof is stored.
      const row = await db.selectFrom('share_links').select('key_check').where('shared_hash', '=', hash).executeTakeFirstOrThrow();
      assert.match(String(row.key_check), /^[0-9a-f]{64}$/);
      assert.notEqual(row.key_check, proofOf(key));

      // A folder open checks a key or proof it is sent before counting.
      const folder = (await owner.api.post(`/api/folders/create/${owner.defaultBucketId}`, { name: 'Shared' })).body.data.id;
      const folderLink = splitLink((await owner.api.post(`/api/folders/share/${folder}`, { maxAccess: 5 })).body.data.shareLink);
      const open = `/api/folders/shared/${folderLink.hash}`;
      assertError(await publicPost(app, open, { keyProof: proofOf(key) }), 403, 'INVALID_ENCRYPTION_KEY');
      assertError(await publicPost(app, open, { encryptionKey: key }), 403, 'INVALID_ENCRYPTION_KEY');
      assert.equal(await accessCount(db, folderLink.hash), 0);
      assert.equal((await publicPost(app, open, { keyProof: proofOf(folderLink.key) })).status, 200);
      assert.equal((await publicPost(app, open, { encryptionKey: folderLink.key })).status, 200);
      assert.equal(await accessCount(db, folderLink.hash), 2);
    });

    it('the upkeep (deleteOldPasses) drops passes past their window, and held ones two days after their last start', async (t) => {
      const { db, share, config, database } = await passesFixture(t, 10);
      await share({});
      const link = await db.selectFrom('share_links').select('id').executeTakeFirstOrThrow();
      const now = Date.now();
      const at = (ms: number) => new Date(now + ms).toISOString();
      const rows = [
        { token_hash: 'spent-old', state: 'spent' as const, expires_at: at(-1000) },
        { token_hash: 'spent-live', state: 'spent' as const, expires_at: at(PASS_WINDOW_MS) },
        { token_hash: 'released-old', state: 'released' as const, expires_at: at(-1000) },
        { token_hash: 'held-recent', state: 'held' as const, expires_at: at(-60 * 60 * 1000) },
        { token_hash: 'held-dead', state: 'held' as const, expires_at: at(-3 * 24 * 60 * 60 * 1000) },
      ];
      await db
        .insertInto('link_passes')
        .values(
          rows.map((r) => ({ ...r, link_id: link.id, version_id: 'ver_x', in_flight: r.state === 'held' ? 1 : 0, created_at: at(-5000) })),
        )
        .execute();
      const blobDir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffre-passes-'));
      t.after(() => fs.rmSync(blobDir, { recursive: true, force: true }));
      await maintenanceRound({ config, database, db, blobs: new FsBlobStore(blobDir) } as unknown as AppContext);
      const left = (await db.selectFrom('link_passes').select('token_hash').orderBy('token_hash').execute()).map((r) => r.token_hash);
      assert.deepEqual(left, ['held-recent', 'spent-live']);
    });
  });
}
