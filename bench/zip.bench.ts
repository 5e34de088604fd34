/**
 * The zip rows of `npm run bench` (issue 33):
 * - a folder of 1,000 files totalling 1 GiB as one zip, against the download of one 1 GiB file in
 *   the same rounds (content bytes per second; bar 80 %);
 * - a folder of 100,000 files of 1 KiB (seeded, see bench.ts): time to the archive's first byte
 *   (bar 1 s) and the server's peak RSS over the whole download (bar 200 MB);
 * - a zip over 4 GiB holding an entry over 4 GiB, saved and checked by unzip -t, 7z t and
 *   zipdetails (pass: all three accept it), with the server's peak RSS (bar 200 MB).
 * Downloads run through curl pinned to the load core, as the other transfer rows.
 */
import { execFile, execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { request } from 'undici';
import { createFolder, type Subject } from './files.bench.js';
import {
  GiB,
  LOAD_CORE,
  alternate,
  bodyPattern,
  currentRss,
  makeFile,
  mbps,
  median,
  peakRss,
  resetPeakRss,
  timeDownload,
  type Row,
} from './lib.js';

export interface ZipOptions {
  work: string;
  rounds?: number;
  /** A folder already holding the 100,000 small files (seeded with the server stopped), if any. */
  manyFolderId?: string;
  manyFiles?: number;
}

const MB = 1e6;
const MANY_TTFB_BAR_S = 1;
const RSS_BAR = 200 * MB;
const THROUGHPUT_BAR = 0.8;
const FOLDER_FILES = Number(process.env.BENCH_ZIP_FILES ?? 1000);
const FOLDER_BYTES = Number(process.env.BENCH_ZIP_BYTES ?? GiB);
const BIG_ENTRY = Number(process.env.BENCH_ZIP_BIG_ENTRY ?? 4.5 * GiB);
const BIG_SECOND = Number(process.env.BENCH_ZIP_BIG_SECOND ?? 600 * 1024 * 1024);

/** How the zip rows measure, for the note under the table. */
export function zipMethod(): string {
  return (
    `zip rows (issue 33): GET /api/folders/download/{id} through curl, against GET /api/files/download/{id} of one file of the same total size, one warm-up each, then alternating rounds, the ratio the median of the rounds' (content bytes per second). ` +
    'The 100,000-file folder is seeded through the repositories as copies of one uploaded 1 KiB file; its row times the first byte of the archive (curl time_starttransfer) and takes the peak RSS over the whole download, after one warm-up download. ' +
    'The big archive is saved to disk by curl and read by unzip -t, 7z t and zipdetails.'
  );
}

const execFileAsync = promisify(execFile);

const headerArgs = (headers: Record<string, string>) => Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);

/**
 * curl GET: seconds to the first byte and in all, status and bytes, the body to `output`. It runs
 * without blocking this process: undici's idle sockets are then closed on time. A blocked event
 * loop (execFileSync) once sent the next request on a socket the server had closed meanwhile (its
 * keep-alive timeout), which failed the bench with "other side closed".
 */
async function curlTimed(url: string, headers: Record<string, string>, output = '/dev/null') {
  const { stdout: out } = await execFileAsync(
    'taskset',
    [
      '-c',
      LOAD_CORE,
      'curl',
      '-s',
      '-o',
      output,
      '-w',
      '%{time_starttransfer} %{time_total} %{http_code} %{size_download}',
      ...headerArgs(headers),
      url,
    ],
    { encoding: 'utf8', maxBuffer: 1024 * 1024 },
  );
  const [firstByte, total, status, bytes] = out.trim().split(' ').map(Number);
  return { firstByte, total, status, bytes };
}

async function upload(subject: Subject, folderId: string, name: string, body: Buffer): Promise<void> {
  const res = await request(`${subject.base}/files/upload/${folderId}?name=${encodeURIComponent(name)}`, {
    method: 'PUT',
    headers: { ...subject.auth, 'content-type': 'application/octet-stream' },
    body,
  });
  await res.body.dump();
  if (res.statusCode !== 201) throw new Error(`upload of ${name} answered ${res.statusCode}`);
}

