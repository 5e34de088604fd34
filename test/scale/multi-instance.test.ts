import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { DIALECTS, PG_URL, newSchemaName } from '../helper.js';
import { http, sharedEnvironment, startInstance, type Instance } from '../support/instances.js';
import { startTestS3, type TestS3 } from '../support/s3.js';
import { eventually } from '../support/wait.js';
import { MIGRATION_NAMES } from '../../src/db/migrate.js';

/**
 * Scale-out (issue 8): three real server processes on their own ports and data folders, over one
 * PostgreSQL schema and one S3 bucket (s3rver), with one master key. Nothing an instance keeps in
 * memory may change an answer another instance gives.
 */
const LOGIN_LIMIT = 5;
const inCi = /^(1|true)$/i.test(process.env.CI ?? '');

describe(
  'many instances over one PostgreSQL and one S3 bucket',
  { skip: !DIALECTS.includes('postgres') && !inCi ? 'needs PostgreSQL (mandatory with CI=true)' : false },
  () => {
    let s3: TestS3;
    let database: DatabaseHandle;
    let bucket: string;
    let instances: Instance[] = [];
    let instanceEnv: Record<string, string>;
    let token: string;
    let rootId: string;
    let userEmail: string;
    const pick = (i: number) => instances[i % instances.length];

    before(async () => {
      assert.ok(DIALECTS.includes('postgres'), 'CI=true: the multi-instance test needs PostgreSQL');
      s3 = await startTestS3();
      const location = await s3.newBucket();
      bucket = location.bucket;
      // An empty schema: the three instances start at once and bring it up to date themselves.
      database = await openDatabase({ url: PG_URL, pgSchema: newSchemaName(), poolSize: 2 });
      const env = {
        ...sharedEnvironment(s3, bucket, database),
        COFFRE_COLLECT_INTERVAL_SECONDS: '1',
        COFFRE_LOGIN_MAX_FAILURES_PER_ACCOUNT: String(LOGIN_LIMIT),
        LOG_LEVEL: 'info',
      };
      instanceEnv = env;
      instances = await Promise.all(['a', 'b', 'c'].map((name) => startInstance(name, env)));
      assert.equal(new Set(instances.map((i) => i.url)).size, 3);
      userEmail = `scale-${randomBytes(3).toString('hex')}@example.com`;
      const registered = await http(pick(0).url, 'POST', '/api/auth/register', {
        json: { email: userEmail, password: 'correct horse battery', name: 'Scale' },
      });
      assert.equal(registered.status, 201, JSON.stringify(registered.body));
      token = registered.body.data.accessToken;
      // A session made on one instance opens on the others.
      const roots = await http(pick(1).url, 'GET', '/api/folders/root/subfolders', { token });
      assert.equal(roots.status, 200);
      rootId = roots.body.data.parentFolder.id;
    });

    after(async () => {
      await Promise.all(instances.map((i) => i.stop()));
      await database?.close();
      await s3?.close();
    });

    async function upload(via: Instance, name: string, data: Buffer, folderId = rootId) {
      const res = await http(via.url, 'PUT', `/api/files/upload/${folderId}?name=${encodeURIComponent(name)}`, { token, body: data });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body.data;
    }

    it('three instances started at once on an empty schema migrate it once and are all ready on PostgreSQL and S3', async () => {
      const applied = await database.db
        .selectFrom('coffre_migrations' as any)
        .select('name')
        .execute();
      assert.deepEqual(applied.map((r: any) => r.name).sort(), [...MIGRATION_NAMES], 'every migration applied, each once');
      for (const instance of instances) {
        const ready = await http(instance.url, 'GET', '/readyz');
        assert.equal(ready.status, 200, `${instance.name}: ${JSON.stringify(ready.body)}`);
        assert.deepEqual(ready.body.data ?? ready.body, { status: 'ready', database: 'postgres', blobStore: 's3' });
      }
    });

    it('uploads through one instance and downloads through the others (multipart-sized too, and by range)', async () => {
      const small = randomBytes(100_000);
      const large = randomBytes(12 * 1024 * 1024 + 123);
      const a = await upload(pick(0), 'small.bin', small);
      const b = await upload(pick(0), 'large.bin', large);
      for (const via of [pick(1), pick(2)]) {
        const got = await http(via.url, 'GET', `/api/files/download/${a.id}`, { token });
        assert.equal(got.status, 200);
        assert.ok(got.raw.equals(small), `small file via ${via.name}`);
        const big = await http(via.url, 'GET', `/api/files/download/${b.id}`, { token });
        assert.equal(big.status, 200);
        assert.ok(big.raw.equals(large), `large file via ${via.name}`);
        const part = await http(via.url, 'GET', `/api/files/download/${b.id}`, { token, headers: { range: 'bytes=6000000-6000099' } });
        assert.equal(part.status, 206);
        assert.ok(part.raw.equals(large.subarray(6_000_000, 6_000_100)));
      }
      // The bytes are in the shared bucket, encrypted: the stored object does not hold the plaintext.
      const [blobId] = (await database.db.selectFrom('file_versions').select('blob_id').where('file_id', '=', a.id).execute()).map(
        (r) => r.blob_id,
      );
      const stored = Buffer.from(
        await (await s3.client.send(new GetObjectCommand({ Bucket: bucket, Key: blobId }))).Body!.transformToByteArray(),
      );
      assert.ok(stored.length > small.length);
      assert.equal(stored.indexOf(small.subarray(0, 64)), -1);
    });

    it('200 concurrent link downloads over all instances with maxAccess 10 give exactly 10 successes', async () => {
      const data = randomBytes(4096);
      const file = await upload(pick(1), 'popular.bin', data);
      const created = await http(pick(2).url, 'POST', `/api/files/share/${file.id}`, { token, json: { maxAccess: 10 } });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const [, hash, key] = /\/s\/([A-Za-z0-9_-]+)#([A-Za-z0-9_-]{43})$/.exec(created.body.data.shareLink)!;
      const answers = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          http(pick(i).url, 'POST', `/api/files/download/public/${hash}`, { json: { encryptionKey: key } }),
        ),
      );
      const ok = answers.filter((a) => a.status === 200);
      assert.equal(ok.length, 10, `statuses: ${JSON.stringify(countBy(answers.map((a) => a.status)))}`);
      for (const a of ok) assert.ok(a.raw.equals(data));
      for (const a of answers.filter((x) => x.status !== 200)) {
        assert.equal(a.status, 410);
        assert.equal(a.body.code, 'LINK_EXHAUSTED');
      }
      const info = await http(pick(0).url, 'POST', `/api/files/shared/${hash}`, { json: {} });
      assert.equal(info.status, 410);
    });

    it('wrong-password throttling holds across instances: links and sign-in', async () => {
      const file = await upload(pick(2), 'guarded.bin', randomBytes(1000));
      const created = await http(pick(0).url, 'POST', `/api/files/share/${file.id}`, { token, json: { password: 'the right one' } });
      assert.equal(created.status, 201);
      const hash = created.body.data.sharedHash;
      // Ten wrong guesses per address and window (links.service GUESS_LIMIT), spread over the three.
      const guesses: number[] = [];
      for (let i = 0; i < 10; i++)
        guesses.push((await http(pick(i).url, 'POST', `/api/files/shared/${hash}`, { json: { password: `wrong ${i}` } })).status);
      assert.deepEqual(guesses, Array(10).fill(403));
      for (const instance of instances) {
        const refused = await http(instance.url, 'POST', `/api/files/shared/${hash}`, { json: { password: 'the right one' } });
        assert.equal(refused.status, 429, `${instance.name} lets an 11th guess through`);
        assert.ok(Number(refused.headers.get('retry-after')) > 0);
      }

      const logins: number[] = [];
      for (let i = 0; i < LOGIN_LIMIT; i++)
        logins.push((await http(pick(i).url, 'POST', '/api/auth/login', { json: { email: userEmail, password: `not it ${i}` } })).status);
      assert.deepEqual(logins, Array(LOGIN_LIMIT).fill(401));
      for (const instance of instances) {
        const refused = await http(instance.url, 'POST', '/api/auth/login', {
          json: { email: userEmail, password: 'correct horse battery' },
        });
        assert.equal(refused.status, 429, `${instance.name} lets a login through past the limit`);
      }
    });

    it('a folder moved on one instance is seen moved on the others at once', async () => {
      const create = async (via: Instance, name: string) => {
        const res = await http(via.url, 'POST', `/api/folders/create/${await bucketId()}`, { token, json: { name, parentId: rootId } });
        assert.equal(res.status, 201, JSON.stringify(res.body));
        return res.body.data.id as string;
      };
      const moving = await create(pick(0), `moving-${randomBytes(2).toString('hex')}`);
      const target = await create(pick(1), `target-${randomBytes(2).toString('hex')}`);
      const sub = async (via: Instance, folderId: string) => {
        const res = await http(via.url, 'GET', `/api/folders/${folderId}/subfolders`, { token });
        assert.equal(res.status, 200);
        return (res.body.data.data as { id: string }[]).map((f: { id: string }) => f.id) as string[];
      };
      // Every instance has read both listings before the move (anything cached would now be stale).
      for (const via of instances) assert.ok((await sub(via, rootId)).includes(moving));
      const moved = await http(pick(2).url, 'POST', `/api/folders/move/${moving}`, { token, json: { targetParentId: target } });
      assert.equal(moved.status, 200, JSON.stringify(moved.body));
      for (const via of instances) {
        assert.ok((await sub(via, target)).includes(moving), `${via.name} does not see the folder in its new parent`);
        assert.ok(!(await sub(via, rootId)).includes(moving), `${via.name} still sees the folder in its old parent`);
        const detail = await http(via.url, 'GET', `/api/folders/details/${moving}`, { token });
        assert.equal(detail.body.data.parentId, target);
      }
    });

    it('the collectors of all instances delete each orphaned blob once, and never a referenced one', async () => {
      // Over 64 KiB, so that their bytes are objects of the bucket (smaller files are kept in the database).
      const kept = [await upload(pick(0), 'kept-1.bin', randomBytes(70_000)), await upload(pick(1), 'kept-2.bin', randomBytes(70_000))];
      const doomed = [];
      for (let i = 0; i < 9; i++) doomed.push(await upload(pick(i), `doomed-${i}.bin`, randomBytes(70_000 + i)));
      const blobOf = async (fileId: string) =>
        (await database.db.selectFrom('file_versions').select('blob_id').where('file_id', '=', fileId).execute()).map((r) => r.blob_id);
      const keptBlobs = (await Promise.all(kept.map((f) => blobOf(f.id)))).flat();
      const doomedBlobs = (await Promise.all(doomed.map((f) => blobOf(f.id)))).flat();
      assert.equal(doomedBlobs.length, 9);
      const collectedBefore = collectedSoFar();
      // Hard deletes, spread over the instances; the three collectors (every second) race for the blobs.
      await Promise.all(
        doomed.map((f, i) =>
          http(pick(i).url, 'DELETE', `/api/files/delete/${f.id}?trash=hard`, { token }).then((r) => assert.equal(r.status, 200)),
        ),
      );
      await eventually(async () => {
        const left = await database.db.selectFrom('blobs').select('id').where('id', 'in', doomedBlobs).execute();
        assert.equal(left.length, 0, `${left.length} orphaned blobs still not collected`);
      }, 20_000);
      const objects = new Set(await s3.listKeys(bucket));
      for (const id of doomedBlobs) assert.ok(!objects.has(id), `orphan ${id} still in the bucket`);
      for (const id of keptBlobs) assert.ok(objects.has(id), `referenced blob ${id} was deleted`);
      // Each instance logs how many blobs it deleted: together, exactly the orphans (none twice).
      assert.equal(
        collectedSoFar() - collectedBefore,
        doomedBlobs.length,
        `per instance: ${JSON.stringify(instances.map((i) => sumCollected(i)))}`,
      );
      for (const f of kept) assert.equal((await http(pick(2).url, 'GET', `/api/files/download/${f.id}`, { token })).status, 200);
    });

    it("an instance started without the deployment's master key refuses to start", async () => {
      // No COFFRE_MASTER_KEY: it would generate a key of its own into its data folder.
      const { COFFRE_MASTER_KEY: _key, ...withoutKey } = instanceEnv;
      await assert.rejects(startInstance('stray', withoutKey), (error: Error) => {
        assert.match(error.message, /exited with 2/);
        assert.match(error.message, /every instance needs the same COFFRE_MASTER_KEY/);
        return true;
      });
    });

    let cachedBucketId: string | undefined;
    async function bucketId(): Promise<string> {
      cachedBucketId ??= (await http(pick(0).url, 'GET', '/api/auth/me', { token })).body.data.defaultBucketId;
      return cachedBucketId!;
    }
    function sumCollected(instance: Instance): number {
      return instance.logs.filter((l) => l.msg === 'deleted unreferenced blobs').reduce((n, l) => n + Number(l.collected), 0);
    }
    function collectedSoFar(): number {
      return instances.reduce((n, i) => n + sumCollected(i), 0);
    }
  },
);

function countBy(values: number[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}
