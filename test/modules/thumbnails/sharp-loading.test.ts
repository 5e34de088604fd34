// sharp (libvips) is loaded by the first thumbnail, not when the server starts: a server that
// never makes one keeps libvips out of its resident memory (docs/performance.md, zip archives). Each test
// file runs in a process of its own, so nothing else here has loaded it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { build, signUp } from '../../helper.js';
import { putFile, rootFolderId } from '../../support/files.js';

const sharpMapped = () => /sharp|libvips/.test(fs.readFileSync('/proc/self/maps', 'utf8'));

describe('sharp loading', () => {
  it('a started server serving files has not loaded libvips', async (t) => {
    const { app } = await build(t, 'sqlite');
    const owner = await signUp(app, 'Owner');
    const file = await putFile(app, owner, await rootFolderId(owner), 'notes.txt', 'hello');
    assert.equal((await owner.api.get(`/api/files/preview/${file.id}`)).status, 200);
    assert.equal(sharpMapped(), false, 'libvips is mapped before any thumbnail');
    await import('../../../src/modules/thumbnails/thumbnail-render.js').then((m) =>
      m.renderThumbnail(Buffer.from('not an image'), { maxPixels: 1e6, seconds: 5 }).catch(() => undefined),
    );
    assert.equal(sharpMapped(), true, 'the first thumbnail loads it');
  });
});
