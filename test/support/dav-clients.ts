import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { DialectName } from '../../src/db/database.js';
import { build, signUp, type TestUser } from '../helper.js';
import { tempDir } from './disk.js';
import { freePort, listen } from './raw-http.js';

// The WebDAV clients nobody here wrote (litmus, rclone, cadaver, all Debian packages) driven as
// child processes: finding them, running them without ever hanging, and reading their output.

export const inCi = /^(1|true)$/i.test(process.env.CI ?? '');

/** Where a client's answers are written for the lead to read when a test fails. */
export const RESULTS_DIR = path.resolve('test-results');

/** The absolute path of an executable `name` on PATH, or null. */
export function findTool(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * The path of the client `name` (a Debian package of the same name). Without it the test is
 * skipped with the reason, except with CI=true where it fails: .ci/run installs the clients.
 */
export function requireTool(t: TestContext, name: string): string | null {
  const found = findTool(name);
  if (found) return found;
  assert.ok(!inCi, `${name} is not on PATH with CI=true: .ci/run installs it (apt-get install -y ${name})`);
  t.skip(`${name} is not installed (apt-get install ${name})`);
  return null;
}

/**
 * A minimal environment for a client: the user's HOME (and its .netrc, rclone.conf, proxies in
 * http_proxy…) is never read, and output is UTF-8 whatever the machine's locale.
 */
export function clientEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, TMPDIR: os.tmpdir(), LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', ...extra };
}

export interface RunOptions {
  cwd: string;
  env: Record<string, string>;
  /** Written to the child's stdin, which is then closed. */
  input?: string | Buffer;
  /** The whole process group is killed (SIGKILL) after this long. */
  timeoutMs: number;
}

export interface RunResult {
  commandLine: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  ms: number;
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // the group is gone already
  }
}

/**
 * Runs `command` in a process group of its own with captured output. It never hangs: the group is
 * killed after `timeoutMs`, and again when the test ends (a client's own children included).
 */
export function runProcess(t: TestContext, command: string, args: string[], options: RunOptions): Promise<RunResult> {
  const started = Date.now();
  const commandLine = [command, ...args].map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a))).join(' ');
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  t.after(() => killGroup(child.pid));
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout.on('data', (d: Buffer) => stdout.push(d));
  child.stderr.on('data', (d: Buffer) => stderr.push(d));
  child.stdin.on('error', () => {}); // a client that exits before reading its input
  child.stdin.end(options.input ?? '');
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child.pid);
  }, options.timeoutMs);
  return new Promise((resolve) => {
    const finish = (code: number | null, signal: NodeJS.Signals | null, spawnError?: Error) => {
      clearTimeout(timer);
      resolve({
        commandLine,
        code,
        signal,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8') + (spawnError ? `\n${spawnError.message}` : ''),
        timedOut,
        ms: Date.now() - started,
      });
    };
    child.once('error', (error) => finish(null, null, error));
    child.once('close', (code, signal) => finish(code, signal));
  });
}

/** A run in a few lines for an assertion message: the command, how it ended, the end of its output. */
export function describeRun(result: RunResult, tail = 4000): string {
  const ending = result.timedOut ? `killed after ${result.ms} ms (timeout)` : `exit ${result.code ?? result.signal} after ${result.ms} ms`;
  const cut = (s: string) => (s.length > tail ? `…${s.slice(-tail)}` : s);
  return `${result.commandLine}: ${ending}\n--- stdout ---\n${cut(result.stdout)}\n--- stderr ---\n${cut(result.stderr)}`;
}

/** A WebDAV collection URL (ending in `/`) and the HTTP Basic credentials of its owner. */
export interface DavTarget {
  url: string;
  user: string;
  pass: string;
}

export function basicAuth(target: DavTarget): string {
  return `Basic ${Buffer.from(`${target.user}:${target.pass}`).toString('base64')}`;
}

/**
 * The members of a collection by PROPFIND (Depth: 1): their paths relative to `url`, decoded,
 * collections ending in `/`; the collection itself is left out.
 */
