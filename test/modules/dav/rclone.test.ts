import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { DIALECTS } from '../../helper.js';
import { coffreDav, describeRclone, rcloneClient, requireTool, type RcloneRun } from '../../support/dav-clients.js';
import { tempDir } from '../../support/disk.js';
import { prng, prngBytes } from '../../support/prng.js';

// rclone (Debian `rclone`, its WebDAV backend with vendor `other`) syncing a tree of 1,000+ files
// up to /dav/ and back: the copy comes back byte for byte, a second sync transfers nothing, and
// local deletions and renames are mirrored.

const MiB = 1024 * 1024;
const FILES = 1040;
// Names of every script the server must carry through URLs and XML: accents (NFC), CJK, Hangul,
// Greek, Cyrillic, emoji, spaces, an ampersand and an apostrophe (escaped in XML), brackets.
const WORDS = [
  'été',
  'naïve façade',
  'Ærøskøbing',
  '日本語',
  '中文 文件',
  '한국어',
  'Ελληνικά',
  'кириллица',
  '😀',
  '🚀 launch',
  'R&D',
  "l'été",
  '(draft) [v2]',
  'plain',
  'a+b',
  'ünïcödé',
];
const EXTENSIONS = ['.txt', '.bin', '.md', '', '.tar.gz', '.json'];

interface Tree {
  files: Map<string, number>;
  folders: string[];
}

/**
 * Mostly small files (a few empty ones, most under 64 KiB), a handful of 1–4 MiB and one of
 * exactly 20 MiB: about 47 MiB in all, so that a sync both ways stays well within two minutes.
 */
function sizeOf(random: () => number, index: number): number {
  if (index === 7) return 20 * MiB;
  if (index % 211 === 3) return MiB + Math.floor(random() * 3 * MiB);
  const roll = random();
  if (roll < 0.05) return 0;
  if (roll < 0.75) return 1 + Math.floor(random() * 4096);
  if (roll < 0.97) return 4096 + Math.floor(random() * 60 * 1024);
  return 64 * 1024 + Math.floor(random() * 448 * 1024);
}

/** A seeded tree of nested folders (up to four deep), each holding at least one file. */
function makeTree(root: string, seed: number): Tree {
  const random = prng(seed);
  const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)];
  const folders = [''];
  for (let i = 0; folders.length < 60; i++) {
    const parent = pick(folders);
    if (parent.split('/').length > 3) continue;
    folders.push(path.posix.join(parent, `${pick(WORDS)} d${i}`));
  }
  const files = new Map<string, number>();
  for (let i = 0; i < FILES; i++) {
    const folder = i < folders.length ? folders[i] : pick(folders);
    const name = path.posix.join(folder, `${pick(WORDS)} ${i}${pick(EXTENSIONS)}`);
    const size = sizeOf(random, i);
    fs.mkdirSync(path.join(root, folder), { recursive: true });
    fs.writeFileSync(path.join(root, name), prngBytes(random, size));
    files.set(name, size);
  }
  return { files, folders: folders.slice(1) };
}

function assertClean(t: TestContext, run: RcloneRun, what: string): void {
  t.diagnostic(`${what}: ${run.ms} ms, ${run.stats?.transfers} transferred, ${run.stats?.deletes} deleted`);
  assert.equal(run.code, 0, `${what}: rclone failed\n${describeRclone(run)}`);
  assert.ok(run.stats, `${what}: rclone logged no stats\n${describeRclone(run)}`);
  assert.equal(run.stats.errors, 0, `${what}: rclone counted errors\n${describeRclone(run)}`);
}

