import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import type * as tus from 'tus-js-client';
import { DIALECTS } from '../../helper.js';
import { inCi } from '../../support/dav-clients.js';
import { http } from '../../support/instances.js';
import { prng, prngBytes } from '../../support/prng.js';
import {
  TUS_PATH,
  assertUploadedFile,
  describeTusLog,
  fileUrlStorage,
  finished,
  newTusLog,
  pacedHttpStack,
  startUpload,
  tusMetadata,
  tusOptions,
  tusTarget,
  twoInstanceTargets,
  unfinishedUploads,
  type TusLog,
} from '../../support/tus.js';

// tus-js-client 4.3.1 (its node build: the tus client of the web app, written by the tus project)
// against /api/uploads/ on a listening server: whole uploads in several PATCHes, uploads aborted
// inside a PATCH and resumed, a deferred length, and an upload finished on another instance.

const KiB = 1024;
const MiB = 1024 * KiB;

/** The PATCHes of a log (from the exchange `from` to the one before `to`). */
function patches(log: TusLog, from = 0, to = log.exchanges.length) {
  return log.exchanges.slice(from, to).filter((x) => x.method === 'PATCH');
}

for (const dialect of DIALECTS) {
  describe(`tus-js-client against ${TUS_PATH} (${dialect})`, () => {
    it("uploads a 5 MiB file in 1 MiB PATCHes: the last names the file, whose bytes and checksum are the source's", async (t) => {
      const target = await tusTarget(t, dialect);
      const data = prngBytes(prng(dialect === 'sqlite' ? 3101 : 3102), 5 * MiB + 12345);
      const log = newTusLog();
      const options = tusOptions(target, log, { chunkSize: MiB, metadata: tusMetadata(target, 'whole.bin', 'application/x-tus-test') });
      const last = await finished(await startUpload(data, options), log);
      const trace = describeTusLog(log);

      assert.deepEqual(
        log.exchanges.map((x) => x.method),
        ['POST', ...Array(6).fill('PATCH')],
        `one POST, then one PATCH a chunk:\n${trace}`,
      );
      const [post] = log.exchanges;
      assert.deepEqual([post.status, post.length], [201, String(data.length)], trace);
      assert.match(new URL(post.location!, target.base).pathname, /^\/api\/uploads\/[^/]+$/, trace);
      assert.deepEqual(
        patches(log).map((p) => [p.offset, p.status, p.answerOffset]),
        [0, 1, 2, 3, 4, 5].map((i) => [String(i * MiB), 204, String(Math.min((i + 1) * MiB, data.length))]),
        `each PATCH is taken whole:\n${trace}`,
      );
      assert.deepEqual(
        patches(log)
          .slice(0, -1)
          .map((p) => p.fileId),
        Array(5).fill(undefined),
        `only the last PATCH names a file:\n${trace}`,
      );
      const fileId = last.getHeader('Coffre-File-Id');
      assert.equal(fileId, patches(log).at(-1)!.fileId, 'onSuccess has the last PATCH');
      await assertUploadedFile(target, fileId, { name: 'whole.bin', data, contentType: 'application/x-tus-test' });
      assert.deepEqual(await unfinishedUploads(target), [], 'nothing is left unfinished');
    });

    it('resumes an upload aborted inside a PATCH four times (findPreviousUploads, then uploadUrl) to the same bytes', async (t) => {
      const target = await tusTarget(t, dialect);
      const random = prng(dialect === 'sqlite' ? 3103 : 3104);
      const data = prngBytes(random, 6 * MiB + 4321);
      const log = newTusLog();
      const urlStorage = fileUrlStorage(t);
      // 2 MiB/s: a 1 MiB PATCH takes half a second, and progress is reported every tenth of one inside its body.
      const common = {
        chunkSize: MiB,
        httpStack: pacedHttpStack(2 * MiB),
        urlStorage,
        metadata: tusMetadata(target, 'aborted.bin'),
      };
      let uploadUrl: string | null = null;
      let last: tus.HttpResponse | undefined;
      const attempts: { from: number; abortedAt?: number; via: string }[] = [];
      for (let attempt = 0; attempt <= 4; attempt++) {
        const from = log.exchanges.length;
        // Each attempt but the last aborts once it sent 100 KiB to 1.3 MiB past where it resumed (4 × 1.3 < 6).
        const step = attempt < 4 ? 100 * KiB + Math.floor(random() * 1.2 * MiB) : Infinity;
        const via = attempt === 0 ? 'endpoint' : attempt % 2 === 1 ? 'findPreviousUploads' : 'uploadUrl';
        let resumedAt = 0;
        let inBody = false;
        let stop!: (at: number) => void;
        const stopped = new Promise<number>((resolve) => (stop = resolve));
        const options = tusOptions(target, log, {
          ...common,
          ...(via === 'uploadUrl' ? { uploadUrl } : {}),
          onBeforeRequest: (req) => void (inBody = req.getMethod() === 'PATCH'),
          onAfterResponse: (req, res) => {
            inBody = false;
            // A HEAD tells where this attempt resumes (again after a retry of a 409 or 423).
            if (req.getMethod() === 'HEAD' && res.getStatus() === 200) resumedAt = Number(res.getHeader('Upload-Offset'));
          },
          // Only while a PATCH's body is on its way: an abort between PATCHes would still send the next one.
          onProgress: (sent) => {
            if (inBody && sent >= resumedAt + step) {
              inBody = false;
              stop(sent);
              void run.upload.abort();
            }
          },
        });
        const run = await startUpload(data, options, async (upload) => {
          if (via !== 'findPreviousUploads') return;
          const previous = await upload.findPreviousUploads();
          // An attempt started from uploadUrl stores the URL again: every entry names the one upload.
          assert.ok(previous.length > 0, 'the URL store holds the upload');
          assert.deepEqual(new Set(previous.map((p) => p.uploadUrl)), new Set([uploadUrl]), 'the URL store holds the upload only');
          upload.resumeFromPreviousUpload(previous[0]);
        });
        const outcome = await Promise.race([finished(run, log).then((response) => ({ response })), stopped.then((at) => ({ at }))]);
        uploadUrl ??= run.upload.url;
        if ('response' in outcome) last = outcome.response;
        attempts.push({ from, via, abortedAt: 'at' in outcome ? outcome.at : undefined });
        if (last) break;
      }
      const trace = `${JSON.stringify(attempts)}\n${describeTusLog(log)}\nfinished after ${Date.now() - log.started} ms`;
      t.diagnostic(trace);
      assert.deepEqual(
        attempts.map((a) => a.abortedAt !== undefined),
        [true, true, true, true, false],
        `four aborts, then the fifth attempt finishes:\n${trace}`,
      );
      assert.equal(log.exchanges.filter((x) => x.method === 'POST').length, 1, `one upload was created, and only resumed after:\n${trace}`);
      assert.ok(uploadUrl, 'the upload has a URL');
      assert.deepEqual(
        log.exchanges.filter((x) => x.method !== 'POST' && x.url !== uploadUrl),
        [],
        `every HEAD and PATCH went to the upload:\n${trace}`,
      );
      // Where each resumed attempt's first accepted PATCH started, against the PATCH its predecessor broke.
      const resumes = attempts.slice(1).map((a, i) => {
        const broken = patches(log, attempts[i].from, a.from).filter((p) => p.status === 0);
        const continued = patches(log, a.from).find((p) => p.status === 204);
        return { broken: Number(broken.at(-1)?.offset), continued: Number(continued?.offset) };
      });
      assert.ok(
        resumes.every((r) => r.continued >= r.broken),
        `an attempt never resumes before the PATCH its predecessor broke: ${JSON.stringify(resumes)}\n${trace}`,
      );
      assert.ok(
        resumes.some((r) => r.continued > r.broken),
        `a broken PATCH keeps the bytes received: ${JSON.stringify(resumes)}\n${trace}`,
      );
      assert.equal(last!.getHeader('Coffre-File-Id'), patches(log).at(-1)!.fileId, trace);
      await assertUploadedFile(target, last!.getHeader('Coffre-File-Id'), { name: 'aborted.bin', data });
      assert.deepEqual(await unfinishedUploads(target), [], 'nothing is left unfinished');
    });

    it('uploads a stream of unknown length with Upload-Defer-Length: the PATCH that ends it declares the length', async (t) => {
      const target = await tusTarget(t, dialect);
      const data = prngBytes(prng(dialect === 'sqlite' ? 3105 : 3106), 2 * MiB + 333);
      const log = newTusLog();
      const seen: { listed?: any[]; head?: Record<string, string | null> } = {};
      const pieces = function* () {
        for (let at = 0; at < data.length; at += 100_000) yield data.subarray(at, at + 100_000);
      };
      const options = tusOptions(target, log, {
        chunkSize: 512 * KiB,
        uploadLengthDeferred: true,
        metadata: tusMetadata(target, 'deferred.bin'),
        // After the first PATCH, what the server tells of the upload while its length is unknown.
        onAfterResponse: async (req) => {
          if (req.getMethod() !== 'PATCH' || seen.head) return;
          seen.listed = await unfinishedUploads(target);
          const head = await http(target.base, 'HEAD', new URL(req.getURL()).pathname, {
            token: target.token,
            headers: { 'Tus-Resumable': '1.0.0' },
          });
          const names = ['upload-offset', 'upload-length', 'upload-defer-length'];
          seen.head = Object.fromEntries([['status', String(head.status)], ...names.map((n) => [n, head.headers.get(n)])]);
        },
      });
      const last = await finished(await startUpload(Readable.from(pieces(), { objectMode: false }), options), log);
      const trace = describeTusLog(log);

      const [post] = log.exchanges;
      assert.deepEqual([post.method, post.status, post.defer, post.length], ['POST', 201, '1', undefined], trace);
      assert.deepEqual(
        patches(log).map((p) => [p.offset, p.length, p.status]),
        [0, 1, 2, 3, 4].map((i) => [String(i * 512 * KiB), i === 4 ? String(data.length) : undefined, 204]),
        `only the last PATCH declares the length:\n${trace}`,
      );
      assert.deepEqual(
        seen.head,
        { status: '200', 'upload-offset': String(512 * KiB), 'upload-length': null, 'upload-defer-length': '1' },
        'HEAD tells a deferred length',
      );
      assert.deepEqual(
        seen.listed?.map((u) => [u.name, u.length, u.offset]),
        [['deferred.bin', null, 512 * KiB]],
        'the unfinished upload is listed without a length',
      );
      await assertUploadedFile(target, last.getHeader('Coffre-File-Id'), { name: 'deferred.bin', data });
    });
  });
}