/** `size` bytes of the pattern from `at` on, wrapping around (a copy only when it must wrap). */
function patternBytes(pattern: Buffer, at: number, size: number): Buffer {
  if (at + size <= pattern.length) return pattern.subarray(at, at + size);
  const out = Buffer.allocUnsafe(size);
  for (let written = 0; written < size;) written += pattern.copy(out, written, (at + written) % pattern.length);
  return out;
}

/** A folder of `files` files of `total` bytes in all, each a different slice of the pattern. */
async function fillFolder(subject: Subject, name: string, files: number, total: number): Promise<string> {
  const folder = await createFolder(subject, name);
  const pattern = bodyPattern();
  const each = Math.floor(total / files);
  for (let i = 0; i < files; i++) {
    const size = i === files - 1 ? total - each * (files - 1) : each;
    await upload(subject, folder, `file ${String(i).padStart(4, '0')}.bin`, patternBytes(pattern, (i * 4099) % pattern.length, size));
  }
  return folder;
}

/** Uploads a file of `size` bytes (made on disk, sent by curl); its id. */
async function uploadedFile(subject: Subject, work: string, folder: string, name: string, size: number): Promise<string> {
  const source = path.join(work, name);
  await makeFile(source, size);
  const url = `${subject.base}/files/upload/${folder}?name=${encodeURIComponent(name)}`;
  const answer = execFileSync('curl', ['-s', '-T', source, ...headerArgs(subject.auth), url], { encoding: 'utf8' });
  await fsp.rm(source);
  return (JSON.parse(answer) as { data: { id: string } }).data.id;
}

export async function zipRows(subject: Subject, options: ZipOptions): Promise<Row[]> {
  // The RSS rows first, on the fresh server the bench gives them (the big archive first: the
  // 100,000 small entries leave the heap grown): their peaks are then the archives', not a heap
  // the throughput row's 1,000 uploads left grown.
  const rows: Row[] = [];
  rows.push(...(await bigArchiveRows(subject, options)));
  if (options.manyFolderId) rows.push(await manyEntriesRow(subject, options.manyFolderId, options.manyFiles ?? 0));
  rows.push(await throughputRow(subject, options));
  return rows;
}

async function throughputRow(subject: Subject, options: ZipOptions): Promise<Row> {
  const folder = await fillFolder(subject, 'zip of 1,000', FOLDER_FILES, FOLDER_BYTES);
  const single = await createFolder(subject, 'zip peer');
  const fileId = await uploadedFile(subject, options.work, single, 'one.bin', FOLDER_BYTES);
  const zipUrl = `${subject.base}/folders/download/${folder}`;
  const fileUrl = `${subject.base}/files/download/${fileId}`;
  const zipLength = (await curlTimed(zipUrl, subject.auth)).bytes;
  await timeDownload(fileUrl, subject.auth, FOLDER_BYTES);
  const { a: zipSeconds, b: fileSeconds } = await alternate(
    options.rounds ?? 5,
    async () => timeDownload(zipUrl, subject.auth, zipLength),
    async () => timeDownload(fileUrl, subject.auth, FOLDER_BYTES),
  );
  const ratios = zipSeconds.map((s, i) => fileSeconds[i] / s);
  const ratio = median(ratios);
  return {
    name: `zip of ${FOLDER_FILES.toLocaleString('en-US')} files, ${(FOLDER_BYTES / GiB).toFixed(0)} GiB in all`,
    figure: `${mbps(FOLDER_BYTES, median(zipSeconds)).toFixed(0)} MB/s`,
    ceiling: `${mbps(FOLDER_BYTES, median(fileSeconds)).toFixed(0)} MB/s (one file)`,
    ratio: `${(ratio * 100).toFixed(0)} %`,
    bar: `≥ ${THROUGHPUT_BAR * 100} %`,
    pass: ratio >= THROUGHPUT_BAR,
  };
}

