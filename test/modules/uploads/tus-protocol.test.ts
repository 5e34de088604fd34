// The tus 1.0.0 endpoint (issue 32, /api/uploads/) on the wire, through Fastify inject with raw
// bodies and explicit headers: discovery, creation (with and without a body, deferred length),
// PATCH in pieces, and every refusal of the contract, each leaving the upload resumable.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { DIALECTS, build, signUp, type TestUser } from '../../helper.js';
import { assertError } from '../../support/errors.js';
import { rootFolderId } from '../../support/files.js';

const TUS_VERSION = '1.0.0';
const SEGMENT = 64 * 1024;
const DAY_MS = 24 * 3600 * 1000;
const OFFSET_STREAM = 'application/offset+octet-stream';

interface Answer {
  status: number;
  body: any;
  headers: LightMyRequestResponse['headers'];
}

function answerOf(res: LightMyRequestResponse): Answer {
  const json = String(res.headers['content-type'] ?? '').includes('json') && res.body.length > 0;
  return { status: res.statusCode, body: json ? res.json() : res.body, headers: res.headers };
}

/** Upload-Metadata from pairs, each value in base64 (tus's format). */
function metadata(pairs: Record<string, string>): string {
  return Object.entries(pairs)
    .map(([key, value]) => `${key} ${Buffer.from(value).toString('base64')}`)
    .join(',');
}

/** Every tus answer names the protocol; an error is also the API's envelope with its code. */
function assertTus(res: Answer, status: number, code?: string, label = ''): void {
  if (code) assertError(res, status, code, label);
  else assert.equal(res.status, status, `${label} ${JSON.stringify(res.body)}`);
  assert.equal(res.headers['tus-resumable'], TUS_VERSION, `${label}: Tus-Resumable on the answer`);
}

/** A tus client of one user over inject: every request states Tus-Resumable unless told otherwise. */
function tusClient(app: FastifyInstance, user: TestUser) {
  const send = async (method: string, url: string, headers: Record<string, string | undefined>, payload?: Buffer) => {
    const all: Record<string, string> = { authorization: `Bearer ${user.token}`, 'tus-resumable': TUS_VERSION };
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined) delete all[name];
      else all[name] = value;
    }
    return answerOf(await app.inject({ method: method as any, url, headers: all, ...(payload ? { payload } : {}) }));
  };
  return {
    user,
    /** POST /api/uploads/ with Upload-Length (or deferred when `length` is undefined), and a first body if given. */
    create(meta: string, length: number | undefined, headers: Record<string, string | undefined> = {}, body?: Buffer) {
      const lengthHeader = length === undefined ? { 'upload-defer-length': '1' } : { 'upload-length': String(length) };
      const bodyHeaders = body ? { 'content-type': OFFSET_STREAM } : {};
      return send('POST', '/api/uploads/', { 'upload-metadata': meta, ...lengthHeader, ...bodyHeaders, ...headers }, body);
    },
    head: (url: string, headers: Record<string, string | undefined> = {}) => send('HEAD', url, headers),
    patch: (url: string, offset: number, bytes: Buffer, headers: Record<string, string | undefined> = {}) =>
      send('PATCH', url, { 'upload-offset': String(offset), 'content-type': OFFSET_STREAM, ...headers }, bytes),
    remove: (url: string, headers: Record<string, string | undefined> = {}) => send('DELETE', url, headers),
    async download(fileId: string): Promise<Buffer> {
      const res = await app.inject({
        method: 'GET',
        url: `/api/files/download/${fileId}`,
        headers: { authorization: `Bearer ${user.token}` },
      });
      assert.equal(res.statusCode, 200, res.body);
      return res.rawPayload;
    },
  };
}

type Tus = ReturnType<typeof tusClient>;

/** A new upload of `length` bytes (or deferred) into `folderId`; returns its URL. */
async function created(tus: Tus, folderId: string, name: string, length: number | undefined): Promise<string> {
  const res = await tus.create(metadata({ folderId, filename: name, filetype: 'application/x-test' }), length);
  assertTus(res, 201, undefined, 'creation');
  assert.match(String(res.headers.location), /^\/api\/uploads\/upl_[0-9a-z]+$/);
  return String(res.headers.location);
}

/** HEAD says `offset`; then one PATCH with the rest finishes the upload into a file holding exactly `data`. */
async function assertResumable(tus: Tus, url: string, data: Buffer, offset: number, label = ''): Promise<string> {
  const head = await tus.head(url);
  assertTus(head, 200, undefined, `${label} HEAD`);
  assert.equal(head.headers['upload-offset'], String(offset), `${label}: the offset is unchanged`);
  const deferred = head.headers['upload-defer-length'] === '1';
  const rest = await tus.patch(url, offset, data.subarray(offset), deferred ? { 'upload-length': String(data.length) } : {});
  assertTus(rest, 204, undefined, `${label} the PATCH that finishes`);
  assert.equal(rest.headers['upload-offset'], String(data.length));
  const fileId = String(rest.headers['coffre-file-id']);
  assert.match(fileId, /^fil_/, `${label}: the last PATCH names its file`);
  assert.ok((await tus.download(fileId)).equals(data), `${label}: the file holds exactly the bytes sent`);
  return fileId;
}

function assertExpiresInADay(value: unknown): void {
  const at = Date.parse(String(value));
  assert.ok(Number.isFinite(at), `Upload-Expires is an HTTP date: ${value}`);
  assert.ok(Math.abs(at - Date.now() - DAY_MS) < 120_000, `Upload-Expires is 24 h ahead: ${value}`);
}

const sha256 = (data: Buffer) => `sha256:${createHash('sha256').update(data).digest('hex')}`;

