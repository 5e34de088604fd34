#!/usr/bin/env node
// The test command: checks the import rules (npm run lint:deps, .dependency-cruiser.cjs), then runs
// every test file under test/ against SQLite, and against PostgreSQL when it answers. With CI=true a
// missing PostgreSQL fails the run instead of being skipped. A run of named files
// (npm test -- test/x.test.ts) skips the import rules.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';

const pgUrl = process.env.COFFRE_TEST_DATABASE_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const inCi = /^(1|true)$/i.test(process.env.CI ?? '');

async function postgresAnswers(url) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch (error) {
    process.stderr.write(`PostgreSQL at ${url.replace(/:[^:@/]*@/, ':***@')} does not answer: ${error.message}\n`);
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

function findTests(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return findTests(full);
    return entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

const args = process.argv.slice(2);

// The import rules first (about a second and a half): a violation fails the run before any test.
if (args.length === 0) {
  const check = spawnSync('npm', ['run', '--silent', 'lint:deps'], { stdio: 'inherit', shell: process.platform === 'win32' });
  if (check.status !== 0) {
    process.stderr.write(
      `\nnpm test: the import rules failed (npm run lint:deps, exit ${check.status ?? check.signal ?? check.error?.message}); ` +
        'see the violations above and the rule comments in .dependency-cruiser.cjs. No test was run.\n',
    );
    process.exit(1);
  }
}

const dialects = ['sqlite'];
if (await postgresAnswers(pgUrl)) {
  dialects.push('postgres');
} else if (inCi) {
  process.stderr.write('CI=true: the PostgreSQL suite is mandatory. Start PostgreSQL or set COFFRE_TEST_DATABASE_URL.\n');
  process.exit(1);
} else {
  process.stderr.write('Running the SQLite suite only. Start PostgreSQL (or set COFFRE_TEST_DATABASE_URL) to run both.\n');
}

// Every PostgreSQL schema of this run starts with t_<runId>_; they are dropped when the run ends.
const runId = `r${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;

async function dropRunSchemas() {
  if (!dialects.includes('postgres')) return;
  const client = new pg.Client({ connectionString: pgUrl });
  try {
    await client.connect();
    const { rows } = await client.query('select schema_name from information_schema.schemata where schema_name like $1', [
      `t\\_${runId}\\_%`,
    ]);
    for (const { schema_name: name } of rows) await client.query(`drop schema if exists "${name}" cascade`);
  } catch (error) {
    process.stderr.write(`could not drop the test schemas: ${error.message}\n`);
  } finally {
    await client.end().catch(() => {});
  }
}

const files = args.length > 0 ? args : findTests('test').sort();
process.stdout.write(`Test dialects: ${dialects.join(', ')}; ${files.length} test files\n`);
// A test that hangs fails after ten minutes instead of holding the run until CI gives up; the
// whole run is stopped after 80 minutes.
const TEST_TIMEOUT_MS = 10 * 60_000;
const RUN_TIMEOUT_MS = 80 * 60_000;
const testEnv = { ...process.env, COFFRE_TEST_DIALECTS: dialects.join(','), COFFRE_TEST_DATABASE_URL: pgUrl, COFFRE_TEST_RUN_ID: runId };

const child = spawn(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', `--test-timeout=${TEST_TIMEOUT_MS}`, '--test-reporter=spec', ...files],
  { stdio: 'inherit', env: testEnv },
);
const watchdog = setTimeout(() => {
  process.stderr.write(`\nnpm test: the run took over ${RUN_TIMEOUT_MS / 60_000} minutes; stopping it.\n`);
  child.kill('SIGTERM');
}, RUN_TIMEOUT_MS);
watchdog.unref();
const code = await new Promise((resolve) => child.on('exit', (status, signal) => resolve(status ?? (signal ? 1 : 0))));
clearTimeout(watchdog);
await dropRunSchemas();
process.exit(code);
