/**
 * What the benchmarks share: starting servers as `npm start` runs them, pinning the load to one
 * core, timing transfers with curl, and the result table.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import fs from 'node:fs';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';

export const GiB = 1024 ** 3;
export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
export const LOAD_CORE = '1';

export interface Row {
  name: string;
  figure: string;
  ceiling: string;
  ratio: string;
  bar: string;
  /** null: informational, no bar to pass. */
  pass: boolean | null;
}

export function pin(core: string) {
  try {
    execFileSync('taskset', ['-cp', core, String(process.pid)], { stdio: 'ignore' });
  } catch {
    // taskset missing: the table says unpinned
  }
}

/**
 * The 8 MiB block every benchmark body repeats (a multiplicative hash of the offset: cheap to make,
 * no run of equal bytes). Made once, never written to, so bodies can send slices of it as they are.
 */
let pattern: Buffer | undefined;
export function bodyPattern(): Buffer {
  if (!pattern) {
    pattern = Buffer.alloc(8 * 1024 * 1024);
    for (let i = 0; i < pattern.length; i += 4) pattern.writeUInt32LE((i * 2654435761) >>> 0, i);
  }
  return pattern;
}

export async function makeFile(file: string, size: number) {
  const chunk = bodyPattern();
  const handle = await fsp.open(file, 'w');
  for (let written = 0; written < size; written += chunk.length) await handle.write(chunk, 0, Math.min(chunk.length, size - written));
  await handle.close();
}

/**
 * The server starts exactly as `npm start` runs it (its environment settings and Node flags
 * included), without npm in between, so the measured process is the server itself.
 */
export function startCommand(): { args: string[]; env: Record<string, string> } {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const words = String(pkg.scripts.start).trim().split(/\s+/);
  const env: Record<string, string> = {};
  while (/^[A-Z_]+=/.test(words[0])) {
    const [name, ...value] = words.shift()!.split('=');
    env[name] = value.join('=');
  }
  if (words.shift() !== 'node') throw new Error(`bench:files expects "start" to run node, found: ${pkg.scripts.start}`);
  return { args: words, env };
}

/**
 * Servers run free on every core: this process is pinned to the load core, and a child inherits
 * its parent's affinity, so the child's is widened again (taskset execs node: same pid).
 */
export function startProcess(args: string[], env: Record<string, string>, command = process.execPath): ChildProcess {
  const allCores = `0-${os.cpus().length - 1}`;
  return spawn('taskset', ['-c', allCores, command, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

/** Ends a child process (SIGTERM) and waits for it to exit. */
export async function stopProcess(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

export async function waitFor(url: string) {
  for (let i = 0; i < 200; i++) {
    try {
      const res = await request(url);
      await res.body.dump();
      return;
    } catch {
      await sleep(100);
    }
  }
  throw new Error(`${url} never answered`);
}

/** A memory figure of /proc/<pid>/status (Linux), in bytes. */
function statusBytes(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)![1]) * 1024;
}

export const peakRss = (pid: number) => statusBytes(pid, 'VmHWM');
export const currentRss = (pid: number) => statusBytes(pid, 'VmRSS');

export function resetPeakRss(pid: number) {
  // Writing 5 to clear_refs resets VmHWM (Linux), so each phase gets its own peak.
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    // not permitted: the peak then covers the whole run, which is stricter
  }
}

/**
 * Transfers run through curl (pinned to the load core): a single undici client on one core tops
 * out near 700 MB/s on loopback, below what the bare ceiling serves, which would flatter the ratio.
 */
export function curl(args: string[]): { seconds: number; status: number; bytes: number } {
  const out = execFileSync(
    'taskset',
    ['-c', LOAD_CORE, 'curl', '-s', '-o', '/dev/null', '-w', '%{time_total} %{http_code} %{size_download}', ...args],
    { encoding: 'utf8' },
  );
  const [seconds, status, bytes] = out.trim().split(' ').map(Number);
  return { seconds, status, bytes };
}

export async function timeUpload(url: string, file: string, headers: Record<string, string>): Promise<number> {
  const res = curl(['-T', file, ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]), url]);
  if (res.status >= 300) throw new Error(`upload answered ${res.status}`);
  return res.seconds;
}