for (const dialect of DIALECTS) {
  describe(`tus protocol [${dialect}]`, () => {
    async function setup(t: Parameters<typeof build>[0], config = {}) {
      const test = await build(t, dialect, { config });
      const user = await signUp(test.app);
      return { ...test, user, tus: tusClient(test.app, user), folderId: await rootFolderId(user) };
    }

    it('OPTIONS, without a token, tells the version, the six extensions, the size limit and the checksum algorithms', async (t) => {
      const { app } = await build(t, dialect, { config: { maxUploadBytes: 5_000_000 } });
      const res = answerOf(await app.inject({ method: 'OPTIONS', url: '/api/uploads/' }));
      assertTus(res, 204);
      assert.equal(res.headers['tus-version'], TUS_VERSION);
      assert.deepEqual(String(res.headers['tus-extension']).split(',').sort(), [
        'checksum',
        'creation',
        'creation-defer-length',
        'creation-with-upload',
        'expiration',
        'termination',
      ]);
      assert.equal(res.headers['tus-max-size'], '5000000');
      assert.deepEqual(String(res.headers['tus-checksum-algorithm']).split(',').sort(), ['md5', 'sha1', 'sha256']);
    });

    it('creation, HEAD, then PATCH in three pieces makes the file: details, bytes and a finished HEAD', async (t) => {
      const { tus, folderId, user } = await setup(t);
      const data = randomBytes(200_000);
      const meta = metadata({ folderId, filename: 'report.pdf', filetype: 'application/pdf' });
      const res = await tus.create(meta, data.length);
      assertTus(res, 201);
      const url = String(res.headers.location);
      assert.match(url, /^\/api\/uploads\/upl_[0-9a-z]+$/);
      assertExpiresInADay(res.headers['upload-expires']);
      assert.equal(res.headers['upload-offset'], undefined, 'no body, no offset');

      const head = await tus.head(url);
      assertTus(head, 200);
      assert.equal(head.headers['upload-offset'], '0');
      assert.equal(head.headers['upload-length'], String(data.length));
      assert.equal(head.headers['upload-metadata'], meta);
      assert.equal(head.headers['cache-control'], 'no-store');
      assertExpiresInADay(head.headers['upload-expires']);

      // The first piece ends inside the second 64 KiB segment, the second on a segment boundary.
      const cuts = [0, SEGMENT + 4464, 2 * SEGMENT, data.length];
      let fileId = '';
      for (let i = 0; i < 3; i++) {
        const piece = await tus.patch(url, cuts[i], data.subarray(cuts[i], cuts[i + 1]));
        assertTus(piece, 204, undefined, `piece ${i}`);
        assert.equal(piece.headers['upload-offset'], String(cuts[i + 1]));
        assertExpiresInADay(piece.headers['upload-expires']);
        if (i < 2) assert.equal(piece.headers['coffre-file-id'], undefined, `piece ${i} does not finish the upload`);
        else fileId = String(piece.headers['coffre-file-id']);
      }
      assert.match(fileId, /^fil_/);
      const details = await user.api.get(`/api/files/details/${fileId}`);
      assert.equal(details.status, 200, JSON.stringify(details.body));
      assert.equal(details.body.name, 'report.pdf');
      assert.equal(details.body.size, data.length);
      assert.equal(details.body.contentType, 'application/pdf');
      assert.equal(details.body.checksum, sha256(data));
      assert.equal(details.body.folderId, folderId);
      assert.ok((await tus.download(fileId)).equals(data));

      const after = await tus.head(url);
      assertTus(after, 200);
      assert.equal(after.headers['upload-offset'], String(data.length));
      assert.equal(after.headers['upload-length'], String(data.length));
      assert.equal(after.headers['coffre-file-id'], fileId);
    });

    it('creation-with-upload answers the offset its body reached; the rest follows by PATCH', async (t) => {
      const { tus, folderId } = await setup(t);
      const data = randomBytes(3 * SEGMENT + 10);
      const res = await tus.create(metadata({ folderId, filename: 'first-bytes.bin' }), data.length, {}, data.subarray(0, 100_000));
      assertTus(res, 201);
      assert.equal(res.headers['upload-offset'], '100000');
      assertExpiresInADay(res.headers['upload-expires']);
      await assertResumable(tus, String(res.headers.location), data, 100_000);

      // A body holding everything makes the file at once.
      const whole = randomBytes(5000);
      const atOnce = await tus.create(metadata({ folderId, filename: 'whole.bin' }), whole.length, {}, whole);
      assertTus(atOnce, 201);
      assert.equal(atOnce.headers['upload-offset'], String(whole.length));
      assert.ok((await tus.download(String(atOnce.headers['coffre-file-id']))).equals(whole));
    });

    it('deferred length: Upload-Defer-Length: 1, PATCHes, and the last PATCH declares Upload-Length', async (t) => {
      const { tus, folderId } = await setup(t);
      const data = randomBytes(150_001);
      const url = await created(tus, folderId, 'streamed.bin', undefined);
      const head = await tus.head(url);
      assertTus(head, 200);
      assert.equal(head.headers['upload-defer-length'], '1');
      assert.equal(head.headers['upload-length'], undefined);
      const first = await tus.patch(url, 0, data.subarray(0, 70_000));
      assertTus(first, 204);
      assert.equal(first.headers['upload-offset'], '70000');
      const second = await tus.patch(url, 70_000, data.subarray(70_000, 140_000));
      assertTus(second, 204);
      assert.equal(second.headers['coffre-file-id'], undefined);
      // assertResumable sends the rest with Upload-Length, as the HEAD still says deferred.
      await assertResumable(tus, url, data, 140_000);
      const after = await tus.head(url);
      assert.equal(after.headers['upload-length'], String(data.length));
    });
  });
}
