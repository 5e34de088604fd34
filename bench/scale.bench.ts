/**
 * bench:scale — the scale-out figures (issue 8):
 * - encrypted upload and decrypted download through Coffre with the S3 blob store, against
 *   s3rver's own throughput for the same bytes (one plain PUT and GET, no encryption): what the
 *   S3 path costs on top of the object store;
 * - metadata requests per second with two instances against one, over one PostgreSQL. On a
 *   2-core machine the second instance has no core of its own, so the figure shows the overhead
 *   of running several instances, not a speed-up.
 *
 * s3rver, the Coffre instances and PostgreSQL run free on both cores; this process (the load) is
 * pinned to core 1. Prints a markdown table and writes bench/results/<date>-scale.md. The rows have no
 * bar (the issue gives none): they are informational.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs, { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { Pool, request } from 'undici';
import { newBlobKey } from '../src/blobs/blob-keys.js';
import { S3BlobStore } from '../src/blobs/s3/s3-blob-store.js';
import {
  LOAD_CORE,
  ROOT,
  benchUser,
  makeFile,
  mbps,
  median,
  pin,
  renderTable,
  startCommand,
  startProcess,
  timeDownload,
  timeUpload,
  waitFor,
  writeResults,
  type Row,
} from './lib.js';

// The SDK warns once per process that its releases after January 2027 need Node 22.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const MiB = 1024 ** 2;
const SIZE = Number(process.env.BENCH_S3_FILE_BYTES ?? 256 * MiB);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PG_URL = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const METADATA_SECONDS = Number(process.env.BENCH_METADATA_SECONDS ?? 5);
const METADATA_CONCURRENCY = 32;
const BUCKET = 'coffre-bench';

/** Starts s3rver in a process of its own, as the object store every instance shares. */
async function startS3rver(port: number, dir: string): Promise<ChildProcess> {
  const child = spawn('taskset', ['-c', `0-${os.cpus().length - 1}`, process.execPath, path.join(ROOT, 'bench', 's3rver-server.mjs')], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), S3_DIR: dir, S3_BUCKET: BUCKET },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (text: Buffer) => text.toString().includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`s3rver exited with ${code}`)));
  });
  return child;
}

/** CPU seconds (user + system) a process has used so far (Linux). */
function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** `METADATA_CONCURRENCY` requests kept in flight for `METADATA_SECONDS`, spread over `bases`; answers per second. */
async function metadataRate(bases: string[], paths: string[], token: string): Promise<number> {
  const pools = bases.map((base) => new Pool(base, { connections: METADATA_CONCURRENCY }));
  let done = 0;
  let next = 0;
  const deadline = Date.now() + METADATA_SECONDS * 1000;
  const worker = async () => {
    while (Date.now() < deadline) {
      const i = next++;
      const res = await pools[i % pools.length].request({
        method: 'GET',
        path: paths[i % paths.length],
        headers: { authorization: `Bearer ${token}` },
      });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`metadata request answered ${res.statusCode}`);
      done++;
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: METADATA_CONCURRENCY }, worker));
  const seconds = (Date.now() - started) / 1000;
  await Promise.all(pools.map((p) => p.close()));
  return done / seconds;
}