export async function timeDownload(url: string, headers: Record<string, string>, expected: number): Promise<number> {
  const res = curl([...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]), url]);
  if (res.status !== 200 || res.bytes !== expected) throw new Error(`download answered ${res.status} with ${res.bytes} bytes`);
  return res.seconds;
}

/** A download through a POST with a JSON body (public link downloads). */
export async function timePostDownload(url: string, body: unknown, expected: number): Promise<number> {
  const res = curl(['-X', 'POST', '-H', 'content-type: application/json', '--data-binary', JSON.stringify(body), url]);
  if (res.status !== 200 || res.bytes !== expected) throw new Error(`download answered ${res.status} with ${res.bytes} bytes`);
  return res.seconds;
}

/**
 * Before an upload: no dirty pages left by the previous one (`sync`: the VM disk's write-back
 * otherwise lands on whoever runs next), and the size of `source` in just-freed page-cache pages
 * (a copy written and deleted), which are reused at once, while pages the host has taken back
 * cost 2-3 s of kernel time per GiB to fill on these VMs. See transferRows.
 */
export async function freePages(source: string, scratch: string) {
  execFileSync('sync');
  await fsp.copyFile(source, scratch);
  await fsp.rm(scratch);
}

/**
 * `rounds` rounds of two measurements, the order swapped every round (`a` first in even rounds),
 * so that drift and whatever the first leaves to the second land on both sides alike.
 */
export async function alternate<T>(
  rounds: number,
  a: (round: number) => Promise<T>,
  b: (round: number) => Promise<T>,
): Promise<{ a: T[]; b: T[] }> {
  const out = { a: [] as T[], b: [] as T[] };
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      out.a.push(await a(round));
      out.b.push(await b(round));
    } else {
      out.b.push(await b(round));
      out.a.push(await a(round));
    }
  }
  return out;
}

export const mbps = (bytes: number, seconds: number) => bytes / seconds / 1e6;
export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** The table every benchmark prints: a title line, a note, then one row per figure. */
export function renderTable(title: string, note: string, rows: Row[]): string {
  return [
    title,
    note,
    '',
    '| Row | Figure | Ceiling | Ratio | Bar | Result |',
    '|---|---|---|---|---|---|',
    ...rows.map(
      (r) => `| ${r.name} | ${r.figure} | ${r.ceiling} | ${r.ratio} | ${r.bar} | ${r.pass === null ? 'info' : r.pass ? 'pass' : 'FAIL'} |`,
    ),
  ].join('\n');
}

/**
 * Writes a run's table to `bench/results/<UTC date and time>-<name>.md`: one file per run, so a
 * run worth keeping is committed as it is and never overwritten by the next one.
 */
export async function writeResults(name: string, at: Date, table: string): Promise<string> {
  const stamp = at.toISOString().slice(0, 16).replace(':', '');
  const file = path.join(ROOT, 'bench', 'results', `${stamp}Z-${name}.md`);
  await fsp.mkdir(path.dirname(file), { recursive: true });
  await fsp.writeFile(file, `${table}\n`);
  return file;
}

/** Signs up the benchmark's account on a fresh server; its bearer header and root folder id. */
export async function benchUser(
  api: string,
  email = 'bench@example.com',
): Promise<{ auth: { authorization: string }; root: string; bucketId: string; email: string }> {
  const reg = await request(`${api}/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'bench password', name: 'Bench' }),
  });
  const token = ((await reg.body.json()) as any).data.accessToken as string;
  const auth = { authorization: `Bearer ${token}` };
  const rootRes = await request(`${api}/folders/root/subfolders`, { headers: auth });
  const parent = ((await rootRes.body.json()) as any).data.parentFolder;
  return { auth, root: parent.id as string, bucketId: parent.bucketId as string, email };
}