describe(
  'tus-js-client across two instances over PostgreSQL and S3',
  { skip: !DIALECTS.includes('postgres') && !inCi ? 'needs PostgreSQL (mandatory with CI=true)' : false },
  () => {
    it('an upload started on one instance is finished on the other; its unfinished bytes are not plaintext in the bucket', async (t) => {
      assert.ok(DIALECTS.includes('postgres'), 'CI=true: the multi-instance upload needs PostgreSQL');
      const { onA, onB, bucketObjects } = await twoInstanceTargets(t);
      const data = prngBytes(prng(3107), 3 * MiB + 999);
      const chunkSize = 512 * KiB;
      const log = newTusLog();

      // Three PATCHes to A, then the upload stops between PATCHes.
      let stop!: () => void;
      const stopped = new Promise<void>((resolve) => (stop = resolve));
      const first = await startUpload(
        data,
        tusOptions(onA, log, {
          chunkSize,
          metadata: tusMetadata(onA, 'two instances.bin'),
          onChunkComplete: (_size, accepted) => {
            if (accepted < 3 * chunkSize) return;
            void first.upload.abort();
            stop();
          },
        }),
      );
      await Promise.race([stopped, finished(first, log)]);
      const path = new URL(first.upload.url!).pathname;
      let trace = describeTusLog(log);
      assert.deepEqual(
        patches(log).map((p) => p.status),
        [204, 204, 204],
        trace,
      );

      const head = await http(onB.base, 'HEAD', path, { token: onB.token, headers: { 'Tus-Resumable': '1.0.0' } });
      assert.deepEqual(
        [head.status, head.headers.get('upload-offset'), head.headers.get('upload-length')],
        [200, String(3 * chunkSize), String(data.length)],
        'the other instance knows the upload',
      );
      const stored = await bucketObjects();
      assert.ok(
        stored.reduce((sum, o) => sum + o.length, 0) >= 3 * chunkSize,
        `the received bytes are in the shared bucket: ${stored.length} objects`,
      );
      for (const at of [0, 700_000, 3 * chunkSize - 64]) {
        const probe = data.subarray(at, at + 64);
        assert.ok(
          stored.every((o) => o.indexOf(probe) === -1),
          `the bytes at ${at} of the unfinished upload are not in the bucket in plaintext`,
        );
      }

      const from = log.exchanges.length;
      const second = await startUpload(data, tusOptions(onB, log, { chunkSize, uploadUrl: `${onB.base}${path}` }));
      const last = await finished(second, log);
      trace = describeTusLog(log);
      const resumed = log.exchanges.slice(from);
      assert.deepEqual([resumed[0].method, resumed[0].answerOffset], ['HEAD', String(3 * chunkSize)], `B resumes at A's offset:\n${trace}`);
      assert.ok(
        resumed.every((x) => x.url.startsWith(onB.base)),
        `the rest went to B:\n${trace}`,
      );
      assert.deepEqual(
        patches(log, from).map((p) => [p.offset, p.status]),
        [3, 4, 5, 6].map((i) => [String(i * chunkSize), 204]),
        trace,
      );
      // The file is read back through A.
      await assertUploadedFile(onA, last.getHeader('Coffre-File-Id'), { name: 'two instances.bin', data });
    });
  },
);
