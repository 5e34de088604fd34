import path from 'node:path';
import type { Config } from '../config.js';
import type { BlobStore } from './blob-store.js';
import { FsBlobStore } from './fs/fs-blob-store.js';
import { S3BlobStore } from './s3/s3-blob-store.js';

/** The blob store the configuration names (COFFRE_BLOB_STORE). */
export function openBlobStore(config: Config): BlobStore {
  const spec = config.blobStore;
  if (spec.kind === 's3') {
    const { kind: _kind, partSize, queueSize, ...location } = spec;
    return new S3BlobStore(location, { partSize, queueSize });
  }
  return new FsBlobStore(path.join(config.dataDir, 'blobs'));
}
