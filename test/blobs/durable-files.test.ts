import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { nodeFsDurableFiles, type DurableFiles } from '../../src/blobs/fs/durable-files.js';
import { chooseEngine } from '../../src/content/choose-engine.js';
import { requireNativeAddon } from '../support/native.js';

// The native engine's jobs and node:fs must behave alike: the store takes the engine's.
requireNativeAddon();
const implementations: [string, DurableFiles][] = [
  ['node:fs', nodeFsDurableFiles],
  ['native', chooseEngine('native').durableFiles],
];

it('each engine brings its own durable files', () => {
  assert.equal(chooseEngine('node').durableFiles, nodeFsDurableFiles);
  assert.notEqual(chooseEngine('native').durableFiles, nodeFsDurableFiles);
});

for (const [name, files] of implementations) {
  describe(`durable files (${name})`, () => {
    const scratch = (t: import('node:test').TestContext) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffre-durable-'));
      t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
      return dir;
    };

    it('writes every chunk in order, empty ones and more than one writev takes included, into a new file of mode 0600', async (t) => {
      const dir = scratch(t);
      const cases: Buffer[][] = [
        [],
        [Buffer.alloc(0)],
        [Buffer.from('a'), Buffer.alloc(0), Buffer.from('bc')],
        // More chunks than one writev takes (IOV_MAX, 1024 on Linux).
        Array.from({ length: 2500 }, (_, i) => randomBytes(i % 7)),
        // Views into larger buffers, and one chunk larger than the others together.
        [randomBytes(100).subarray(10, 60), randomBytes(3 * 1024 * 1024 + 5)],
      ];
      for (const [index, chunks] of cases.entries()) {
        const file = path.join(dir, `f${index}`);
        await files.writeFileDurably(file, chunks);
        assert.ok(fs.readFileSync(file).equals(Buffer.concat(chunks)), `case ${index}`);
        assert.equal(fs.statSync(file).mode & 0o777, 0o600);
      }
    });

    it('never overwrites: an existing file is EEXIST and keeps its bytes; a missing folder is ENOENT, as node:fs says them', async (t) => {
      const dir = scratch(t);
      const file = path.join(dir, 'taken');
      fs.writeFileSync(file, 'first');
      await assert.rejects(files.writeFileDurably(file, [Buffer.from('second')]), (error: NodeJS.ErrnoException) => {
        assert.equal(error.code, 'EEXIST');
        assert.equal(error.syscall, 'open');
        assert.equal(error.path, file);
        return true;
      });
      assert.equal(fs.readFileSync(file, 'utf8'), 'first');
      const missing = path.join(dir, 'no', 'such', 'file');
      await assert.rejects(files.writeFileDurably(missing, [Buffer.from('x')]), { code: 'ENOENT' });
      assert.equal(fs.existsSync(path.join(dir, 'no')), false);
    });

    it('renames the synced file into place when asked; a rename that fails says so and leaves the file whole under its first name', async (t) => {
      const dir = scratch(t);
      const data = randomBytes(5000);
      const temp = path.join(dir, 'temp');
      const target = path.join(dir, 'target');
      await files.writeFileDurably(temp, [data.subarray(0, 10), data.subarray(10)], target);
      assert.ok(fs.readFileSync(target).equals(data));
      assert.equal(fs.existsSync(temp), false);

      const nowhere = path.join(dir, 'missing', 'target');
      await assert.rejects(files.writeFileDurably(temp, [data], nowhere), (error: NodeJS.ErrnoException & { dest?: string }) => {
        assert.equal(error.code, 'ENOENT');
        assert.equal(error.syscall, 'rename');
        assert.equal(error.path, temp);
        assert.equal(error.dest, nowhere);
        return true;
      });
      assert.ok(fs.readFileSync(temp).equals(data), 'whole under the temp name');
    });

    it('syncs a directory; a missing one is ENOENT and a file is not a directory', async (t) => {
      const dir = scratch(t);
      await files.syncDirectory(dir);
      await assert.rejects(files.syncDirectory(path.join(dir, 'missing')), { code: 'ENOENT' });
      const file = path.join(dir, 'plain');
      fs.writeFileSync(file, 'x');
      // node:fs opens a file as readily as a directory and fsyncs it; the native job asks for a directory.
      if (name === 'native') await assert.rejects(files.syncDirectory(file), { code: 'ENOTDIR' });
    });
  });
}