/** The scale-out rows (informational); `npm run bench` includes them on PostgreSQL. */
export async function scaleOutRows(): Promise<Row[]> {
  pin(LOAD_CORE);
  const work = await fsp.mkdtemp(path.join(os.tmpdir(), 'coffre-bench-scale-'));
  const source = path.join(work, 'source.bin');
  const schema = `bench_scale_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  const rows: Row[] = [];
  const children: ChildProcess[] = [];
  try {
    await makeFile(source, SIZE);
    const basePort = 19000 + Math.floor(Math.random() * 500);
    const s3Port = basePort;
    const s3rver = await startS3rver(s3Port, path.join(work, 's3'));
    children.push(s3rver);
    const s3 = `http://127.0.0.1:${s3Port}`;

    execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
    const start = startCommand();
    const dbUrl = new URL(PG_URL);
    dbUrl.searchParams.set('options', `-c search_path=${schema}`);
    const env = {
      ...start.env,
      HOST: '127.0.0.1',
      DATABASE_URL: dbUrl.toString(),
      COFFRE_BLOB_STORE: `s3://${BUCKET}?endpoint=${encodeURIComponent(s3)}&region=us-east-1&forcePathStyle=true`,
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      COFFRE_MASTER_KEY: randomBytes(32).toString('hex'),
      COFFRE_REGISTRATION: 'open',
      COFFRE_DEFAULT_QUOTA_BYTES: String(64 * 1024 * MiB),
      LOG_LEVEL: 'warn',
    };
    // The first instance migrates the schema; the second starts once it listens.
    const bases: string[] = [];
    const instances: ChildProcess[] = [];
    for (let i = 1; i <= 2; i++) {
      const port = basePort + i;
      const instance = startProcess(start.args, { ...env, PORT: String(port), COFFRE_DATA_DIR: path.join(work, `data-${i}`) });
      children.push(instance);
      instances.push(instance);
      await waitFor(`http://127.0.0.1:${port}/healthz`);
      bases.push(`http://127.0.0.1:${port}`);
    }
    const api = `${bases[0]}/api`;
    const { auth, root } = await benchUser(api);
    const token = auth.authorization.slice('Bearer '.length);

    // Transfers: s3rver alone (one PUT, one GET of the same bytes) and Coffre over it, alternating.
    const times: Record<string, number[]> = { s3Up: [], s3Down: [], up: [], down: [] };
    let fileId = '';
    for (let round = 0; round < ROUNDS; round++) {
      times.s3Up.push(await timeUpload(`${s3}/${BUCKET}/bare-${round}.bin`, source, { 'content-type': 'application/octet-stream' }));
      const cpuBefore = [cpuSeconds(instances[0].pid!), cpuSeconds(s3rver.pid!)];
      times.up.push(
        await timeUpload(`${api}/files/upload/${root}?name=one.bin`, source, { ...auth, 'content-type': 'application/octet-stream' }),
      );
      process.stderr.write(
        `upload ${round}: CPU s coffre ${(cpuSeconds(instances[0].pid!) - cpuBefore[0]).toFixed(2)}, s3rver ${(cpuSeconds(s3rver.pid!) - cpuBefore[1]).toFixed(2)}; wall ${times.up.at(-1)!.toFixed(2)} s\n`,
      );
      if (!fileId)
        fileId = ((await (await request(`${api}/files/list/${root}`, { headers: auth })).body.json()) as any).data.data[0].id as string;
      times.s3Down.push(await timeDownload(`${s3}/${BUCKET}/bare-${round}.bin`, {}, SIZE));
      times.down.push(await timeDownload(`${bases[1]}/api/files/download/${fileId}`, auth, SIZE));
    }
    // The same bytes through the S3 store's own multipart upload from this process, without Coffre:
    // how much of the gap to one plain PUT is s3rver's multipart path (a request, an MD5 and a file
    // per part, then every part copied into the object at completion).
    const plainStore = new S3BlobStore(
      { bucket: BUCKET, prefix: 'plain/', endpoint: s3, region: 'us-east-1', forcePathStyle: true },
      { client: { credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } } },
    );
    const plain: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const started = process.hrtime.bigint();
      await plainStore.put(newBlobKey(), fs.createReadStream(source, { highWaterMark: MiB }));
      plain.push(Number(process.hrtime.bigint() - started) / 1e9);
    }
    await plainStore.close();
    times.multipart = plain;
    for (const [name, list] of Object.entries(times))
      process.stderr.write(`${name}: ${list.map((t) => mbps(SIZE, t).toFixed(0)).join(', ')} MB/s\n`);
    const [s3Up, s3Down, up, down, multipart] = [times.s3Up, times.s3Down, times.up, times.down, times.multipart].map(median);
    const size = `${SIZE / MiB} MiB`;
    rows.push({
      name: `Encrypted upload to S3 (s3rver), ${size}`,
      figure: `${mbps(SIZE, up).toFixed(0)} MB/s`,
      ceiling: `${mbps(SIZE, s3Up).toFixed(0)} MB/s`,
      ratio: `${((s3Up / up) * 100).toFixed(0)} %`,
      bar: '—',
      pass: null,
    });
    rows.push({
      name: `Multipart upload to s3rver without Coffre (S3 store, same parts), ${size}`,
      figure: `${mbps(SIZE, multipart).toFixed(0)} MB/s`,
      ceiling: `${mbps(SIZE, s3Up).toFixed(0)} MB/s`,
      ratio: `${((s3Up / multipart) * 100).toFixed(0)} %`,
      bar: '—',
      pass: null,
    });
    rows.push({
      name: `Decrypted download from S3 (s3rver), ${size}`,
      figure: `${mbps(SIZE, down).toFixed(0)} MB/s`,
      ceiling: `${mbps(SIZE, s3Down).toFixed(0)} MB/s`,
      ratio: `${((s3Down / down) * 100).toFixed(0)} %`,
      bar: '—',
      pass: null,
    });

    // Metadata: a mix of listing, details and the account, on one instance then spread over two.
    const paths = [`/api/folders/root/subfolders`, `/api/files/list/${root}`, `/api/files/details/${fileId}`, `/api/auth/me`];
    await metadataRate(bases, paths, token); // warms both instances up
    // Alternating rounds, so a drift of the machine (the other tenants of a shared VM) lands on both.
    const rates = { one: [] as number[], two: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      rates.one.push(await metadataRate(bases.slice(0, 1), paths, token));
      rates.two.push(await metadataRate(bases, paths, token));
    }
    process.stderr.write(
      `metadata: one ${rates.one.map((r) => r.toFixed(0)).join(', ')}; two ${rates.two.map((r) => r.toFixed(0)).join(', ')} req/s\n`,
    );
    const [one, two] = [median(rates.one), median(rates.two)];
    rows.push({
      name: `Metadata requests, two instances (${METADATA_CONCURRENCY} in flight)`,
      figure: `${two.toFixed(0)} req/s`,
      ceiling: `${one.toFixed(0)} req/s (one instance)`,
      ratio: `${((two / one) * 100).toFixed(0)} %`,
      bar: '—',
      pass: null,
    });
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await sleep(500);
    await admin.query(`drop schema if exists ${schema} cascade`).catch(() => {});
    await admin.end();
    await fsp.rm(work, { recursive: true, force: true });
  }
  return rows;
}

