/**
 * `npm run bench` — every performance bar of the service, each measured as a ratio against a
 * ceiling measured in the same run, on SQLite and then on PostgreSQL (when DATABASE_URL or
 * BENCH_DATABASE_URL points at one). Prints one markdown table, writes it to
 * bench/results/<date>-bench.md with the machine, and exits 1 when a bar is missed.
 *
 * Servers (Coffre started as `npm start` runs it, and the bare ceilings with the same
 * environment and Node flags) run free on both cores; this process, which is the load (autocannon,
 * undici, and curl for the big transfers), is pinned to core 1.
 *
 * Knobs for short development runs: BENCH_FILE_BYTES, BENCH_BIG_FILE_BYTES, BENCH_ROUNDS (transfer
 * rows), BENCH_API_SECONDS, BENCH_API_ROUNDS (row 1), BENCH_SCALE_FILES, BENCH_SCALE_FOLDERS (row 4),
 * BENCH_SMALL_FILES, BENCH_SMALL_ROUNDS, BENCH_SMALL_WARMUP (row 7), BENCH_DAV_ROUNDS, BENCH_DAV_SECONDS, BENCH_DAV_PROPFIND_FILES,
 * BENCH_DAV_COPY_FILES (the WebDAV rows, which also take BENCH_FILE_BYTES and BENCH_ROUNDS), BENCH_TUS_PATCH_BYTES (the tus rows, which also take BENCH_FILE_BYTES and BENCH_ROUNDS), BENCH_ZIP_FILES, BENCH_ZIP_BYTES, BENCH_ZIP_MANY, BENCH_ZIP_BIG_ENTRY, BENCH_ZIP_BIG_SECOND (the zip rows), BENCH_THUMB_PHOTOS, BENCH_THUMB_WIDTH, BENCH_THUMB_HEIGHT, BENCH_THUMB_BODY_BYTES (the thumbnail row), BENCH_ROWS (`1,4,7,7-store,files,dav,tus,zip,thumbs,scale`), BENCH_DIALECTS (`sqlite,postgres`), BENCH_FILES_DIALECTS (where the
 * transfer rows run; default `sqlite`: their work is the blob store's, the database only records).
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { request } from 'undici';
import { openDatabase } from '../src/db/database.js';
import { fetchBodies, metadataRows, scaleRows, searchRows, smallFileRows } from './api-rows.js';
import { davMethod, davRows } from './dav.bench.js';
import { createFolder, transferRows } from './files.bench.js';
import { SCALE_OUT_METHOD, scaleOutRows } from './scale.bench.js';
import { thumbnailRows } from './thumbnails.bench.js';
import { tusMethod, tusRows } from './tus.bench.js';
import { zipMethod, zipRows } from './zip.bench.js';
import {
  GiB,
  LOAD_CORE,
  ROOT,
  benchUser,
  pin,
  renderTable,
  startCommand,
  startProcess,
  stopProcess,
  waitFor,
  writeResults,
  type Row,
} from './lib.js';
import { seedFolder } from './seed.js';

const PG_URL = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || '';
const DIALECTS = (process.env.BENCH_DIALECTS || (PG_URL ? 'sqlite,postgres' : 'sqlite')).split(',');
const FILES_DIALECTS = (process.env.BENCH_FILES_DIALECTS || 'sqlite').split(',');
const SCALE_FILES = Number(process.env.BENCH_SCALE_FILES ?? 1_000_000);
const SCALE_FOLDERS = Number(process.env.BENCH_SCALE_FOLDERS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** Which rows run (development): any of 1, 4, 7, 7-store, `files` (rows 2, 3, 5, 6), `dav`, `tus`, `zip`, `thumbs` and `scale`; default all. */
const ONLY = new Set((process.env.BENCH_ROWS || '1,4,7,7-store,files,dav,tus,zip,thumbs,scale').split(','));
const ZIP_MANY = Number(process.env.BENCH_ZIP_MANY ?? 100_000);
const LABELS: Record<string, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };

const start = startCommand();
const nodeFlags = start.args.slice(0, -1);
const children = new Set<ChildProcess>();

