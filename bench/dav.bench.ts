/**
 * The WebDAV rows of `npm run bench` (issue 31), against Coffre's own API and a peer WebDAV server
 * measured in the same run:
 * - PUT and GET of 1 GiB through /dav/ against the API's raw upload and download of the same
 *   bytes (curl, pinned to the load core, as the transfer rows), and the server's peak RSS meanwhile;
 * - PROPFIND Depth 1 of a collection of 10,000 files, requests per second (autocannon), against
 *   `rclone serve webdav` over a local folder holding the same files;
 * - `rclone copy` of 1,000 files of 4 KiB into each server, files per second.
 * The peer runs free on both cores like Coffre, signs in with --user/--pass (Basic, as Coffre's
 * app password), neither encrypts nor fsyncs, and is stopped at the end.
 */
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { request } from 'undici';
import { cannon, putMany } from './api-rows.js';
import { createFolder, type Subject } from './files.bench.js';
import {
  GiB,
  LOAD_CORE,
  alternate,
  freePages,
  makeFile,
  mbps,
  median,
  currentRss,
  peakRss,
  resetPeakRss,
  startProcess,
  stopProcess,
  timeDownload,
  timeUpload,
  waitFor,
  type Row,
} from './lib.js';

export interface DavOptions {
  work: string;
  /** A free port for the peer (`rclone serve webdav`). */
  peerPort: number;
  size?: number;
  rounds?: number;
}

/** A WebDAV server as the rows see it: where it is and how to sign in (Basic). */
interface DavServer {
  origin: string;
  /** The path of a collection the rows may write into (Coffre: the `default` bucket). */
  prefix: string;
  /** origin + prefix */
  url: string;
  user: string;
  password: string;
  authorization: string;
}

const DAV_ROUNDS = Number(process.env.BENCH_DAV_ROUNDS ?? 3);
const DAV_SECONDS = Number(process.env.BENCH_DAV_SECONDS ?? 10);
const PROPFIND_FILES = Number(process.env.BENCH_DAV_PROPFIND_FILES ?? 10_000);
const COPY_FILES = Number(process.env.BENCH_DAV_COPY_FILES ?? 1_000);
const PROPFIND_CONNECTIONS = 4;
const COPY_TRANSFERS = 4;
// autocannon 8 refuses any method outside RFC 7231's list (lib/httpMethods.js, an array it
// checks each request against); WebDAV's PROPFIND is added to that same array.
const autocannonMethods = createRequire(import.meta.url)('autocannon/lib/httpMethods') as string[];
if (!autocannonMethods.includes('PROPFIND')) autocannonMethods.push('PROPFIND');
const OCTETS = { 'content-type': 'application/octet-stream' };
const PEER = 'rclone serve webdav, no encryption, no fsync';

/** How the WebDAV rows measure, for the note under the table. */
export function davMethod(): string {
  const rclone = execFileSync('rclone', ['version'], { encoding: 'utf8' }).split('\n')[0].trim();
  return (
    `WebDAV rows (issue 31): Coffre signed in with Basic (e-mail and an app password); PUT and GET of the file size through /dav/ against the API's raw upload and download in the same rounds (curl, as the transfer rows: one warm-up, then alternating rounds, median of the rounds' ratios; both downloads read the same file), peak server RSS over the WebDAV transfers (reset before each). ` +
    `The peer is ${rclone} \`serve webdav\` over a local folder (Basic with --user/--pass), which neither encrypts nor fsyncs. ` +
    `PROPFIND Depth 1 without a body (allprop, as rclone lists), autocannon, ${PROPFIND_CONNECTIONS} connections, ${DAV_ROUNDS} alternating rounds of ${DAV_SECONDS} s; ` +
    `\`rclone copy\` pinned to the load core, the remote given only by environment, --transfers ${COPY_TRANSFERS}, into a new collection each time, ${DAV_ROUNDS} alternating rounds after one warm-up, files/s over the command's wall time. ` +
    `rclone 1.60's WebDAV backend waits 10 ms between any two calls and makes three calls a file (MKCOL, PUT, PROPFIND), which caps a copy near 33 files/s on either server; the informational row puts the same files with undici and no pacer.`
  );
}

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const sinceSeconds = (started: bigint) => Number(process.hrtime.bigint() - started) / 1e9;
const pct = (ratio: number) => `${(ratio * 100).toFixed(0)} %`;
/** A rate with a decimal when it is small (a PROPFIND of 10,000 entries runs a few a second). */
const perSecond = (value: number) => value.toFixed(value < 10 ? 1 : 0);

