/**
 * The tus rows of `npm run bench` (issue 32), against Coffre's own raw upload measured in the same
 * rounds:
 * - 1 GiB uploaded through /api/uploads/ (a POST with Upload-Length, then PATCHes of 16 MiB)
 *   against the raw `PUT` of the same bytes by the same client;
 * - the same upload broken at about half (the socket destroyed in the middle of a PATCH's body),
 *   then a HEAD for the offset and PATCHes for the rest: the sum of its request times against the
 *   uninterrupted tus upload's;
 * - the server's peak RSS over the tus uploads.
 * The client is node:http on one kept-alive connection (not tus-js-client, to keep the load
 * cheap), and the body slices of one 8 MiB block (bodyPattern) made once: the bytes are those of
 * the other transfer rows' files, and no side reads a file or holds 1 GiB.
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { promises as fsp } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { createFolder, type Subject } from './files.bench.js';
import { GiB, bodyPattern, currentRss, makeFile, mbps, median, peakRss, resetPeakRss, type Row } from './lib.js';

export interface TusOptions {
  work: string;
  size?: number;
  rounds?: number;
}

const MiB = 1024 * 1024;
const PATCH_BYTES = Number(process.env.BENCH_TUS_PATCH_BYTES ?? 16 * MiB);
/** Where the broken upload is cut, as a share of the size (its socket destroyed mid-PATCH). */
const CUT = 0.5;
const RESUME_BAR = 1.3;
const UPLOAD_BAR = 0.8;
const TUS = { 'tus-resumable': '1.0.0' };

/** How the tus rows measure, for the note under the table. */
export function tusMethod(): string {
  return (
    `tus rows (issue 32): one node:http client on a kept-alive connection sends the same bytes both ways, slices of one 8 MiB block: a POST with Upload-Length, then PATCHes of ${PATCH_BYTES / MiB} MiB, against the API's raw PUT; one warm-up of each, then alternating rounds (the order rotates), the ratio the median of the rounds'. ` +
    `The resumed upload destroys its socket in the middle of the PATCH that crosses ${CUT * 100} % (after half that PATCH's body has been handed to the system), asks HEAD for the offset and PATCHes the rest; its time is the sum of its request times (the broken PATCH until the socket is destroyed, and any wait while the server still holds the broken PATCH), against the uninterrupted tus upload's sum in the same round. ` +
    'Each upload starts after `sync` and freed page-cache pages (twice its size), as the transfer rows; the peak RSS is reset before each upload.'
  );
}

const sinceSeconds = (started: bigint) => Number(process.hrtime.bigint() - started) / 1e9;
const pct = (ratio: number) => `${(ratio * 100).toFixed(0)} %`;
const b64 = (value: string) => Buffer.from(value).toString('base64');

/** The bytes [from, to) of the body: slices of the pattern block, never copied. */
function* bodySlices(from: number, to: number): Generator<Buffer> {
  const block = bodyPattern();
  for (let at = from; at < to;) {
    const inBlock = at % block.length;
    const n = Math.min(MiB, block.length - inBlock, to - at);
    yield block.subarray(inBlock, inBlock + n);
    at += n;
  }
}

interface Sent {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  seconds: number;
  /** The client destroyed the socket before the body's end (`abortAfter`). */
  aborted: boolean;
}

interface Body {
  from: number;
  to: number;
  /** Destroy the socket once this many bytes of the body have been handed to the system. */
  abortAfter?: number;
}

/** One request on the kept-alive connection; its answer and its time from start to the answer's end. */
async function send(agent: http.Agent, url: string, method: string, headers: Record<string, string>, body?: Body): Promise<Sent> {
  const started = process.hrtime.bigint();
  const req = http.request(url, { method, agent, headers: body ? { ...headers, 'content-length': String(body.to - body.from) } : headers });
  let early = false;
  const answered = new Promise<Sent>((resolve, reject) => {
    req.once('response', (res) => {
      early = true;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.once('end', () =>
        resolve({
          status: res.statusCode!,
          headers: res.headers,
          body: Buffer.concat(chunks).toString(),
          seconds: sinceSeconds(started),
          aborted: false,
        }),
      );
      res.once('error', reject);
    });
    req.once('error', reject);
  });
  if (!body) {
    req.end();
    return answered;
  }
  let written = 0;
  for (const slice of bodySlices(body.from, body.to)) {
    if (body.abortAfter !== undefined && written >= body.abortAfter) {
      answered.catch(() => {});
      req.destroy();
      return { status: 0, headers: {}, body: '', seconds: sinceSeconds(started), aborted: true };
    }
    written += slice.length;
    if (body.abortAfter !== undefined && written >= body.abortAfter) {
      // The last slice before the cut: wait until the system has it, so the server can receive it.
      await new Promise<void>((resolve, reject) => req.write(slice, (error) => (error ? reject(error) : resolve())));
    } else if (!req.write(slice)) await Promise.race([once(req, 'drain'), answered]);
    if (early) {
      // Answered before the whole body (an error, or 423 while a broken PATCH settles): the
      // connection cannot carry another request, and no 'drain' would come.
      const answer = await answered;
      req.destroy();
      return answer;
    }
  }
  req.end();
  return answered;
}