function spawnServer(args: string[], env: Record<string, string>): ChildProcess {
  const child = startProcess(args, { ...start.env, ...env });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

const stop = stopProcess;

const seconds = (since: bigint) => Number(process.hrtime.bigint() - since) / 1e9;
const count = (n: number) => n.toLocaleString('en-US');

/** Uploads a 1 KiB file into `folder`; its id. */
async function uploadTemplate(base: string, auth: Record<string, string>, folder: string): Promise<string> {
  const res = await request(`${base}/files/upload/${folder}?name=template.bin`, {
    method: 'PUT',
    headers: { ...auth, 'content-type': 'application/octet-stream' },
    body: Buffer.alloc(1024, 1),
  });
  return ((await res.body.json()) as any).data.id as string;
}

async function dialectRows(dialect: string, work: string, ceilingPort: number, port: number, notes: string[]): Promise<Row[]> {
  const label = LABELS[dialect] ?? dialect;
  const rows: Row[] = [];
  const masterKey = randomBytes(32);
  const dataDir = path.join(work, `data-${dialect}`);
  let schema: string | undefined;
  let databaseUrl = '';
  let admin: pg.Client | undefined;
  if (dialect === 'postgres') {
    if (!PG_URL) throw new Error('PostgreSQL asked for without DATABASE_URL or BENCH_DATABASE_URL');
    schema = `bench_${randomBytes(4).toString('hex')}`;
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    const url = new URL(PG_URL);
    url.searchParams.set('options', `-c search_path=${schema}`);
    databaseUrl = url.toString();
  }
  const env = {
    PORT: String(port),
    HOST: '127.0.0.1',
    COFFRE_DATA_DIR: dataDir,
    COFFRE_REGISTRATION: 'open',
    COFFRE_MASTER_KEY: masterKey.toString('hex'),
    COFFRE_DEFAULT_QUOTA_BYTES: String(1024 * GiB),
    COFFRE_MAX_UPLOAD_BYTES: String(64 * GiB),
    LOG_LEVEL: 'warn',
    DATABASE_URL: databaseUrl,
  };
  const origin = `http://127.0.0.1:${port}`;
  const base = `${origin}/api`;
  let server = spawnServer(start.args, env);
  try {
    await waitFor(`${origin}/healthz`);
    const user = await benchUser(base);
    const subject = { base, ...user };

    // Row 1's folder: 150 subfolders (a full first page of 100), through the API.
    const listing = await createFolder(subject, 'listing');
    for (let i = 0; i < 150; i++) await createFolder(subject, `sub ${String(i).padStart(3, '0')}`, listing);
    // Row 4's folders: one to seed in bulk (from one template file uploaded here), one empty.
    const big = await createFolder(subject, 'big');
    const empty = await createFolder(subject, 'empty');
    const template = await uploadTemplate(base, user.auth, big);
    const small = await createFolder(subject, 'small');
    // The zip rows' folder of 100,000 small files: copies of one 1 KiB file, seeded below.
    const zipMany = ONLY.has('zip') && FILES_DIALECTS.includes(dialect) ? await createFolder(subject, 'zip of many') : undefined;
    const zipTemplate = zipMany ? await uploadTemplate(base, user.auth, zipMany) : undefined;

    // Seeding goes straight to the database, with the server stopped.
    await stop(server);
    const seedStart = process.hrtime.bigint();
    const database = await openDatabase({
      url: databaseUrl ? PG_URL : null,
      sqliteFile: path.join(dataDir, 'coffre.db'),
      pgSchema: schema,
    });
    try {
      // Only row 4 reads the million files: seeded for other rows, they would slow and skew them.
      if (ONLY.has('4'))
        await seedFolder(database, { masterKey, folderId: big, templateFileId: template, files: SCALE_FILES, folders: SCALE_FOLDERS });
      if (zipMany)
        await seedFolder(database, { masterKey, folderId: zipMany, templateFileId: zipTemplate!, files: ZIP_MANY - 1, folders: 0 });
    } finally {
      await database.close();
    }
    const seedSeconds = seconds(seedStart);
    if (ONLY.has('4')) {
      notes.push(
        `${label}: seeding ${count(SCALE_FILES)} files and ${count(SCALE_FOLDERS)} subfolders through the repositories took ${seedSeconds.toFixed(0)} s.`,
      );
      process.stderr.write(`${notes.at(-1)}\n`);
    }
    server = spawnServer(start.args, env);
    await waitFor(`${origin}/healthz`);

    // Rows 2, 3, 5, 6 first, on the freshly started server: row 5's peak RSS is then the
    // streaming's, not the heap left grown by the request-rate rows.
    if (ONLY.has('files') && FILES_DIALECTS.includes(dialect)) {
      const transfer = await transferRows({ ...subject, pid: server.pid! }, { ceilingPort, work, rounds: ROUNDS, link: true });
      rows.push(...transfer.map((r) => ({ ...r, name: `${label} · ${r.name}` })));
    }
    const restart = async () => {
      await stop(server);
      server = spawnServer(start.args, env);
      await waitFor(`${origin}/healthz`);
    };
    // Issue 31's WebDAV rows, on the same server (ceilingPort + 1 is free for the peer).
    if (ONLY.has('dav') && FILES_DIALECTS.includes(dialect)) {
      const dav = await davRows({ ...subject, pid: server.pid! }, { work, peerPort: ceilingPort + 1, rounds: ROUNDS });
      rows.push(...dav.map((r) => ({ ...r, name: `${label} · ${r.name}` })));
      // Its 10,000-entry PROPFINDs leave a heap of some 500 MB, whose collections then weighed on
      // the request-rate rows (subfolders p99 31 ms instead of 7): those start on a fresh server.
      await restart();
    }
    // Issue 32's tus rows, on a fresh server (the WebDAV rows restarted it): their peak RSS is
    // the tus path's, not a heap the transfer rows left. The request-rate rows then get another.
    if (ONLY.has('tus') && FILES_DIALECTS.includes(dialect)) {
      if (ONLY.has('files') && !ONLY.has('dav')) await restart();
      const tus = await tusRows({ ...subject, pid: server.pid! }, { work, rounds: ROUNDS });
      rows.push(...tus.map((r) => ({ ...r, name: `${label} · ${r.name}` })));
      await restart();
    }

    // Issue 33's zip rows, on a fresh server (the previous rows restarted it), which they leave to a new one.
    if (zipMany) {
      if (!ONLY.has('tus') && (ONLY.has('files') || ONLY.has('dav'))) await restart();
      const zip = await zipRows({ ...subject, pid: server.pid! }, { work, rounds: ROUNDS, manyFolderId: zipMany, manyFiles: ZIP_MANY });
      rows.push(...zip.map((r) => ({ ...r, name: `${label} · ${r.name}` })));
      await restart();
    }

    // Row 1: the ceiling serves Coffre's own answers for the same URLs.
    const paths = [
      { name: 'GET /folders/details/{id}', path: `/api/folders/details/${listing}` },
      { name: 'GET /folders/{id}/subfolders (page of 100)', path: `/api/folders/${listing}/subfolders?limit=100` },
    ];
    if (ONLY.has('1')) {
      const bodyFile = path.join(work, `bodies-${dialect}.json`);
      await fsp.writeFile(
        bodyFile,
        JSON.stringify(
          await fetchBodies(
            origin,
            paths.map((p) => p.path),
            user.auth,
          ),
        ),
      );
      const jsonPort = port + 1;
      const ceiling = spawnServer([...nodeFlags, path.join(ROOT, 'bench', 'bare-json-server.mjs')], {
        PORT: String(jsonPort),
        BARE_JSON_FILE: bodyFile,
      });
      try {
        await waitFor(`http://127.0.0.1:${jsonPort}/ping`);
        rows.push(...(await metadataRows(subject, `http://127.0.0.1:${jsonPort}`, paths, dialect === 'postgres' ? 0.1 : 0.25, label)));
      } finally {
        await stop(ceiling);
      }
    }

    // Row 4, then the search rows over the same seeded account.
    if (ONLY.has('4')) {
      rows.push(...(await scaleRows(subject, big, empty, label, `${count(SCALE_FILES)} files + ${count(SCALE_FOLDERS)} subfolders`)));
      rows.push(...(await searchRows(subject, label, `${count(SCALE_FILES)} files + ${count(SCALE_FOLDERS)} folders`)));
    }

    // Row 7.
    if (ONLY.has('7')) rows.push(...(await smallFileRows(subject, small, ceilingPort, label)));
    // Row 7 again with every file in the blob store (informational): what keeping small files in
    // the database saves, and where the blob store's own path stands.
    if (ONLY.has('7-store')) {
      await stop(server);
      server = spawnServer(start.args, { ...env, COFFRE_INLINE_BLOB_BYTES: '0' });
      await waitFor(`${origin}/healthz`);
      const inStore = await createFolder(subject, 'small in the store');
      rows.push(...(await smallFileRows(subject, inStore, ceilingPort, label, { inStore: true })));
    }
    // Issue 35's thumbnail row, last: it restarts the server with the thumbnail job off and on.
    if (ONLY.has('thumbs') && FILES_DIALECTS.includes(dialect)) {
      const thumbs = await createFolder(subject, 'thumbnails');
      const restartWith = async (extra: Record<string, string>) => {
        await stop(server);
        server = spawnServer(start.args, { ...env, ...extra });
        await waitFor(`${origin}/healthz`);
        return server.pid!;
      };
      const openServerDatabase = () =>
        openDatabase({ url: databaseUrl ? PG_URL : null, sqliteFile: path.join(dataDir, 'coffre.db'), pgSchema: schema });
      rows.push(...(await thumbnailRows({ ...subject, root: thumbs, restart: restartWith, openDatabase: openServerDatabase }, label)));
    }
  } finally {
    await stop(server);
    if (admin) {
      await admin.query(`drop schema if exists ${schema} cascade`).catch(() => {});
      await admin.end();
    }
    // The data folder stays until the end of the bench, with the rest of `work` (see smallFileRows:
    // deleting its files now would slow the next dialect's file creations).
  }
  return rows;
}

async function main() {
  pin(LOAD_CORE);
  const began = process.hrtime.bigint();
  const work = await fsp.mkdtemp(path.join(os.tmpdir(), 'coffre-bench-all-'));
  const rows: Row[] = [];
  const notes: string[] = [];
  try {
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
    const ceilingPort = 17000 + Math.floor(Math.random() * 500) * 2;
    const fileCeiling = spawnServer([path.join(ROOT, 'bench', 'bare-file-server.mjs')], { PORT: String(ceilingPort), BARE_DIR: work });
    await waitFor(`http://127.0.0.1:${ceilingPort}/ping`);
    let port = ceilingPort + 2;
    for (const dialect of DIALECTS) {
      rows.push(...(await dialectRows(dialect, work, ceilingPort, port, notes)));
      port += 2;
    }
    await stop(fileCeiling);
    if (ONLY.has('dav')) notes.push(davMethod());
    if (ONLY.has('tus')) notes.push(tusMethod());
    if (ONLY.has('zip')) notes.push(zipMethod());
    // Issue 8's informational rows: the S3 store against s3rver, and two instances against one.
    if (ONLY.has('scale') && DIALECTS.includes('postgres')) {
      rows.push(...(await scaleOutRows()).map((r) => ({ ...r, name: `PostgreSQL + s3rver · ${r.name}` })));
      notes.push(SCALE_OUT_METHOD);
    }
  } finally {
    await Promise.all([...children].map(stop));
    await fsp.rm(work, { recursive: true, force: true });
  }

  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const load = execFileSync('sh', ['-c', 'command -v taskset || true'], { encoding: 'utf8' }).trim()
    ? `pinned to core ${LOAD_CORE} (taskset)`
    : 'unpinned (no taskset)';
  const ran = FILES_DIALECTS.filter((d) => DIALECTS.includes(d))
    .map((d) => LABELS[d] ?? d)
    .join(', ');
  const table = renderTable(
    `npm run bench — ${new Date().toISOString()} — ${cpu}, ${os.cpus().length} cores, Node ${process.version}; ${DIALECTS.map((d) => LABELS[d] ?? d).join(' and ')}; ${(seconds(began) / 60).toFixed(1)} min`,
    [
      `Servers (Coffre started as \`npm start\` runs it — its environment and Node flags — and the bare ceilings with the same environment) run free on both cores; the load runs in the bench process, ${load}: autocannon for the request rates (${process.env.BENCH_API_ROUNDS ?? 3} alternating rounds of ${process.env.BENCH_API_SECONDS ?? 4} s each side, median ratio), undici for latencies and small uploads (${process.env.BENCH_SMALL_WARMUP ?? 2000} uploads each side to warm up, then ${process.env.BENCH_SMALL_ROUNDS ?? 3} alternating rounds, median ratio), curl for the big transfers (one upload and download each side to warm up, then ${ROUNDS} alternating rounds, \`sync\` before each upload, median of the rounds' ratios).`,
      `Transfer rows (upload, download, link download, range, peak RSS) ran on: ${ran || 'none'} (their work is the blob store's; the database only records metadata).`,
      'Small uploads are raw PUTs of 4 KiB, which Coffre keeps encrypted in the database by default (COFFRE_INLINE_BLOB_BYTES, up to 64 KiB): one commit each, grouped; the informational row "every file in the blob store" runs the same against a server started with COFFRE_INLINE_BLOB_BYTES=0 (an uploading row committed, the file written and fsynced, its directory fsynced, then the file recorded).',
      ...notes,
    ].join(' '),
    rows,
  );
  process.stdout.write(`${table}\n`);
  process.stdout.write(`Written to ${path.relative(ROOT, await writeResults('bench', new Date(), table))}\n`);
  if (rows.some((r) => r.pass === false)) process.exitCode = 1;
}

await main();
