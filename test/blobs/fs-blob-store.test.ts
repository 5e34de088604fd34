import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FsBlobStore } from '../../src/blobs/fs/fs-blob-store.js';
import { blobStoreContract } from './blob-store.contract.js';

function listFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? listFiles(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

blobStoreContract('fs', async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'coffre-blobs-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  return { store: new FsBlobStore(root), listAll: async () => listFiles(root) };
});