/** A row of two rates measured round by round (higher is better): the ratio is the median of the rounds'. */
function versus(name: string, ours: number[], theirs: number[], unit: string, peer: string, bar: number | null): Row {
  const ratios = ours.map((rate, i) => rate / theirs[i]);
  process.stderr.write(
    `${name}: ${ours.map((r, i) => `${perSecond(r)}/${perSecond(theirs[i])}`).join(', ')} ${unit} (${ratios.map(pct).join(', ')})\n`,
  );
  const ratio = median(ratios);
  return {
    name,
    figure: `${perSecond(median(ours))} ${unit}`,
    ceiling: `${perSecond(median(theirs))} ${unit} (${peer})`,
    ratio: pct(ratio),
    bar: bar === null ? '—' : `≥ ${bar * 100} %`,
    pass: bar === null ? null : ratio >= bar,
  };
}

function rssRow(name: string, rss: number, bar: boolean): Row {
  return {
    name,
    figure: `${(rss / 1e6).toFixed(0)} MB`,
    ceiling: '200 MB',
    ratio: pct(rss / 200e6),
    bar: bar ? '< 200 MB' : '—',
    pass: bar ? rss < 200e6 : null,
  };
}

/** Every WebDAV row, the peer started for them and stopped at the end. */
export async function davRows(subject: Subject & { email: string }, options: DavOptions): Promise<Row[]> {
  const tokenRes = await request(`${subject.base}/auth/tokens`, {
    method: 'POST',
    headers: { ...subject.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench WebDAV' }),
  });
  const appPassword = ((await tokenRes.body.json()) as any).data.token as string;
  const origin = new URL(subject.base).origin;
  const coffre: DavServer = {
    origin,
    prefix: '/dav/default',
    url: `${origin}/dav/default`,
    user: subject.email,
    password: appPassword,
    authorization: basic(subject.email, appPassword),
  };
  const peerDir = path.join(options.work, 'rclone-peer');
  await fsp.mkdir(peerDir, { recursive: true });
  const peerPassword = 'bench peer password';
  const peer: DavServer = {
    origin: `http://127.0.0.1:${options.peerPort}`,
    prefix: '',
    url: `http://127.0.0.1:${options.peerPort}`,
    user: 'bench',
    password: peerPassword,
    authorization: basic('bench', peerPassword),
  };
  const peerArgs = ['serve', 'webdav', peerDir, '--addr', `127.0.0.1:${options.peerPort}`, '--user', peer.user, '--pass', peer.password];
  const peerProcess = startProcess([...peerArgs, '--config', '/dev/null', '--log-level', 'ERROR'], {}, 'rclone');
  try {
    await waitFor(`${peer.url}/`);
    const rows = await transferRows(subject, coffre, options);
    resetPeakRss(subject.pid);
    rows.push(...(await propfindRows(subject, coffre, peer, peerDir)));
    rows.push(...(await copyRows(coffre, peer, options.work)));
    rows.push(rssRow('WebDAV · Peak server RSS, PROPFIND and rclone copy rows', peakRss(subject.pid), false));
    return rows;
  } finally {
    await stopProcess(peerProcess);
  }
}

/**
 * PUT and GET of SIZE bytes through /dav/ against the API's raw upload and download, as the
 * transfer rows do it (one unmeasured round, then rounds alternating which side goes first,
 * `sync` and freed page-cache pages before each upload). Both downloads read the same file.
 * The peak RSS is the server's during the WebDAV transfers (reset before each).
 */
async function transferRows(subject: Subject, coffre: DavServer, options: DavOptions): Promise<Row[]> {
  const size = options.size ?? Number(process.env.BENCH_FILE_BYTES ?? GiB);
  const rounds = options.rounds ?? Number(process.env.BENCH_ROUNDS ?? 5);
  const { base, auth, pid } = subject;
  const folderName = `dav-transfers-${Date.now()}`;
  const folder = await createFolder(subject, folderName);
  const source = path.join(options.work, 'dav-source.bin');
  const scratch = path.join(options.work, 'dav-scratch.bin');
  const davUrl = `${coffre.url}/${folderName}/dav.bin`;
  const davAuth = { authorization: coffre.authorization };
  await makeFile(source, size);
  // Each transfer's own peak (the high-water mark reset before it), the API's too, for comparison.
  const peaks = { dav: 0, api: 0 };
  const tracked = async (side: 'dav' | 'api', what: string, measure: () => Promise<number>) => {
    const before = currentRss(pid);
    resetPeakRss(pid);
    const seconds = await measure();
    const peak = peakRss(pid);
    peaks[side] = Math.max(peaks[side], peak);
    process.stderr.write(
      `${side} ${what}: ${mbps(size, seconds).toFixed(0)} MB/s, RSS ${(before / 1e6).toFixed(0)} MB before, peak ${(peak / 1e6).toFixed(0)} MB\n`,
    );
    return mbps(size, seconds);
  };
  let fileId = '';
  const davUp = async () => {
    await freePages(source, scratch);
    const rate = await tracked('dav', 'PUT', () => timeUpload(davUrl, source, { ...davAuth, ...OCTETS }));
    if (!fileId) {
      const list = await request(`${base}/files/list/${folder}`, { headers: auth });
      fileId = ((await list.body.json()) as any).data.data.find((f: { name: string }) => f.name === 'dav.bin').id as string;
    }
    return rate;
  };
  const apiUp = async () => {
    await freePages(source, scratch);
    return tracked('api', 'upload', () => timeUpload(`${base}/files/upload/${folder}?name=api.bin`, source, { ...auth, ...OCTETS }));
  };
  const davDown = () => tracked('dav', 'GET', () => timeDownload(davUrl, davAuth, size));
  const apiDown = () => tracked('api', 'download', () => timeDownload(`${base}/files/download/${fileId}`, auth, size));
  // Warm-up, unmeasured (see transferRows in files.bench.ts: a fresh path runs 30-40 % slower).
  await alternate(1, davUp, apiUp);
  await alternate(1, davDown, apiDown);
  const up = await alternate(rounds, davUp, apiUp);
  const down = await alternate(rounds, davDown, apiDown);
  await fsp.rm(source);
  const gib = `${+(size / GiB).toFixed(3)} GiB`;
  return [
    versus(`WebDAV · PUT ${gib} (curl)`, up.a, up.b, 'MB/s', 'API raw upload of the same bytes', 0.9),
    versus(`WebDAV · GET ${gib} (curl)`, down.a, down.b, 'MB/s', 'API download of the same file', 0.9),
    {
      ...rssRow(`WebDAV · Peak server RSS, PUT and GET of ${gib}`, peaks.dav, true),
      ceiling: `200 MB (API's transfers, same rounds: ${(peaks.api / 1e6).toFixed(0)} MB)`,
    },
  ];
}

const fileName = (i: number) => `f-${String(i).padStart(5, '0')}.txt`;

/**
 * PROPFIND Depth 1 of a collection of PROPFIND_FILES tiny files (64 bytes: uploaded through the
 * API to Coffre, 16 at a time; written into the peer's folder), autocannon with
 * PROPFIND_CONNECTIONS connections, rounds alternating which server goes first.
 */
async function propfindRows(subject: Subject, coffre: DavServer, peer: DavServer, peerDir: string): Promise<Row[]> {
  const body = Buffer.alloc(64, 'x');
  const folder = await createFolder(subject, 'propfind');
  const api = new URL(subject.base);
  const seeding = process.hrtime.bigint();
  await putMany(
    api.origin,
    (i) => `${api.pathname}/files/upload/${folder}?name=${fileName(i)}`,
    { ...subject.auth, ...OCTETS },
    body,
    PROPFIND_FILES,
    16,
  );
  process.stderr.write(`WebDAV: ${PROPFIND_FILES} files uploaded to Coffre for PROPFIND in ${sinceSeconds(seeding).toFixed(1)} s\n`);
  await fsp.mkdir(path.join(peerDir, 'propfind'));
  for (let i = 0; i < PROPFIND_FILES; i++) await fsp.writeFile(path.join(peerDir, 'propfind', fileName(i)), body);
  // No body: allprop, the RFC's default and what rclone itself sends to list a folder.
  const headers = (server: DavServer) => ({ authorization: server.authorization, depth: '1' });
  const options = { method: 'PROPFIND', connections: PROPFIND_CONNECTIONS };
  for (const server of [coffre, peer]) {
    // Both answer every member: the rates compare the same listing.
    const res = await request(`${server.url}/propfind/`, { method: 'PROPFIND', headers: headers(server), reset: true });
    const members = ((await res.body.text()).match(/<(\w+:)?response>/gi) ?? []).length;
    if (res.statusCode !== 207 || members !== PROPFIND_FILES + 1)
      throw new Error(`PROPFIND of ${server.url}/propfind/ answered ${res.statusCode} with ${members} responses`);
  }
  const rate = (server: DavServer, seconds: number) => cannon(`${server.url}/propfind/`, headers(server), seconds, options);
  await rate(coffre, 1);
  await rate(peer, 1);
  const runs = await alternate(
    DAV_ROUNDS,
    () => rate(coffre, DAV_SECONDS),
    () => rate(peer, DAV_SECONDS),
  );
  const row = versus(
    `WebDAV · PROPFIND Depth 1 (allprop) of ${PROPFIND_FILES.toLocaleString('en-US')} files, ${PROPFIND_CONNECTIONS} connections (autocannon)`,
    runs.a.map((r) => r.rps),
    runs.b.map((r) => r.rps),
    'req/s',
    PEER,
    0.5,
  );
  row.figure += `, p99 ${median(runs.a.map((r) => r.p99))} ms`;
  return [row];
}

/**
 * `rclone copy` of COPY_FILES files of 4 KiB into a new collection of each server: the remote
 * given only through the environment, the same flags for both, rclone pinned to the load core.
 * Files per second are COPY_FILES over the command's wall time.
 */
async function copyRows(coffre: DavServer, peer: DavServer, work: string): Promise<Row[]> {
  const source = path.join(work, 'rclone-source');
  await fsp.mkdir(source, { recursive: true });
  for (let i = 0; i < COPY_FILES; i++) await fsp.writeFile(path.join(source, fileName(i)), Buffer.alloc(4096, i % 251));
  const copy = (server: DavServer) => async (round: number) => {
    const env = {
      RCLONE_CONFIG_BENCHDAV_TYPE: 'webdav',
      RCLONE_CONFIG_BENCHDAV_URL: server.url,
      RCLONE_CONFIG_BENCHDAV_VENDOR: 'other',
      RCLONE_CONFIG_BENCHDAV_USER: server.user,
      RCLONE_CONFIG_BENCHDAV_PASS: execFileSync('rclone', ['obscure', server.password], { encoding: 'utf8' }).trim(),
    };
    execFileSync('sync');
    const started = process.hrtime.bigint();
    execFileSync(
      'taskset',
      ['-c', LOAD_CORE, 'rclone', 'copy', source, `benchdav:copy-${round}`, '--config', '/dev/null', '--transfers', String(COPY_TRANSFERS)],
      { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] },
    );
    return COPY_FILES / sinceSeconds(started);
  };
  await alternate(
    1,
    () => copy(coffre)(-1),
    () => copy(peer)(-1),
  );
  const runs = await alternate(DAV_ROUNDS, copy(coffre), copy(peer));
  // rclone 1.60's WebDAV backend waits at least 10 ms between any two of its calls (its pacer,
  // shared by all transfers; no flag sets it before 1.62) and copies a file in three calls (MKCOL
  // of the folder, PUT, PROPFIND of the file): about 33 files/s, whatever the server. The same
  // files PUT straight, as many clients as rclone's transfers, show what the servers take.
  const body = Buffer.alloc(4096, 7);
  const puts = (server: DavServer) => async (round: number) => {
    const made = await request(`${server.url}/put-${round}/`, {
      method: 'MKCOL',
      headers: { authorization: server.authorization },
      reset: true,
    });
    await made.body.dump();
    if (made.statusCode !== 201) throw new Error(`MKCOL ${server.url}/put-${round}/ answered ${made.statusCode}`);
    execFileSync('sync');
    const headers = { authorization: server.authorization, ...OCTETS };
    const pathFor = (i: number) => `${server.prefix}/put-${round}/${fileName(i)}`;
    return COPY_FILES / (await putMany(server.origin, pathFor, headers, body, COPY_FILES, COPY_TRANSFERS));
  };
  await alternate(
    1,
    () => puts(coffre)(-1),
    () => puts(peer)(-1),
  );
  const direct = await alternate(DAV_ROUNDS, puts(coffre), puts(peer));
  const files = `${COPY_FILES.toLocaleString('en-US')} files of 4 KiB`;
  return [
    versus(`WebDAV · rclone copy of ${files}, --transfers ${COPY_TRANSFERS}`, runs.a, runs.b, 'files/s', PEER, 0.5),
    versus(
      `WebDAV · PUT of ${files}, ${COPY_TRANSFERS} clients (undici, without rclone's pacer)`,
      direct.a,
      direct.b,
      'files/s',
      PEER,
      null,
    ),
  ];
}