interface TusUpload {
  /** Sum of the request times, waits for a broken PATCH the server still held included. */
  seconds: number;
  /** From the POST's start to the last PATCH's answer. */
  wall: number;
  fileId: string;
  /** The offset HEAD gave after the cut, when there was one. */
  resumedAt?: number;
  /** The statuses of PATCHes answered 423 or 409 after the cut (the broken one not yet settled). */
  retries: number[];
}

/** A tus upload of `size` bytes into `folder` as `name`; broken at `cutAt` bytes when given. */
async function tusUpload(
  subject: Subject,
  agent: http.Agent,
  folder: string,
  name: string,
  size: number,
  cutAt?: number,
): Promise<TusUpload> {
  const { base, auth } = subject;
  const headers = { ...auth, ...TUS };
  const started = process.hrtime.bigint();
  const created = await send(agent, `${base}/uploads/`, 'POST', {
    ...headers,
    'upload-length': String(size),
    'upload-metadata': `folderId ${b64(folder)},filename ${b64(name)}`,
  });
  if (created.status !== 201 || !created.headers.location) throw new Error(`tus POST answered ${created.status}: ${created.body}`);
  const url = new URL(created.headers.location, base).toString();
  let seconds = created.seconds;
  let offset = 0;
  let fileId = '';
  let resumedAt: number | undefined;
  const retries: number[] = [];
  let cut = cutAt;
  const head = async () => {
    const res = await send(agent, url, 'HEAD', headers);
    seconds += res.seconds;
    if (res.status !== 200) throw new Error(`tus HEAD answered ${res.status}`);
    return Number(res.headers['upload-offset']);
  };
  while (offset < size) {
    const to = Math.min(offset + PATCH_BYTES, size);
    const abortAfter = cut !== undefined && cut >= offset && cut < to ? cut - offset : undefined;
    const res = await send(
      agent,
      url,
      'PATCH',
      { ...headers, 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' },
      { from: offset, to, abortAfter },
    );
    seconds += res.seconds;
    if (res.aborted) {
      cut = undefined;
      offset = resumedAt = await head();
    } else if ((res.status === 423 || res.status === 409) && resumedAt !== undefined) {
      // The server may still be settling the broken PATCH: ask again shortly, the wait counted.
      retries.push(res.status);
      const waited = process.hrtime.bigint();
      await sleep(10);
      seconds += sinceSeconds(waited);
      offset = await head();
    } else if (res.status === 204) {
      offset = Number(res.headers['upload-offset']);
      fileId = String(res.headers['coffre-file-id'] ?? '');
    } else throw new Error(`tus PATCH at ${offset} answered ${res.status}: ${res.body}`);
  }
  if (!fileId) throw new Error('the last tus PATCH did not give Coffre-File-Id');
  return { seconds, wall: sinceSeconds(started), fileId, resumedAt, retries };
}

async function checksumOf(subject: Subject, fileId: string): Promise<string> {
  const res = await request(`${subject.base}/files/details/${fileId}`, { headers: subject.auth });
  const body = (await res.body.json()) as any;
  if (res.statusCode !== 200) throw new Error(`file details answered ${res.statusCode}: ${JSON.stringify(body)}`);
  // GET /files/details answers the detail itself, not the envelope.
  return body.checksum as string;
}

/** `calls` in the order of `round`: the first one moves to the end each round. */
async function rotate(round: number, calls: (() => Promise<void>)[]) {
  for (let i = 0; i < calls.length; i++) await calls[(i + round) % calls.length]();
}

/**
 * The tus rows: rounds of a raw PUT, a tus upload and a tus upload broken and resumed, each on
 * freed page-cache pages after `sync` (see freePages in lib.ts), the order rotating each round.
 */
export async function tusRows(subject: Subject, options: TusOptions): Promise<Row[]> {
  const size = options.size ?? Number(process.env.BENCH_FILE_BYTES ?? GiB);
  const rounds = options.rounds ?? Number(process.env.BENCH_ROUNDS ?? 5);
  const { base, auth, pid } = subject;
  const folder = await createFolder(subject, `tus-${Date.now()}`);
  const scratch = path.join(options.work, 'tus-scratch.bin');
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  // Pages for twice the upload's size: with just its size, from about its middle on, uploads of
  // either kind ran at random about 2.5 times slower (filling pages the host had taken back; see
  // freePages in lib.ts), and the rounds' ratios spread from 42 % to 158 % (docs/performance.md).
  const freshPages = async () => {
    execFileSync('sync');
    await makeFile(scratch, 2 * size);
    await fsp.rm(scratch);
  };
  const peaks = { tus: 0, put: 0 };
  const tracked = async <T>(side: 'tus' | 'put', measure: () => Promise<T>): Promise<T> => {
    await freshPages();
    const before = currentRss(pid);
    resetPeakRss(pid);
    const result = await measure();
    const peak = peakRss(pid);
    peaks[side] = Math.max(peaks[side], peak);
    process.stderr.write(`  RSS ${(before / 1e6).toFixed(0)} MB before, peak ${(peak / 1e6).toFixed(0)} MB\n`);
    return result;
  };
  let expected = '';
  const times = { put: [] as number[], tus: [] as number[], tusSum: [] as number[], resumed: [] as number[] };
  const put = async () => {
    const res = await tracked('put', () =>
      send(
        agent,
        `${base}/files/upload/${folder}?name=put.bin`,
        'PUT',
        { ...auth, 'content-type': 'application/octet-stream' },
        { from: 0, to: size },
      ),
    );
    if (res.status >= 300) throw new Error(`raw PUT answered ${res.status}: ${res.body}`);
    expected ||= await checksumOf(subject, JSON.parse(res.body).data.id as string);
    times.put.push(res.seconds);
    process.stderr.write(`tus: raw PUT ${mbps(size, res.seconds).toFixed(0)} MB/s\n`);
  };
  const verify = async (upload: TusUpload) => {
    const checksum = await checksumOf(subject, upload.fileId);
    if (expected && checksum !== expected) throw new Error(`the tus upload's checksum ${checksum} is not the raw PUT's ${expected}`);
  };
  const tus = async () => {
    const upload = await tracked('tus', () => tusUpload(subject, agent, folder, 'tus.bin', size));
    await verify(upload);
    times.tus.push(upload.wall);
    times.tusSum.push(upload.seconds);
    process.stderr.write(`tus: upload ${mbps(size, upload.wall).toFixed(0)} MB/s, requests ${upload.seconds.toFixed(2)} s\n`);
  };
  const resumed = async () => {
    // Half-way through the body of the PATCH that holds the byte at CUT.
    const patchStart = Math.floor((size * CUT) / PATCH_BYTES) * PATCH_BYTES;
    const cutAt = patchStart + Math.floor(Math.min(PATCH_BYTES, size - patchStart) / 2);
    const upload = await tracked('tus', () => tusUpload(subject, agent, folder, 'resumed.bin', size, cutAt));
    await verify(upload);
    times.resumed.push(upload.seconds);
    process.stderr.write(
      `tus: resumed at ${((upload.resumedAt! / size) * 100).toFixed(1)} % (retries: ${upload.retries.join(', ') || 'none'}), requests ${upload.seconds.toFixed(2)} s, wall ${upload.wall.toFixed(2)} s\n`,
    );
  };
  try {
    // Warm-up, unmeasured (see transferRows in files.bench.ts: a fresh path runs 30-40 % slower).
    await rotate(0, [put, tus, resumed]);
    for (const list of Object.values(times)) list.length = 0;
    peaks.tus = peaks.put = 0;
    for (let round = 0; round < rounds; round++) await rotate(round, [put, tus, resumed]);
  } finally {
    await agent.destroy();
  }
  const upRatios = times.tus.map((t, i) => times.put[i] / t);
  const resumeRatios = times.resumed.map((t, i) => t / times.tusSum[i]);
  process.stderr.write(
    `tus upload ratios: ${upRatios.map(pct).join(', ')}; resumed / uninterrupted: ${resumeRatios.map((r) => r.toFixed(2)).join(', ')}\n`,
  );
  const gib = `${+(size / GiB).toFixed(3)} GiB`;
  const upRatio = median(upRatios);
  const resumeRatio = median(resumeRatios);
  return [
    {
      name: `tus · upload of ${gib} in PATCHes of ${PATCH_BYTES / MiB} MiB`,
      figure: `${mbps(size, median(times.tus)).toFixed(0)} MB/s`,
      ceiling: `${mbps(size, median(times.put)).toFixed(0)} MB/s (API raw PUT, same client)`,
      ratio: pct(upRatio),
      bar: `≥ ${UPLOAD_BAR * 100} %`,
      pass: upRatio >= UPLOAD_BAR,
    },
    {
      name: `tus · upload of ${gib} broken at ${CUT * 100} % and resumed (sum of request times)`,
      figure: `${median(times.resumed).toFixed(2)} s`,
      ceiling: `${median(times.tusSum).toFixed(2)} s (uninterrupted tus upload)`,
      ratio: `${resumeRatio.toFixed(2)}×`,
      bar: `≤ ${RESUME_BAR}×`,
      pass: resumeRatio <= RESUME_BAR,
    },
    {
      name: `tus · Peak server RSS, tus uploads of ${gib}`,
      figure: `${(peaks.tus / 1e6).toFixed(0)} MB`,
      ceiling: `200 MB (raw PUTs, same rounds: ${(peaks.put / 1e6).toFixed(0)} MB)`,
      ratio: pct(peaks.tus / 200e6),
      bar: '< 200 MB',
      pass: peaks.tus < 200e6,
    },
  ];
}
