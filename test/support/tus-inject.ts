import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { TestContext } from 'node:test';
import type { Config } from '../../src/config.js';
import type { DialectName } from '../../src/db/database.js';
import { buildApp } from '../../src/app.js';
import { build, signUp, type TestApp, type TestUser } from '../helper.js';
import { rootFolderId } from './files.js';
import { assertError } from './errors.js';

/** The tus protocol by hand, over Fastify inject with raw bodies and explicit headers (the tus clients are in tus.ts). */
export const TUS_VERSION = '1.0.0';
export const OFFSET_STREAM = 'application/offset+octet-stream';
export const SEGMENT = 64 * 1024;
const DAY_MS = 24 * 3600 * 1000;

export interface TusAnswer {
  status: number;
  body: any;
  headers: LightMyRequestResponse['headers'];
}

/** Request headers; undefined removes one the client sends by default (Tus-Resumable, Authorization). */
export type TusHeaders = Record<string, string | undefined>;

function answerOf(res: LightMyRequestResponse): TusAnswer {
  const json = String(res.headers['content-type'] ?? '').includes('json') && res.body.length > 0;
  return { status: res.statusCode, body: json ? res.json() : res.body, headers: res.headers };
}

/** Upload-Metadata from pairs, each value in base64 (tus's format). */
export function tusMetadataHeader(pairs: Record<string, string>): string {
  return Object.entries(pairs)
    .map(([key, value]) => `${key} ${Buffer.from(value).toString('base64')}`)
    .join(',');
}

/**
 * Every tus answer names the protocol; an error is also the API's envelope with its code (a HEAD
 * answer has no body: its status and headers are all there is to check).
 */
export function assertTus(res: TusAnswer, status: number, code?: string, label = ''): void {
  if (code && res.body !== '') assertError(res, status, code, label);
  else assert.equal(res.status, status, `${label} ${JSON.stringify(res.body)}`);
  assert.equal(res.headers['tus-resumable'], TUS_VERSION, `${label}: Tus-Resumable on the answer`);
}

/** A tus client of one user over inject: every request states Tus-Resumable and the user's token unless told otherwise. */
export function tusClient(app: FastifyInstance, user: TestUser) {
  const send = async (method: string, url: string, headers: TusHeaders, payload?: Buffer) => {
    const all: Record<string, string> = { authorization: `Bearer ${user.token}`, 'tus-resumable': TUS_VERSION };
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined) delete all[name];
      else all[name] = value;
    }
    return answerOf(await app.inject({ method: method as any, url, headers: all, ...(payload ? { payload } : {}) }));
  };
  return {
    user,
    /** POST /api/uploads/ with Upload-Length (Upload-Defer-Length: 1 when `length` is undefined), and a first body if given. */
    create(meta: string, length: number | undefined, headers: TusHeaders = {}, body?: Buffer) {
      const lengthHeader = length === undefined ? { 'upload-defer-length': '1' } : { 'upload-length': String(length) };
      const bodyHeaders = body ? { 'content-type': OFFSET_STREAM } : {};
      return send('POST', '/api/uploads/', { 'upload-metadata': meta, ...lengthHeader, ...bodyHeaders, ...headers }, body);
    },
    head: (url: string, headers: TusHeaders = {}) => send('HEAD', url, headers),
    patch: (url: string, offset: number, bytes: Buffer, headers: TusHeaders = {}) =>
      send('PATCH', url, { 'upload-offset': String(offset), 'content-type': OFFSET_STREAM, ...headers }, bytes),
    remove: (url: string, headers: TusHeaders = {}) => send('DELETE', url, headers),
    /** GET /api/uploads: the user's unfinished uploads. */
    async list(): Promise<any[]> {
      const res = await user.api.get('/api/uploads');
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.data.uploads;
    },
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

export type TusInjectClient = ReturnType<typeof tusClient>;

/** A new upload of `length` bytes (deferred when undefined) into `folderId`; returns its URL. */
export async function createdUpload(tus: TusInjectClient, folderId: string, name: string, length: number | undefined): Promise<string> {
  const res = await tus.create(tusMetadataHeader({ folderId, filename: name, filetype: 'application/x-test' }), length);
  assertTus(res, 201, undefined, 'creation');
  assert.match(String(res.headers.location), /^\/api\/uploads\/upl_[0-9a-z]+$/);
  return String(res.headers.location);
}

/**
 * Checks that an upload is still resumable: HEAD says `offset`, then one PATCH with the rest of
 * `data` (declaring the length if it was deferred) finishes it into a file holding exactly `data`.
 * Returns the file's id.
 */
export async function assertResumable(tus: TusInjectClient, url: string, data: Buffer, offset: number, label = ''): Promise<string> {
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

export function assertExpiresInADay(value: unknown): void {
  const at = Date.parse(String(value));
  assert.ok(Number.isFinite(at), `Upload-Expires is an HTTP date: ${value}`);
  assert.ok(Math.abs(at - Date.now() - DAY_MS) < 120_000, `Upload-Expires is 24 h ahead: ${value}`);
}

export const sha256Checksum = (data: Buffer) => `sha256:${createHash('sha256').update(data).digest('hex')}`;

/** The id in an upload URL (/api/uploads/<id>). */
export function uploadIdOf(url: string): string {
  return url.slice(url.lastIndexOf('/') + 1);
}

/** A test app, a new user of it, their tus client and their root folder. */
export async function tusSetup(t: TestContext, dialect: DialectName, config: Partial<Config> = {}) {
  const test = await build(t, dialect, { config });
  const user = await signUp(test.app);
  return { ...test, user, tus: tusClient(test.app, user), folderId: await rootFolderId(user) };
}

/**
 * Runs `work` with a second instance of the app over the test's database and data folder, closed
 * after it (before the test's own app and database are).
 */
export async function withSecondInstance(test: TestApp, work: (other: FastifyInstance) => Promise<void>): Promise<void> {
  const other = await buildApp({ config: test.config, database: test.database, logStream: false, webRoot: null });
  try {
    await other.ready();
    await work(other);
  } finally {
    await other.close();
  }
}