async function manyEntriesRow(subject: Subject, folder: string, files: number): Promise<Row> {
  const url = `${subject.base}/folders/download/${folder}`;
  process.stderr.write(`RSS before the many-entry zip's warm-up: ${(currentRss(subject.pid) / MB).toFixed(0)} MB\n`);
  resetPeakRss(subject.pid);
  const warm = await curlTimed(url, subject.auth);
  process.stderr.write(
    `warm-up: peak ${(peakRss(subject.pid) / MB).toFixed(0)} MB, then ${(currentRss(subject.pid) / MB).toFixed(0)} MB\n`,
  );
  if (warm.status !== 200) throw new Error(`the many-entry zip answered ${warm.status}`);
  resetPeakRss(subject.pid);
  const run = await curlTimed(url, subject.auth);
  const rss = peakRss(subject.pid);
  if (run.status !== 200 || run.bytes !== warm.bytes) throw new Error(`the many-entry zip answered ${run.status} with ${run.bytes} bytes`);
  return {
    name: `zip of ${files.toLocaleString('en-US')} files of 1 KiB: first byte; peak RSS`,
    figure: `${(run.firstByte * 1000).toFixed(0)} ms; ${(rss / MB).toFixed(0)} MB (whole archive ${run.total.toFixed(1)} s)`,
    ceiling: '—',
    ratio: '—',
    bar: `< ${MANY_TTFB_BAR_S * 1000} ms; < ${RSS_BAR / MB} MB`,
    pass: run.firstByte < MANY_TTFB_BAR_S && rss < RSS_BAR,
  };
}

async function bigArchiveRows(subject: Subject, options: ZipOptions): Promise<Row[]> {
  const folder = await createFolder(subject, 'zip past 4 GiB');
  await uploadedFile(subject, options.work, folder, 'big entry.bin', BIG_ENTRY);
  await uploadedFile(subject, options.work, folder, 'second.bin', BIG_SECOND);
  const saved = path.join(options.work, 'big.zip');
  process.stderr.write(`RSS before the big zip, after its uploads: ${(currentRss(subject.pid) / MB).toFixed(0)} MB\n`);
  resetPeakRss(subject.pid);
  const got = await curlTimed(`${subject.base}/folders/download/${folder}`, subject.auth, saved);
  const rss = peakRss(subject.pid);
  const checks = toolChecks(saved);
  await fsp.rm(saved);
  const size = `${(got.bytes / GiB).toFixed(2)} GiB`;
  return [
    {
      name: `zip of ${size} (an entry of ${(BIG_ENTRY / GiB).toFixed(1)} GiB): peak RSS`,
      figure: `${(rss / MB).toFixed(0)} MB at ${mbps(got.bytes, got.total).toFixed(0)} MB/s`,
      ceiling: '—',
      ratio: '—',
      bar: `< ${RSS_BAR / MB} MB`,
      pass: got.status === 200 && rss < RSS_BAR,
    },
    {
      name: `zip of ${size}: unzip -t, 7z t, zipdetails`,
      figure: checks.map((c) => `${c.tool} ${c.ok ? 'ok' : 'FAILED'}`).join(', '),
      ceiling: '—',
      ratio: '—',
      bar: 'all accept it',
      pass: checks.every((c) => c.ok),
    },
  ];
}

function toolChecks(file: string): { tool: string; ok: boolean }[] {
  const env = { ...process.env, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' };
  const run = (tool: string, args: string[], expect: RegExp) => {
    try {
      const out = execFileSync(tool, args, { env, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
      return { tool, ok: expect.test(out) };
    } catch (error) {
      process.stderr.write(`${tool} refused ${file}: ${(error as Error).message}\n`);
      return { tool, ok: false };
    }
  };
  return [
    run('unzip', ['-t', file], /No errors detected/),
    run('7z', ['t', file], /Everything is Ok/),
    run('bash', ['-c', 'set -o pipefail; zipdetails "$0" | { grep -ciE "warning|unexpected|overlap|error" || true; }', file], /^0\s*$/),
  ].map((c, i) => (i === 2 ? { ...c, tool: 'zipdetails' } : c));
}
