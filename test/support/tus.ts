import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { ClientRequest } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import type { TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import * as tus from 'tus-js-client';
import type { DialectName } from '../../src/db/database.js';
import { build, signUp, type TestUser } from '../helper.js';
import { clientEnv, describeRun, findTool, inCi, runProcess, type RunResult } from './dav-clients.js';
import { tempDir } from './disk.js';
import { sha256Tag } from './disk.js';
import { mkdir } from './folders.js';
import { http, startSharedInstances } from './instances.js';
import { listen } from './raw-http.js';

// The tus clients nobody here wrote (tus-js-client's node build, Debian's python3-tuspy) against
// the resumable uploads of /api/uploads/ (issue 32): where they upload, what they sent and got
// back, and what the upload became.

export const TUS_PATH = '/api/uploads/';

/** Where a client uploads: the server's origin, the tus endpoint, a bearer token and a folder of the token's user. */
export interface TusTarget {
  base: string;
  endpoint: string;
  token: string;
  folderId: string;
}

/** A new user of a test app listening on 127.0.0.1, and a new folder of theirs to upload into. */
export async function tusTarget(t: TestContext, dialect: DialectName): Promise<TusTarget & { owner: TestUser }> {
  const { app } = await build(t, dialect);
  const owner = await signUp(app, 'Tus Client');
  const folderId = await mkdir(owner, 'tus uploads');
  const base = `http://127.0.0.1:${await listen(app)}`;
  return { base, endpoint: `${base}${TUS_PATH}`, token: owner.token, folderId, owner };
}

/**
 * Two server processes over one PostgreSQL schema and one S3 bucket, a user signed up on the first
 * with a folder made on the second: the same user and folder as a target on each instance.
 */
export async function twoInstanceTargets(t: TestContext): Promise<{ onA: TusTarget; onB: TusTarget; bucketObjects(): Promise<Buffer[]> }> {
  const { instances, bucketObjects } = await startSharedInstances(t, ['tus-a', 'tus-b']);
  const [a, b] = instances;
  const email = `tus-${randomBytes(3).toString('hex')}@example.com`;
  const registered = await http(a.url, 'POST', '/api/auth/register', { json: { email, password: 'correct horse battery', name: 'Tus' } });
  assert.equal(registered.status, 201, JSON.stringify(registered.body));
  const { accessToken: token, user } = registered.body.data;
  const folder = await http(b.url, 'POST', `/api/folders/create/${user.defaultBucketId}`, { token, json: { name: 'tus uploads' } });
  assert.equal(folder.status, 201, JSON.stringify(folder.body));
  const onA = { base: a.url, endpoint: `${a.url}${TUS_PATH}`, token, folderId: folder.body.data.id };
  return { onA, onB: { ...onA, base: b.url, endpoint: `${b.url}${TUS_PATH}` }, bucketObjects };
}

/** The tus metadata of an upload into the target's folder. */
export function tusMetadata(target: TusTarget, filename: string, filetype = 'application/octet-stream'): Record<string, string> {
  return { folderId: target.folderId, filename, filetype };
}

// --- tus-js-client ----------------------------------------------------------------------------

/** One request tus-js-client sent, and its answer (status 0: none came, the request was aborted). */
export interface TusExchange {
  /** Milliseconds from the log's start to the request, and to its answer. */
  sentAt: number;
  answeredAt?: number;
  method: string;
  url: string;
  /** The request's Upload-Offset, Upload-Length and Upload-Defer-Length. */
  offset?: string;
  length?: string;
  defer?: string;
  status: number;
  /** The answer's Upload-Offset, Location and Coffre-File-Id. */
  answerOffset?: string;
  location?: string;
  fileId?: string;
}

/** Everything tus-js-client sent, and each error it asked to retry (and whether it was let). */
export interface TusLog {
  started: number;
  exchanges: TusExchange[];
  retries: string[];
}

export function newTusLog(): TusLog {
  return { started: Date.now(), exchanges: [], retries: [] };
}

/** The log in lines, for an assertion message. */
export function describeTusLog(log: TusLog): string {
  const lines = log.exchanges.map((x) => {
    const sent = [x.offset && `Upload-Offset: ${x.offset}`, x.length && `Upload-Length: ${x.length}`, x.defer && 'Upload-Defer-Length: 1'];
    const got = [
      x.answerOffset && `Upload-Offset: ${x.answerOffset}`,
      x.location && `Location: ${x.location}`,
      x.fileId && `Coffre-File-Id: ${x.fileId}`,
    ];
    const when = `${x.sentAt}${x.answeredAt === undefined ? '' : `-${x.answeredAt}`} ms`;
    return `${when} ${x.method} ${new URL(x.url).pathname} ${sent.filter(Boolean).join(', ')} -> ${x.status || 'no answer'} ${got.filter(Boolean).join(', ')}`;
  });
  return [...lines, ...log.retries.map((r) => `error: ${r}`)].join('\n');
}

/**
 * tus-js-client's options for the target: the bearer token on every request, every request and
 * answer in `log`, and retries only of 409 and 423, the answers a resumed upload may get while the
 * server still finishes the PATCH it was aborted in (a server error is never retried away).
 */
export function tusOptions(target: TusTarget, log: TusLog, options: tus.UploadOptions): tus.UploadOptions {
  const pending = new Map<tus.HttpRequest, TusExchange>();
  return {
    endpoint: target.endpoint,
    headers: { Authorization: `Bearer ${target.token}` },
    retryDelays: [100, 300, 600, 1000, 2000, 3000],
    onShouldRetry: (error, attempt) => {
      const status = error.originalResponse?.getStatus() ?? 0;
      const retried = status === 409 || status === 423;
      log.retries.push(
        `${error.originalRequest?.getMethod()} answered ${status || 'nothing'}: ${retried ? 'retried' : 'not retried'} (attempt ${attempt + 1})`,
      );
      return retried;
    },
    ...options,
    onBeforeRequest: async (req) => {
      const exchange: TusExchange = {
        sentAt: Date.now() - log.started,
        method: req.getMethod(),
        url: req.getURL(),
        offset: req.getHeader('Upload-Offset'),
        length: req.getHeader('Upload-Length'),
        defer: req.getHeader('Upload-Defer-Length'),
        status: 0,
      };
      log.exchanges.push(exchange);
      pending.set(req, exchange);
      await options.onBeforeRequest?.(req);
    },
    onAfterResponse: async (req, res) => {
      const exchange = pending.get(req);
      if (exchange) {
        // The Upload-Length of a deferred upload is set once the source is read, after onBeforeRequest.
        exchange.length = req.getHeader('Upload-Length');
        exchange.answeredAt = Date.now() - log.started;
        exchange.status = res.getStatus();
        exchange.answerOffset = res.getHeader('Upload-Offset');
        exchange.location = res.getHeader('Location');
        exchange.fileId = res.getHeader('Coffre-File-Id');
      }
      await options.onAfterResponse?.(req, res);
    },
  };
}

export interface TusRun {
  upload: tus.Upload;
  /** Settles with the last answer (onSuccess) or the error (onError); never after an abort. */
  done: Promise<tus.HttpResponse>;
}

/** Starts an upload of `source`, after `prepare` (which may pick a previous upload to resume). */
export async function startUpload(
  source: Buffer | Readable,
  options: tus.UploadOptions,
  prepare?: (upload: tus.Upload) => Promise<void>,
): Promise<TusRun> {
  let upload!: tus.Upload;
  const done = new Promise<tus.HttpResponse>((resolve, reject) => {
    upload = new tus.Upload(source, {
      ...options,
      onSuccess: ({ lastResponse }) => resolve(lastResponse),
      onError: (error) => reject(error),
    });
  });
  await prepare?.(upload);
  upload.start();
  return { upload, done };
}

/** The run's last answer; its error with the log of what was sent when it failed. */
export async function finished(run: TusRun, log: TusLog): Promise<tus.HttpResponse> {
  try {
    return await run.done;
  } catch (error) {
    throw new Error(`tus-js-client failed: ${(error as Error).message}\n${describeTusLog(log)}`, { cause: error });
  }
}

/**
 * tus-js-client's own URL store of its node build (a JSON file, what a node program resumes from
 * after a restart); the package's types leave it out.
 */
export function fileUrlStorage(t: TestContext): tus.UrlStorage {
  const { FileUrlStorage } = tus as unknown as { FileUrlStorage: new (file: string) => tus.UrlStorage };
  return new FileUrlStorage(path.join(tempDir(t, 'tus-urls'), 'uploads.json'));
}

/**
 * tus-js-client's node HTTP stack with request bodies sent at `bytesPerSecond` (in 16 KiB
 * pieces, a slow link), so that an abort at a progress threshold lands inside a PATCH's body:
 * on loopback a whole chunk is written before the first progress event.
 */
export function pacedHttpStack(bytesPerSecond: number): tus.HttpStack {
  const inner = new tus.DefaultHttpStack({});
  const piece = 16 * 1024;
  return {
    getName: () => 'PacedNodeHttpStack',
    createRequest(method, url) {
      const request = inner.createRequest(method, url);
      const send = request.send.bind(request);
      request.send = (body: unknown) => {
        if (!(body instanceof Uint8Array)) return send(body);
        const paced = Readable.from([Buffer.from(body.buffer, body.byteOffset, body.byteLength)]).pipe(
          new Transform({
            async transform(chunk: Buffer, _encoding, callback) {
              for (let at = 0; at < chunk.length; at += piece) {
                this.push(chunk.subarray(at, at + piece));
                await sleep((piece / bytesPerSecond) * 1000);
              }
              callback();
            },
          }),
        );
        // The stack sends a Content-Length for a body with a size (as it does for a file's slices).
        return send(Object.assign(paced, { size: body.byteLength })).then((response) => {
          // Node's HTTP client never ends a request answered (409, 423) before its body was all
          // sent: the 'drain' it waits for does not come. The server keeps such a connection for its
          // keep-alive timeout (72 s), and its close waits as long; so it is closed here.
          const sent = request.getUnderlyingObject() as ClientRequest;
          if (!sent.writableFinished) sent.destroy();
          return response;
        });
      };
      return request;
    },
  };
}

// --- what the upload became -------------------------------------------------------------------

/**
 * The file `fileId`, as the API tells it: in the target's folder under `name`, of the source's size
 * and SHA-256, and a download byte for byte the source.
 */
export async function assertUploadedFile(
  target: TusTarget,
  fileId: string | undefined,
  expected: { name: string; data: Buffer; contentType?: string },
): Promise<void> {
  assert.ok(fileId, 'the upload named its file (Coffre-File-Id)');
  const details = await http(target.base, 'GET', `/api/files/details/${fileId}`, { token: target.token });
  assert.equal(details.status, 200, `GET /api/files/details/${fileId}: ${JSON.stringify(details.body)}`);
  const file = details.body;
  const { name, folderId, size, checksum } = file;
  assert.deepEqual(
    { name, folderId, size, checksum },
    { name: expected.name, folderId: target.folderId, size: expected.data.length, checksum: sha256Tag(expected.data) },
    'the file is in the folder under its name, with the size and SHA-256 of the source',
  );
  if (expected.contentType) assert.equal(file.contentType, expected.contentType, 'the filetype of the metadata is the content type');
  const download = await http(target.base, 'GET', `/api/files/download/${fileId}`, { token: target.token });
  assert.equal(download.status, 200, `GET /api/files/download/${fileId}: ${download.status}`);
  assert.equal(download.raw.length, expected.data.length, 'the download has the length of the source');
  assert.ok(download.raw.equals(expected.data), 'the download is byte for byte the source');
}

/** The caller's unfinished uploads (GET /api/uploads). */
export async function unfinishedUploads(target: TusTarget): Promise<any[]> {
  const res = await http(target.base, 'GET', '/api/uploads', { token: target.token });
  assert.equal(res.status, 200, `GET /api/uploads: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.uploads;
}

// --- tuspy (Debian python3-tuspy) -------------------------------------------------------------

const TUSPY_SCRIPT = new URL('../fixtures/tuspy-upload.py', import.meta.url).pathname;

/**
 * A python3 that imports `module`: Debian's packages install into /usr/lib/python3/dist-packages,
 * which only /usr/bin/python3 reads (a pyenv or venv python3 earlier on PATH does not). Without
 * one the test is skipped with the reason, except with CI=true where it fails: .ci/run installs it.
 */
export function requirePythonModule(t: TestContext, module: string, debianPackage: string): string | null {
  for (const python of new Set(['/usr/bin/python3', findTool('python3')])) {
    if (!python) continue;
    const probe = spawnSync(python, ['-c', `import ${module}`], { env: clientEnv(os.tmpdir()), stdio: 'ignore', timeout: 20_000 });
    if (probe.status === 0) return python;
  }
  assert.ok(!inCi, `no python3 imports ${module} with CI=true: .ci/run installs it (apt-get install -y ${debianPackage})`);
  t.skip(`python3 cannot import ${module} (apt-get install ${debianPackage})`);
  return null;
}

export interface TuspyArgs {
  endpoint: string;
  token: string;
  file: string;
  chunkSize: number;
  metadata?: Record<string, string>;
  /** An upload to resume (tuspy asks its offset with HEAD) instead of creating one. */
  url?: string;
  /** Send only this many PATCHes (upload_chunk()) instead of uploading all (upload()). */
  chunks?: number;
  /** Send tuspy's Upload-Checksum (sha1) with every PATCH. */
  checksum?: boolean;
}

/** What test/fixtures/tuspy-upload.py printed: the upload, where it started and ended, and each PATCH. */
export interface TuspyResult {
  url: string;
  startedAt: number;
  offset: number;
  fileId: string | null;
  patches: { offset: number; status: number; fileId: string | null }[];
}

/** Runs test/fixtures/tuspy-upload.py with `args`; asserts that it succeeded and returns what it printed. */
export async function runTuspy(t: TestContext, python: string, args: TuspyArgs): Promise<TuspyResult & { run: RunResult }> {
  const home = tempDir(t, 'tuspy-home');
  const run = await runProcess(t, python, [TUSPY_SCRIPT, JSON.stringify(args)], { cwd: home, env: clientEnv(home), timeoutMs: 60_000 });
  assert.equal(run.code, 0, `tuspy failed: ${describeRun(run)}`);
  const last = run.stdout.trim().split('\n').pop() ?? '';
  return { ...(JSON.parse(last) as TuspyResult), run };
}
