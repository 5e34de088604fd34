/**
 * bench:files (rows 2, 3, 5 and 6 of `npm run bench`) — encrypted upload and download against bare node:http streaming the same bytes,
 * peak server RSS on a 4 GiB file, and the latency of a 1 KiB range at the end of 1 GiB.
 *
 * The server under test and the ceiling server run as child processes free on both cores; this
 * process (the load) is pinned to core 1. Prints a markdown table, writes bench/results/<date>-files.md,
 * exits 1 when a bar is missed.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import {
  GiB,
  LOAD_CORE,
  ROOT,
  benchUser,
  freePages,
  makeFile,
  mbps,
  median,
  peakRss,
  pin,
  renderTable,
  resetPeakRss,
  startCommand,
  startProcess,
  timeDownload,
  timePostDownload,
  timeUpload,
  waitFor,
  writeResults,
  type Row,
} from './lib.js';

/** A running Coffre server under test, as the row functions see it. */
export interface Subject {
  base: string;
  auth: { authorization: string };
  root: string;
  bucketId: string;
  pid: number;
}

export interface TransferOptions {
  /** Port of a running bare-file-server.mjs whose BARE_DIR is `work`. */
  ceilingPort: number;
  work: string;
  size?: number;
  big?: number;
  rounds?: number;
  /** Also measure the public-link download (row 3) and put it in the RSS phase. */
  link?: boolean;
}

/** Creates a public share link on a file; its hash and link key (the `encryptionKey`). */
export async function shareFile(subject: Subject, fileId: string): Promise<{ hash: string; key: string }> {
  const res = await request(`${subject.base}/files/share/${fileId}`, {
    method: 'POST',
    headers: { ...subject.auth, 'content-type': 'application/json' },
    body: '{}',
  });
  const body = (await res.body.json()) as any;
  if (res.statusCode !== 201) throw new Error(`share answered ${res.statusCode}: ${JSON.stringify(body)}`);
  return { hash: body.data.sharedHash as string, key: new URL(body.data.shareLink as string).hash.slice(1) };
}

/**
 * Rows 2, 3, 5 and 6 of `npm run bench` (and the whole of bench:files): encrypted upload and
 * download of SIZE bytes against the bare ceiling, the public-link download against the owner
 * download, a 1 KiB range at the end, and peak server RSS while a BIG file goes up and comes back.
 */
