import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TestContext } from 'node:test';
import { requireTool } from './dav-clients.js';

const run = promisify(execFile);
const ENV = { ...process.env, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' };

/** The folder of ZipdetailsIndexedSeen.pm, which zipdetails loads for archives of many entries. */
export const ZIPDETAILS_INDEX_DIR = fileURLToPath(new URL('./perl', import.meta.url));

/** The command line of zipdetails, with its overlap bookkeeping indexed or as shipped. */
export function zipdetailsCommand(zipdetails: string, indexed: boolean): string[] {
  return indexed ? ['perl', `-I${ZIPDETAILS_INDEX_DIR}`, '-MZipdetailsIndexedSeen', zipdetails] : [zipdetails];
}

export interface ZipCheckOptions {
  /**
   * For an archive of tens of thousands of entries: zipdetails runs with its duplicate and overlap
   * bookkeeping indexed (test/support/perl/ZipdetailsIndexedSeen.pm), which prints what the tool
   * prints but in seconds instead of the hour its quadratic loop takes.
   */
  indexedOverlaps?: boolean;
}

/**
 * Runs the zip checkers no one here wrote on an archive: `unzip -t`, `7z t` and `zipdetails`, each
 * of which must accept it. A missing tool skips the test, or fails it with CI=true.
 */
export async function checkZipWithTools(t: TestContext, file: string, options: ZipCheckOptions = {}): Promise<void> {
  const unzip = requireTool(t, 'unzip');
  const sevenZip = unzip && requireTool(t, '7z');
  const zipdetails = sevenZip && requireTool(t, 'zipdetails');
  if (!zipdetails) return;
  const big = { env: ENV, maxBuffer: 512 * 1024 * 1024 };
  assert.match((await run(unzip!, ['-t', file], big)).stdout, /No errors detected/);
  assert.match((await run(sevenZip!, ['t', file], big)).stdout, /Everything is Ok/);
  // zipdetails prints every field of every record (hundreds of MB for a big archive) and its
  // complaints among them: only those lines are kept. It fails (exit status) on what it cannot read.
  const script = 'set -o pipefail; "$@" | { grep -iE "warning|unexpected|overlap|matches with|skipping|error" || true; }';
  const command = [...zipdetailsCommand(zipdetails!, options.indexedOverlaps ?? false), file];
  const details = await run('bash', ['-c', script, 'zipdetails', ...command], { env: ENV, maxBuffer: 64 * 1024 * 1024 });
  assert.equal(details.stdout, '', 'zipdetails complains');
}

/** Extracts an archive with unzip into `dir` (UTF-8 names as stored). */
export async function unzipInto(t: TestContext, file: string, dir: string): Promise<boolean> {
  const unzip = requireTool(t, 'unzip');
  if (!unzip) return false;
  await run(unzip, ['-q', file, '-d', dir], { env: ENV });
  return true;
}

/**
 * Has the tools check an archive on disk, extracts it beside itself and returns what it holds:
 * each file's path inside the archive (`/`-separated) and bytes. Null when a tool is missing.
 */
export async function checkedZipFiles(t: TestContext, file: string): Promise<Map<string, Buffer> | null> {
  await checkZipWithTools(t, file);
  const out = `${file}.extracted`;
  if (!(await unzipInto(t, file, out))) return null;
  const files = new Map<string, Buffer>();
  const walk = (dir: string, prefix: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const inside = `${prefix}${entry.name}`;
      if (entry.isDirectory()) walk(path.join(dir, entry.name), `${inside}/`);
      else files.set(inside, fs.readFileSync(path.join(dir, entry.name)));
    }
  };
  walk(out, '');
  return files;
}