// On the first dialect only: WebDAV reads and writes through the same use cases on both, litmus
// and the dav tests cover each dialect, and this round trip of 1,040 files costs some 80 s a run.
for (const dialect of DIALECTS.slice(0, 1)) {
  describe(`rclone against /dav/ (${dialect})`, () => {
    it(
      `syncs ${FILES} files (0 B to 20 MiB, unicode names) up and back, then mirrors deletions and renames`,
      { timeout: 360_000 },
      async (t) => {
        const rclone = requireTool(t, 'rclone');
        if (!rclone) return;
        const target = await coffreDav(t, dialect);
        const client = await rcloneClient(t, rclone, target);
        const remote = 'coffre:tree';
        const local = tempDir(t, 'rclone-up');
        const tree = makeTree(local, 20_24);
        const total = [...tree.files.values()].reduce((sum, size) => sum + size, 0);
        t.diagnostic(`tree: ${tree.files.size} files in ${tree.folders.length} folders, ${(total / MiB).toFixed(1)} MiB`);

        const up = await client.sync(local, remote, 180_000);
        assertClean(t, up, 'first sync up');
        assert.equal(up.stats!.transfers, tree.files.size, `first sync up: every file transferred\n${describeRclone(up)}`);

        const back = path.join(tempDir(t, 'rclone-back'), 'copy');
        const down = await client.sync(remote, back, 180_000);
        assertClean(t, down, 'sync back down');
        assert.equal(down.stats!.transfers, tree.files.size, `sync back down: every file transferred\n${describeRclone(down)}`);
        // Local against local compares MD5 hashes; local against Coffre downloads every file.
        const copies = await client.check(local, back, { timeoutMs: 120_000 });
        assert.deepEqual(copies.differences, [], `the copy brought back differs\n${describeRclone(copies.run)}`);
        assert.equal(copies.same, tree.files.size);
        const remoteCheck = await client.check(local, remote, { download: true, timeoutMs: 180_000 });
        assert.deepEqual(remoteCheck.differences, [], `the remote differs\n${describeRclone(remoteCheck.run)}`);
        assert.equal(remoteCheck.same, tree.files.size);

        const again = await client.sync(local, remote, 120_000);
        assertClean(t, again, 'second sync up');
        assert.deepEqual(
          [again.stats!.transfers, again.stats!.deletes, again.copied],
          [0, 0, []],
          `a second sync transfers and deletes nothing\n${describeRclone(again)}`,
        );

        // Delete twelve files, rename a file and a folder (with what it holds), then sync again.
        const names = [...tree.files.keys()].filter((name) => tree.files.get(name)! < MiB);
        const deleted = names.filter((_, i) => i % 83 === 5).slice(0, 12);
        for (const name of deleted) fs.rmSync(path.join(local, name));
        const renamedFile = names.find((name) => !deleted.includes(name) && name.includes('/'))!;
        const newFileName = path.posix.join(path.posix.dirname(renamedFile), `renamed ✓ ${path.posix.basename(renamedFile)}`);
        fs.renameSync(path.join(local, renamedFile), path.join(local, newFileName));
        // The folder with the fewest files below it (rclone uploads them again under the new name).
        const below = (folder: string) => [...tree.files.keys()].filter((name) => name.startsWith(`${folder}/`)).length;
        const renamedFolder = tree.folders
          .filter((f) => !renamedFile.startsWith(`${f}/`) && !deleted.some((name) => name.startsWith(`${f}/`)))
          .sort((a, b) => below(a) - below(b))[0];
        const newFolderName = `${renamedFolder} (renamed ✓)`;
        fs.renameSync(path.join(local, renamedFolder), path.join(local, newFolderName));
        const mirrored = await client.sync(local, remote, 120_000);
        assertClean(t, mirrored, 'sync after deleting and renaming');
        const mirrorCheck = await client.check(local, remote, { download: true, timeoutMs: 180_000 });
        assert.deepEqual(mirrorCheck.differences, [], `the remote does not mirror the changes\n${describeRclone(mirrorCheck.run)}`);

        const listed = new Set(await client.list(remote));
        const gone = [...deleted, renamedFile, `${renamedFolder}/`].filter((name) => listed.has(name));
        assert.deepEqual(gone, [], 'deleted and renamed-away names are gone from the remote');
        for (const name of [newFileName, `${newFolderName}/`]) assert.ok(listed.has(name), `${name} is on the remote`);
        const expectedFiles = [...listed].filter((name) => !name.endsWith('/')).length;
        assert.equal(expectedFiles, tree.files.size - deleted.length, 'the remote holds as many files as the local tree');
      },
    );
  });
}