export async function transferRows(subject: Subject, options: TransferOptions): Promise<Row[]> {
  const SIZE = options.size ?? Number(process.env.BENCH_FILE_BYTES ?? GiB);
  const BIG = options.big ?? Number(process.env.BENCH_BIG_FILE_BYTES ?? 4 * GiB);
  const ROUNDS = options.rounds ?? Number(process.env.BENCH_ROUNDS ?? 5);
  const { base, auth } = subject;
  const { ceilingPort, work } = options;
  const source = path.join(work, 'source.bin');
  const big = path.join(work, 'big.bin');
  const rows: Row[] = [];
  const folder = await createFolder(subject, `transfers-${Date.now()}`);
  await makeFile(source, SIZE);

  // Ceiling and subject alternate, ROUNDS times, each upload starting with no dirty pages left
  // by the previous one (`sync`): the VM disk's write-back otherwise lands on whoever runs next.
  // Each upload also starts right after a copy of the source has been written and deleted, so
  // that both find SIZE bytes of just-freed page-cache pages: pages freed a moment ago are
  // reused at once, while pages the host has taken back cost 2-3 s of kernel time per GiB to
  // fill on this VM. Without it, whoever uploaded first in a round reused the pages of the file
  // deleted at the end of the round before and the second one paid for fresh pages (the bare
  // ceiling alone: 390-600 MB/s on fresh pages, 720-940 MB/s on freed ones), so the round's
  // ratio measured that order more than the servers, and with an odd number of rounds the
  // median took the side that went first more often.
  // Which of the two goes first swaps every round. The VM's disk and memory make absolute
  // figures drift several-fold within a run, so each round gives a ratio of its own (subject
  // against the ceiling measured just before or after it) and the table shows the median ratio,
  // beside the median figures.
  const times = { bareUp: [] as number[], bareDown: [] as number[], up: [] as number[], down: [] as number[], link: [] as number[] };
  let fileId = '';
  let link: { hash: string; key: string } | undefined;
  const scratch = path.join(work, 'scratch.bin');
  const uploadCeiling = async (round: number) => {
    await freePages(source, scratch);
    // A new file each round, as Coffre stores each upload as a new blob: overwriting one file
    // would let the ceiling reuse the page-cache pages it just freed, while fresh pages cost
    // several times more to fill on this VM (2-3 s of kernel time per GiB once free memory
    // has been handed back to the host).
    times.bareUp.push(await timeUpload(`http://127.0.0.1:${ceilingPort}/upload/bare-${round}.bin`, source, {}));
  };
  const uploadSubject = async () => {
    await freePages(source, scratch);
    times.up.push(
      await timeUpload(`${base}/files/upload/${folder}?name=one.bin`, source, { ...auth, 'content-type': 'application/octet-stream' }),
    );
    if (!fileId) {
      const list = await request(`${base}/files/list/${folder}`, { headers: auth });
      fileId = ((await list.body.json()) as any).data.data[0].id as string;
      if (options.link) link = await shareFile(subject, fileId);
    }
  };
  const downloadCeiling = async (round: number) => {
    times.bareDown.push(await timeDownload(`http://127.0.0.1:${ceilingPort}/download/bare-${round}.bin`, {}, SIZE));
  };
  const downloadSubject = async () => {
    times.down.push(await timeDownload(`${base}/files/download/${fileId}`, auth, SIZE));
  };
  const downloadLink = async () => {
    if (link) times.link.push(await timePostDownload(`${base}/files/download/public/${link.hash}`, { encryptionKey: link.key }, SIZE));
  };
  // One unmeasured upload and download on each side first, as the small-upload rows warm up: the
  // first gigabyte through a fresh Coffre ran 30-40 % slower here (2.4-2.5 s of CPU instead of
  // 1.7), paying for its JIT and for the memory its buffers take the first time (fresh pages cost
  // 2-3 s of kernel time per GiB on this VM), which a running server has behind it.
  await uploadCeiling(-1);
  await uploadSubject();
  await downloadCeiling(-1);
  await downloadSubject();
  await downloadLink();
  await fsp.rm(path.join(work, 'bare--1.bin'), { force: true });
  for (const list of Object.values(times)) list.length = 0;
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      await uploadCeiling(round);
      await uploadSubject();
      await downloadCeiling(round);
      await downloadSubject();
      await downloadLink();
    } else {
      await uploadSubject();
      await uploadCeiling(round);
      await downloadLink();
      await downloadSubject();
      await downloadCeiling(round);
    }
    // Each ceiling file is read back once; dropping it keeps the disk use at one file.
    await fsp.rm(path.join(work, `bare-${round}.bin`), { force: true });
  }
  for (const [name, list] of Object.entries(times))
    process.stderr.write(`${name}: ${list.map((t) => mbps(SIZE, t).toFixed(0)).join(', ')} MB/s\n`);
  const upRatios = times.up.map((t, i) => times.bareUp[i] / t);
  const downRatios = times.down.map((t, i) => times.bareDown[i] / t);
  process.stderr.write(
    `upload ratios: ${upRatios.map((r) => (r * 100).toFixed(0)).join(', ')} %; download ratios: ${downRatios.map((r) => (r * 100).toFixed(0)).join(', ')} %\n`,
  );

  const gib = `${+(SIZE / GiB).toFixed(3)} GiB`;
  const upRatio = median(upRatios);
  const downRatio = median(downRatios);
  rows.push({
    name: `Encrypted upload, ${gib}`,
    figure: `${mbps(SIZE, median(times.up)).toFixed(0)} MB/s`,
    ceiling: `${mbps(SIZE, median(times.bareUp)).toFixed(0)} MB/s (bare node:http, fsync)`,
    ratio: `${(upRatio * 100).toFixed(0)} %`,
    bar: '≥ 70 %',
    pass: upRatio >= 0.7,
  });
  rows.push({
    name: `Decrypted download, ${gib}`,
    figure: `${mbps(SIZE, median(times.down)).toFixed(0)} MB/s`,
    ceiling: `${mbps(SIZE, median(times.bareDown)).toFixed(0)} MB/s (bare node:http)`,
    ratio: `${(downRatio * 100).toFixed(0)} %`,
    bar: '≥ 60 %',
    pass: downRatio >= 0.6,
  });
  if (link) {
    const linkRatios = times.link.map((t, i) => times.down[i] / t);
    process.stderr.write(`link ratios: ${linkRatios.map((r) => (r * 100).toFixed(0)).join(', ')} %\n`);
    const linkRatio = median(linkRatios);
    rows.push({
      name: `Public-link download (encryptionKey), ${gib}`,
      figure: `${mbps(SIZE, median(times.link)).toFixed(0)} MB/s`,
      ceiling: `${mbps(SIZE, median(times.down)).toFixed(0)} MB/s (owner download)`,
      ratio: `${(linkRatio * 100).toFixed(0)} %`,
      bar: '≥ 90 %',
      pass: linkRatio >= 0.9,
    });
  }

  // A 1 KiB range at the end of the file.
  const latencies: number[] = [];
  for (let i = 0; i < 60; i++) {
    const start = process.hrtime.bigint();
    const res = await request(`${base}/files/download/${fileId}`, { headers: { ...auth, range: `bytes=${SIZE - 1024}-${SIZE - 1}` } });
    const body = Buffer.from(await res.body.arrayBuffer());
    if (res.statusCode !== 206 || body.length !== 1024) throw new Error(`range answered ${res.statusCode}`);
    if (i >= 10) latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  const p50 = median(latencies);
  rows.push({
    name: `1 KiB range at the end of ${gib} (p50, client-side)`,
    figure: `${p50.toFixed(2)} ms`,
    ceiling: '10 ms',
    ratio: `${((p50 / 10) * 100).toFixed(0)} %`,
    bar: '< 10 ms',
    pass: p50 < 10,
  });

  // Peak RSS while a BIG file goes up and comes back (and through its link).
  await fsp.rm(source);
  await makeFile(big, BIG);
  resetPeakRss(subject.pid);
  process.stderr.write(`RSS before the ${+(BIG / GiB).toFixed(3)} GiB round trip: ${(peakRss(subject.pid) / 1e6).toFixed(0)} MB\n`);
  await timeUpload(`${base}/files/upload/${folder}?name=big.bin`, big, { ...auth, 'content-type': 'application/octet-stream' });
  process.stderr.write(`peak RSS after the upload: ${(peakRss(subject.pid) / 1e6).toFixed(0)} MB\n`);
  await fsp.rm(big);
  const list2 = await request(`${base}/files/list/${folder}?sort=size&order=desc`, { headers: auth });
  const bigId = ((await list2.body.json()) as any).data.data[0].id as string;
  await timeDownload(`${base}/files/download/${bigId}`, auth, BIG);
  if (options.link) {
    const bigLink = await shareFile(subject, bigId);
    await timePostDownload(`${base}/files/download/public/${bigLink.hash}`, { encryptionKey: bigLink.key }, BIG);
  }
  const rss = peakRss(subject.pid);
  const phases = options.link ? 'up, down and by link' : 'up and down';
  rows.push({
    name: `Peak server RSS, ${+(BIG / GiB).toFixed(3)} GiB ${phases}`,
    figure: `${(rss / 1e6).toFixed(0)} MB`,
    ceiling: '200 MB',
    ratio: `${((rss / 200e6) * 100).toFixed(0)} %`,
    bar: '< 200 MB',
    pass: rss < 200e6,
  });
  return rows;
}