/** How the scale-out rows are measured, for the table's header. */
export const SCALE_OUT_METHOD = `Scale-out rows: Coffre over PostgreSQL and s3rver; transfers: median of ${ROUNDS} alternating rounds, the ceiling is s3rver's own PUT and GET of the same bytes (one request each), the multipart row puts the same bytes through the S3 store from the load process, without Coffre; metadata: the same request mix on one instance, then spread over two (median of ${ROUNDS} alternating rounds of ${METADATA_SECONDS} s; on 2 cores the ratio shows the cost of a second instance, not a speed-up); informational, no bar.`;

async function main() {
  const rows = await scaleOutRows();
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const table = renderTable(
    `bench:scale — ${new Date().toISOString()} — ${cpu}, ${os.cpus().length} cores, Node ${process.version}`,
    `Coffre (started as \`npm start\` runs it) over PostgreSQL and s3rver, all free on both cores; load (curl for transfers, undici for API calls) pinned to core ${LOAD_CORE}. Transfers: median of ${ROUNDS} alternating rounds; the ceiling is s3rver's own PUT and GET of the same bytes (one request each); the multipart row puts the same bytes through the S3 store from the load process, without Coffre. Metadata: the same request mix on one instance, then spread over two (median of ${ROUNDS} alternating rounds of ${METADATA_SECONDS} s); on 2 cores the ratio shows the cost of a second instance, not a speed-up. Informational rows: no bar.`,
    rows,
  );
  process.stdout.write(`${table}\n`);
  process.stdout.write(`Written to ${path.relative(ROOT, await writeResults('scale', new Date(), table))}\n`);
}

// Run as a script (`npm run bench:scale`), not when `npm run bench` imports the rows.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