export async function propfindNames(target: DavTarget, url = target.url): Promise<string[]> {
  const response = await fetch(url, {
    method: 'PROPFIND',
    headers: { authorization: basicAuth(target), depth: '1', 'content-type': 'application/xml' },
    body: '<?xml version="1.0" encoding="utf-8"?><propfind xmlns="DAV:"><prop><resourcetype/></prop></propfind>',
    signal: AbortSignal.timeout(30_000),
  });
  const body = await response.text();
  assert.equal(response.status, 207, `PROPFIND ${url}: ${response.status}\n${body.slice(0, 2000)}`);
  const base = new URL(url).pathname;
  const names: string[] = [];
  for (const match of body.matchAll(/<(?:[\w-]+:)?href>([^<]*)<\/(?:[\w-]+:)?href>/g)) {
    const href = new URL(match[1].replace(/&amp;/g, '&'), url).pathname;
    const relative = decodeURIComponent(href).slice(decodeURIComponent(base).length);
    if (relative !== '' && relative !== '/') names.push(relative);
  }
  return names.sort();
}

/** The password `signUp` gives every test user (test/helper.ts). */
const SIGN_UP_PASSWORD = 'correct horse battery';

/**
 * A new user's default bucket over WebDAV on the real server listening on a port of 127.0.0.1:
 * `http://127.0.0.1:<port>/dav/<bucket name>/`, signed in with the account e-mail and password.
 */
export async function coffreDav(t: TestContext, dialect: DialectName): Promise<DavTarget & { app: FastifyInstance; owner: TestUser }> {
  const { app } = await build(t, dialect);
  const owner = await signUp(app, 'Dav Client');
  const port = await listen(app);
  const buckets = await owner.api.get('/api/bucket/list');
  assert.equal(buckets.status, 200, `GET /api/bucket/list: ${buckets.status} ${JSON.stringify(buckets.body)}`);
  const bucket = buckets.body.data.data.find((b: { id: string }) => b.id === owner.defaultBucketId);
  assert.ok(bucket, `the default bucket ${owner.defaultBucketId} is listed: ${JSON.stringify(buckets.body.data)}`);
  const url = `http://127.0.0.1:${port}/dav/${encodeURIComponent(bucket.name)}/`;
  return { url, user: owner.email, pass: SIGN_UP_PASSWORD, app, owner };
}