/** A new folder under the subject's root; its id. */
export async function createFolder(
  subject: { base: string; auth: { authorization: string }; root: string; bucketId: string },
  name: string,
  parentId?: string,
): Promise<string> {
  const res = await request(`${subject.base}/folders/create/${subject.bucketId}`, {
    method: 'POST',
    headers: { ...subject.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ name, parentId: parentId ?? subject.root }),
  });
  const body = (await res.body.json()) as any;
  if (res.statusCode !== 201) throw new Error(`folder create answered ${res.statusCode}: ${JSON.stringify(body)}`);
  return body.data.id as string;
}

async function main() {
  pin(LOAD_CORE);
  const work = await fsp.mkdtemp(path.join(os.tmpdir(), 'coffre-bench-'));
  const rows: Row[] = [];
  const children: ChildProcess[] = [];
  const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
  try {
    // Ceiling: bare node:http, same bytes, unencrypted.
    const ceilingPort = 18000 + Math.floor(Math.random() * 1000);
    // The ceiling runs with the same environment settings (malloc tuning) as the server.
    const start = startCommand();
    children.push(
      startProcess([path.join(ROOT, 'bench', 'bare-file-server.mjs')], { ...start.env, PORT: String(ceilingPort), BARE_DIR: work }),
    );
    await waitFor(`http://127.0.0.1:${ceilingPort}/ping`);

    // Subject: Coffre from its build, SQLite in a fresh data folder.
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
    const port = ceilingPort + 1;
    const dataDir = path.join(work, 'data');
    const server = startProcess(start.args, {
      ...start.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      COFFRE_DATA_DIR: dataDir,
      COFFRE_REGISTRATION: 'open',
      COFFRE_DEFAULT_QUOTA_BYTES: String(64 * GiB),
      COFFRE_MAX_UPLOAD_BYTES: String(64 * GiB),
      LOG_LEVEL: 'warn',
      DATABASE_URL: '',
    });
    children.push(server);
    const base = `http://127.0.0.1:${port}/api`;
    await waitFor(`http://127.0.0.1:${port}/healthz`);
    const user = await benchUser(base);
    rows.push(...(await transferRows({ base, ...user, pid: server.pid! }, { ceilingPort, work, rounds })));
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await sleep(300);
    await fsp.rm(work, { recursive: true, force: true });
  }

  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const table = renderTable(
    `bench:files — ${new Date().toISOString()} — ${cpu}, ${os.cpus().length} cores, Node ${process.version}`,
    `Servers (Coffre on SQLite started as \`npm start\` runs it, and the bare node:http ceiling with the same environment) free on both cores; load (curl for transfers, undici for API calls) pinned to core ${LOAD_CORE}. Transfers: one unmeasured warm-up round, then ${rounds} rounds (ceiling and Coffre back to back, the order swapped each round, \`sync\` before each upload); figures are medians, the ratio is the median of the rounds' ratios.`,
    rows,
  );
  process.stdout.write(`${table}\n`);
  process.stdout.write(`Written to ${path.relative(ROOT, await writeResults('files', new Date(), table))}\n`);
  if (rows.some((r) => r.pass === false)) process.exitCode = 1;
}

// Run as `npm run bench:files`; imported by bench/bench.ts for its rows.
if (process.argv[1] && path.resolve(process.argv[1]) === new URL(import.meta.url).pathname) await main();
