/**
 * bench:files — encrypted upload and download against bare node:http streaming the same bytes,
 * peak server RSS on a 4 GiB file, and the latency of a 1 KiB range at the end of 1 GiB.
 *
 * The server under test and the ceiling server run as child processes free on both cores; this
 * process (the load) is pinned to core 1. Prints a markdown table, writes bench/results/files.md,
 * exits 1 when a bar is missed.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { GiB, LOAD_CORE, ROOT, benchUser, makeFile, mbps, median, peakRss, pin, renderTable, resetPeakRss, startCommand, startProcess, timeDownload, timeUpload, waitFor, type Row } from './lib.js';

const SIZE = Number(process.env.BENCH_FILE_BYTES ?? GiB);
const BIG = Number(process.env.BENCH_BIG_FILE_BYTES ?? 4 * GiB);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

async function main() {
  pin(LOAD_CORE);
  const work = await fsp.mkdtemp(path.join(os.tmpdir(), 'coffre-bench-'));
  const source = path.join(work, 'source.bin');
  const big = path.join(work, 'big.bin');
  const rows: Row[] = [];
  const children: ChildProcess[] = [];
  try {
    await makeFile(source, SIZE);

    // Ceiling: bare node:http, same bytes, unencrypted.
    const ceilingPort = 18000 + Math.floor(Math.random() * 1000);
    // The ceiling runs with the same environment settings (malloc tuning) as the server.
    const start = startCommand();
    children.push(startProcess([path.join(ROOT, 'bench', 'bare-file-server.mjs')], { ...start.env, PORT: String(ceilingPort), BARE_DIR: work }));
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
    const { auth, root } = await benchUser(base);

    // Ceiling and subject alternate, ROUNDS times, each upload starting with no dirty pages left
    // by the previous one (`sync`): the VM disk's write-back otherwise lands on whoever runs next.
    // Which of the two goes first swaps every round. The VM's disk and memory make absolute
    // figures drift several-fold within a run, so each round gives a ratio of its own (subject
    // against the ceiling measured just before or after it) and the table shows the median ratio,
    // beside the median figures.
    const times = { bareUp: [] as number[], bareDown: [] as number[], up: [] as number[], down: [] as number[] };
    let fileId = '';
    const uploadCeiling = async (round: number) => {
      execFileSync('sync');
      // A new file each round, as Coffre stores each upload as a new blob: overwriting one file
      // would let the ceiling reuse the page-cache pages it just freed, while fresh pages cost
      // several times more to fill on this VM (2-3 s of kernel time per GiB once free memory
      // has been handed back to the host).
      times.bareUp.push(await timeUpload(`http://127.0.0.1:${ceilingPort}/upload/bare-${round}.bin`, source, {}));
    };
    const uploadSubject = async () => {
      execFileSync('sync');
      times.up.push(await timeUpload(`${base}/files/upload/${root}?name=one.bin`, source, { ...auth, 'content-type': 'application/octet-stream' }));
      if (!fileId) {
        const list = await request(`${base}/files/list/${root}`, { headers: auth });
        fileId = ((await list.body.json()) as any).data.data[0].id as string;
      }
    };
    const downloadCeiling = async (round: number) => {
      times.bareDown.push(await timeDownload(`http://127.0.0.1:${ceilingPort}/download/bare-${round}.bin`, {}, SIZE));
    };
    const downloadSubject = async () => {
      times.down.push(await timeDownload(`${base}/files/download/${fileId}`, auth, SIZE));
    };
    for (let round = 0; round < ROUNDS; round++) {
      if (round % 2 === 0) {
        await uploadCeiling(round);
        await uploadSubject();
        await downloadCeiling(round);
        await downloadSubject();
      } else {
        await uploadSubject();
        await uploadCeiling(round);
        await downloadSubject();
        await downloadCeiling(round);
      }
    }
    const [bareUp, bareDown, upSeconds, downSeconds] = [times.bareUp, times.bareDown, times.up, times.down].map(median);
    for (const [name, list] of Object.entries(times)) process.stderr.write(`${name}: ${list.map((t) => mbps(SIZE, t).toFixed(0)).join(', ')} MB/s\n`);
    const upRatios = times.up.map((t, i) => times.bareUp[i] / t);
    const downRatios = times.down.map((t, i) => times.bareDown[i] / t);
    process.stderr.write(`upload ratios: ${upRatios.map((r) => (r * 100).toFixed(0)).join(', ')} %; download ratios: ${downRatios.map((r) => (r * 100).toFixed(0)).join(', ')} %\n`);

    const upRatio = median(upRatios);
    const downRatio = median(downRatios);
    rows.push({ name: `Encrypted upload, ${SIZE / GiB} GiB`, figure: `${mbps(SIZE, upSeconds).toFixed(0)} MB/s`, ceiling: `${mbps(SIZE, bareUp).toFixed(0)} MB/s`, ratio: `${(upRatio * 100).toFixed(0)} %`, bar: '≥ 70 %', pass: upRatio >= 0.7 });
    rows.push({ name: `Decrypted download, ${SIZE / GiB} GiB`, figure: `${mbps(SIZE, downSeconds).toFixed(0)} MB/s`, ceiling: `${mbps(SIZE, bareDown).toFixed(0)} MB/s`, ratio: `${(downRatio * 100).toFixed(0)} %`, bar: '≥ 60 %', pass: downRatio >= 0.6 });

    // A 1 KiB range at the end of the file.
    const latencies: number[] = [];
    for (let i = 0; i < 60; i++) {
      const start = process.hrtime.bigint();
      const res = await request(`${base}/files/download/${fileId}`, { headers: { ...auth, range: `bytes=${SIZE - 1024}-${SIZE - 1}` } });
      const body = Buffer.from(await res.body.arrayBuffer());
      if (res.statusCode !== 206 || body.length !== 1024) throw new Error(`range answered ${res.statusCode}`);
      if (i >= 10) latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    latencies.sort((a, b) => a - b);
    const p50 = latencies[Math.floor(latencies.length / 2)];
    rows.push({ name: '1 KiB range at the end of the file (p50, client-side)', figure: `${p50.toFixed(2)} ms`, ceiling: '10 ms', ratio: `${((p50 / 10) * 100).toFixed(0)} %`, bar: '< 10 ms', pass: p50 < 10 });

    // Peak RSS while a 4 GiB file goes up and comes back.
    await fsp.rm(source);
    await makeFile(big, BIG);
    resetPeakRss(server.pid!);
    process.stderr.write(`RSS before the ${BIG / GiB} GiB round trip: ${(peakRss(server.pid!) / 1e6).toFixed(0)} MB\n`);
    await timeUpload(`${base}/files/upload/${root}?name=big.bin`, big, { ...auth, 'content-type': 'application/octet-stream' });
    process.stderr.write(`peak RSS after the upload: ${(peakRss(server.pid!) / 1e6).toFixed(0)} MB\n`);
    const list2 = await request(`${base}/files/list/${root}?sort=size&order=desc`, { headers: auth });
    const bigId = ((await list2.body.json()) as any).data.data[0].id as string;
    await timeDownload(`${base}/files/download/${bigId}`, auth, BIG);
    const rss = peakRss(server.pid!);
    rows.push({ name: `Peak server RSS, ${BIG / GiB} GiB up and down`, figure: `${(rss / 1e6).toFixed(0)} MB`, ceiling: '200 MB', ratio: `${((rss / 200e6) * 100).toFixed(0)} %`, bar: '< 200 MB', pass: rss < 200e6 });
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await sleep(300);
    await fsp.rm(work, { recursive: true, force: true });
  }

  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const table = renderTable(
    `bench:files — ${new Date().toISOString()} — ${cpu}, ${os.cpus().length} cores, Node ${process.version}`,
    `Servers (Coffre on SQLite started as \`npm start\` runs it, and the bare node:http ceiling with the same environment) free on both cores; load (curl for transfers, undici for API calls) pinned to core ${LOAD_CORE}. Transfers: ${ROUNDS} rounds (ceiling and Coffre back to back, the order swapped each round, \`sync\` before each upload); figures are medians, the ratio is the median of the rounds' ratios.`,
    rows,
  );
  process.stdout.write(`${table}\n`);
  await fsp.mkdir(path.join(ROOT, 'bench', 'results'), { recursive: true });
  await fsp.writeFile(path.join(ROOT, 'bench', 'results', 'files.md'), `${table}\n`);
  if (rows.some((r) => r.pass === false)) process.exitCode = 1;
}

await main();