/** A peer WebDAV server that exists today (`rclone serve webdav` over a temp folder), to check the harness. */
export async function rcloneServe(t: TestContext, rclone: string): Promise<DavTarget & { dir: string }> {
  const dir = tempDir(t, 'rclone-serve');
  const port = await freePort();
  const child = spawn(
    rclone,
    ['serve', 'webdav', dir, '--config', '/dev/null', '--addr', `127.0.0.1:${port}`, '--user', 'u', '--pass', 'p'],
    { env: clientEnv(dir), detached: true, stdio: 'ignore' },
  );
  t.after(() => killGroup(child.pid));
  const url = `http://127.0.0.1:${port}/`;
  const until = Date.now() + 15_000;
  for (;;) {
    const answer = await fetch(url, { method: 'OPTIONS', signal: AbortSignal.timeout(2000) }).catch(() => null);
    if (answer) break;
    assert.ok(Date.now() < until && child.exitCode === null, `rclone serve webdav did not listen on ${url} within 15 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url, user: 'u', pass: 'p', dir };
}

// --- litmus -----------------------------------------------------------------------------------

export const LITMUS_SUITES = ['basic', 'copymove', 'props', 'locks', 'http'] as const;

export interface LitmusSuite {
  name: string;
  /** From the suite's summary line; null when the suite printed none (it crashed or was not run). */
  run: number | null;
  passed: number | null;
  failed: number | null;
}

export interface LitmusTest {
  suite: string;
  number: number;
  name: string;
  result: 'pass' | 'FAIL' | 'SKIPPED' | 'OOPS' | 'unfinished';
  /** The reason litmus gave in parentheses (a FAIL's context), without them. */
  message: string;
  warnings: string[];
}

export interface LitmusReport {
  suites: LitmusSuite[];
  tests: LitmusTest[];
  run: RunResult;
  /** One line per thing that is not a pass: failed, skipped or unfinished tests, suites without a summary. */
  problems: string[];
}

const TEST_LINE = /^\s*(\d+)\. ([A-Za-z0-9_]+)\.* ?(.*)$/;
const RESULT = /^(pass|FAIL|SKIPPED|OOPS)\b ?(.*)$/s;

/**
 * Reads litmus's output: `-> running `suite':`, then per test `NN. name.... result` (printed
 * twice, the second time after a carriage return, with the result), where a FAIL's reason in
 * parentheses may span lines and a warning puts the result on a line of its own
 * (`    ...... pass (with 1 warning)`), then `<- summary for `suite': of N tests run: P passed, F failed.`.
 */
export function parseLitmus(output: string): { suites: LitmusSuite[]; tests: LitmusTest[] } {
  const suites: LitmusSuite[] = [];
  const tests: LitmusTest[] = [];
  let suite: LitmusSuite | null = null;
  let current: LitmusTest | null = null;
  let inMessage = false;
  const settle = (test: LitmusTest, text: string) => {
    const result = RESULT.exec(text.trim());
    if (!result) return;
    test.result = result[1] as LitmusTest['result'];
    test.message = result[2];
    inMessage = test.result !== 'pass';
  };
  // eslint-disable-next-line no-control-regex
  for (const line of output.replace(/\x1b\[[0-9;]*m/g, '').split(/\r\n?|\n/)) {
    const running = /^-> running `([^']+)':/.exec(line);
    const summary = /^<- summary for `([^']+)': of (\d+) tests run: (\d+) passed, (\d+) failed/.exec(line);
    const allSkipped = /^<- all tests skipped for `([^']+)'/.exec(line);
    const start = TEST_LINE.exec(line);
    const aligned = /^\s+\.+ (.*)$/.exec(line);
    if (running) {
      suite = { name: running[1], run: null, passed: null, failed: null };
      suites.push(suite);
      current = null;
      inMessage = false;
    } else if (summary || allSkipped) {
      const name = (summary ?? allSkipped)![1];
      const target = suites.find((s) => s.name === name) ?? suite;
      if (target)
        Object.assign(target, summary ? { run: +summary[2], passed: +summary[3], failed: +summary[4] } : { run: 0, passed: 0, failed: 0 });
      current = null;
      inMessage = false;
    } else if (start && suite) {
      const [, number, name, rest] = start;
      if (!current || current.number !== +number || current.suite !== suite.name) {
        current = { suite: suite.name, number: +number, name, result: 'unfinished', message: '', warnings: [] };
        tests.push(current);
      }
      inMessage = false;
      if (rest.startsWith('WARNING:')) current.warnings.push(rest.slice('WARNING:'.length).trim());
      else settle(current, rest);
    } else if (aligned && current) {
      settle(current, aligned[1]);
    } else if (inMessage && current && !line.startsWith('->') && !line.startsWith('<-')) {
      current.message += `\n${line}`;
    }
  }
  for (const test of tests)
    test.message = test.message
      .trim()
      .replace(/^\(([\s\S]*)\)$/, '$1')
      .trim();
  return { suites, tests };
}

/** Lines naming every test that did not pass and every expected suite without a summary. */
export function litmusProblems(suites: LitmusSuite[], tests: LitmusTest[], expected: readonly string[]): string[] {
  const problems: string[] = [];
  for (const name of expected) {
    const suite = suites.find((s) => s.name === name);
    if (!suite) problems.push(`suite ${name}: never started`);
    else if (suite.run === null) problems.push(`suite ${name}: no summary line (litmus stopped or crashed in it)`);
    else if (suite.failed) problems.push(`suite ${name}: ${suite.failed} of ${suite.run} failed`);
  }
  for (const test of tests) {
    if (test.result === 'pass') continue;
    problems.push(`${test.suite} ${test.number}. ${test.name}: ${test.result}${test.message ? ` (${test.message})` : ''}`);
  }
  return problems;
}

/**
 * Runs the litmus suites against `target.url` (a collection ending in `/`, under which litmus
 * creates and removes `litmus/`), all of them even after a failure (`-k`). Its debug.log (every
 * request and answer) is kept as test-results/<label>-litmus-debug.log when something failed.
 */
export async function runLitmus(
  t: TestContext,
  litmus: string,
  target: DavTarget,
  options: { label: string; suites?: readonly string[]; timeoutMs: number },
): Promise<LitmusReport> {
  assert.ok(target.url.endsWith('/'), `litmus needs a collection URL ending in /: ${target.url}`);
  const suites = options.suites ?? LITMUS_SUITES;
  const cwd = tempDir(t, 'litmus');
  const run = await runProcess(t, litmus, ['-k', target.url, target.user, target.pass], {
    cwd,
    env: clientEnv(cwd, { TESTS: suites.join(' ') }),
    timeoutMs: options.timeoutMs,
  });
  const parsed = parseLitmus(run.stdout);
  const problems = litmusProblems(parsed.suites, parsed.tests, suites);
  if (run.timedOut) problems.unshift(`litmus was killed after ${run.ms} ms (timeout)`);
  if (problems.length > 0 && fs.existsSync(path.join(cwd, 'debug.log'))) {
    fs.mkdirSync(RESULTS_DIR, { recursive: true });
    fs.copyFileSync(path.join(cwd, 'debug.log'), path.join(RESULTS_DIR, `${options.label}-litmus-debug.log`));
  }
  return { ...parsed, run, problems };
}

// --- rclone -----------------------------------------------------------------------------------

/** The totals rclone logs when it ends (`--use-json-log`: the `stats` field of its last stats line). */
export interface RcloneStats {
  transfers: number;
  checks: number;
  deletes: number;
  renames: number;
  errors: number;
  bytes: number;
}

export interface RcloneRun extends RunResult {
  /** The last stats of the run; null when rclone logged none (it failed before the end). */
  stats: RcloneStats | null;
  /** The `msg` of every error-level log line, with its object. */
  errors: string[];
  /** The objects of `Copied (new)`/`Copied (replaced existing)` lines, and of `Deleted` lines. */
  copied: string[];
  deleted: string[];
}

export interface RcloneCheck {
  run: RcloneRun;
  /** `rclone check --combined` lines that are not `= path` (the same on both sides). */
  differences: string[];
  same: number;
}

/** The remote of the rclone client: `coffre:`. */
export const RCLONE_REMOTE = 'coffre';

/**
 * An rclone configured only through the environment (RCLONE_CONFIG_COFFRE_*, WebDAV with vendor
 * `other`, the password obscured as rclone requires) with `--config /dev/null` and a temp HOME,
 * so no configuration of the user's is ever read. Every run logs JSON (`--use-json-log -v`) with
 * one stats line at the end, retries nothing (`--retries 1 --low-level-retries 1`, so a server
 * error is not hidden by a retry that succeeds), and is killed after `timeoutMs`.
 */
export async function rcloneClient(t: TestContext, rclone: string, target: DavTarget) {
  const home = tempDir(t, 'rclone-home');
  const obscured = await runProcess(t, rclone, ['obscure', '-', '--config', '/dev/null'], {
    cwd: home,
    env: clientEnv(home),
    input: target.pass,
    timeoutMs: 20_000,
  });
  assert.equal(obscured.code, 0, `rclone obscure failed: ${describeRun(obscured)}`);
  const prefix = `RCLONE_CONFIG_${RCLONE_REMOTE.toUpperCase()}_`;
  const env = clientEnv(home, {
    [`${prefix}TYPE`]: 'webdav',
    [`${prefix}URL`]: target.url,
    [`${prefix}VENDOR`]: 'other',
    [`${prefix}USER`]: target.user,
    [`${prefix}PASS`]: obscured.stdout.trim(),
  });
  const common = ['--config', '/dev/null', '--use-json-log', '-v', '--stats', '1h', '--retries', '1', '--low-level-retries', '1'];
  common.push('--contimeout', '10s', '--timeout', '60s');

  async function run(args: string[], timeoutMs: number): Promise<RcloneRun> {
    const result = await runProcess(t, rclone, [...args, ...common], { cwd: home, env, timeoutMs });
    let stats: RcloneStats | null = null;
    const errors: string[] = [];
    const copied: string[] = [];
    const deleted: string[] = [];
    for (const line of result.stderr.split('\n')) {
      if (!line.startsWith('{')) continue;
      let entry: { level?: string; msg?: string; object?: string; stats?: RcloneStats };
      try {
        entry = JSON.parse(line);
      } catch {
        continue;
      }
      if (entry.stats) stats = entry.stats;
      if (entry.level === 'error' || entry.level === 'critical') errors.push(`${entry.object ? `${entry.object}: ` : ''}${entry.msg}`);
      if (entry.object && /^Copied \(/.test(entry.msg ?? '')) copied.push(entry.object);
      if (entry.object && entry.msg === 'Deleted') deleted.push(entry.object);
    }
    return { ...result, stats, errors, copied, deleted };
  }

  /** `rclone check` of two trees (`--download` compares the bytes when a side has no hashes). */
  async function check(a: string, b: string, options: { download?: boolean; timeoutMs: number }): Promise<RcloneCheck> {
    const report = path.join(home, `check-${Date.now()}-${Math.random().toString(36).slice(2)}.txt`);
    const args = ['check', a, b, '--combined', report, '--checkers', '8', ...(options.download ? ['--download'] : [])];
    const result = await run(args, options.timeoutMs);
    const lines = fs.existsSync(report) ? fs.readFileSync(report, 'utf8').split('\n').filter(Boolean) : [];
    return { run: result, differences: lines.filter((l) => !l.startsWith('= ')), same: lines.filter((l) => l.startsWith('= ')).length };
  }

  return {
    env,
    run,
    check,
    /** `rclone sync src dst` with `--transfers 4 --checkers 8`. */
    sync: (src: string, dst: string, timeoutMs: number) => run(['sync', src, dst, '--transfers', '4', '--checkers', '8'], timeoutMs),
    /** Every file and folder below `remotePath`, recursively (`rclone lsf -R`), folders ending in `/`. */
    async list(remotePath: string, timeoutMs = 60_000): Promise<string[]> {
      const result = await run(['lsf', '-R', remotePath], timeoutMs);
      assert.equal(result.code, 0, `rclone lsf failed: ${describeRun(result)}`);
      return result.stdout.split('\n').filter(Boolean).sort();
    },
  };
}

/** An rclone run in a few lines: how it ended, its stats and its error lines. */
export function describeRclone(result: RcloneRun): string {
  const errors = result.errors.length ? `\nerrors:\n  ${result.errors.slice(0, 40).join('\n  ')}` : '';
  return `${describeRun(result, 3000)}\nstats: ${JSON.stringify(result.stats)}${errors}`;
}

// --- cadaver ----------------------------------------------------------------------------------

export interface CadaverStep {
  command: string;
  /** What cadaver printed for it (its echo of the command left out). */
  output: string;
  ok: boolean;
}

export interface CadaverSession {
  run: RunResult;
  /** What cadaver printed before its first prompt (a connection or authentication failure shows here). */
  preamble: string;
  steps: CadaverStep[];
}

/** Commands that print nothing when they succeed; the others print `… succeeded.`. */
const CADAVER_SILENT = new Set(['cd', 'lcd', 'set', 'unset', 'quit', 'bye', 'exit']);
/** Commands that say something else than `succeeded.`: discover lists the locks it found. */
const CADAVER_SUCCESS: Record<string, RegExp> = { discover: /Lock token </, showlocks: /Lock token </ };
const CADAVER_FAILURE = /failed|Could not|not WebDAV-enabled|only be used when connected|Unrecognised command|no locks found|error/i;

/**
 * A scripted cadaver session: commands come from stdin (cadaver 0.24 reads them without a tty,
 * with readline echoing each one after its prompt) and the credentials from ~/.netrc (mode 600)
 * in a temp HOME. Local files of put/get are relative to `cwd`. Each prompt starts the answer to
 * the next command, in order: `dav:/path/> `, or `dav:/path/? ` when cadaver is not connected.
 */
export async function runCadaver(
  t: TestContext,
  cadaver: string,
  target: DavTarget,
  commands: string[],
  options: { cwd: string; timeoutMs: number },
): Promise<CadaverSession> {
  // .netrc splits its tokens at whitespace: a password with spaces would reach the server cut short.
  assert.doesNotMatch(target.pass, /\s/, 'cadaver reads the password from .netrc, which cannot hold whitespace: use an app password');
  const home = tempDir(t, 'cadaver-home');
  const netrc = path.join(home, '.netrc');
  fs.writeFileSync(netrc, `machine ${new URL(target.url).hostname}\nlogin ${target.user}\npassword ${target.pass}\n`, { mode: 0o600 });
  fs.chmodSync(netrc, 0o600);
  const script = [...commands, 'quit'];
  const run = await runProcess(t, cadaver, [target.url], {
    cwd: options.cwd,
    env: clientEnv(home),
    input: `${script.join('\n')}\n`,
    timeoutMs: options.timeoutMs,
  });
  const chunks = run.stdout.split(/^dav:[^\n]*?[>?] /m);
  const preamble = chunks.shift() ?? '';
  const steps = script.map((command, i): CadaverStep => {
    const chunk = chunks[i];
    if (chunk === undefined) return { command, output: '(no prompt for it: cadaver ended before)', ok: false };
    const output = (chunk.startsWith(command) ? chunk.slice(command.length) : chunk).trim();
    const verb = command.split(/\s/)[0];
    const success = CADAVER_SUCCESS[verb] ?? /succeeded\./;
    const ok = !CADAVER_FAILURE.test(output) && (CADAVER_SILENT.has(verb) || success.test(output));
    return { command, output, ok };
  });
  return { run, preamble, steps };
}

/** A session in a few lines: each command with ok/FAILED and its output. */
export function describeCadaver(session: CadaverSession): string {
  const steps = session.steps.map((s) => `${s.ok ? 'ok    ' : 'FAILED'} ${s.command}\n         ${s.output.replace(/\n/g, '\n         ')}`);
  return `--- before the first prompt ---\n${session.preamble.trim()}\n--- steps ---\n${steps.join('\n')}\n${describeRun(session.run, 1000)}`;
}
