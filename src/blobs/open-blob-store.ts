import path from 'node:path';
import type { Config } from '../config.js';
import type { BlobStore } from './blob-store.js';
import type { DurableFiles } from './fs/durable-files.js';
import { FsBlobStore } from './fs/fs-blob-store.js';

/**
 * The blob store the configuration names (COFFRE_BLOB_STORE); a filesystem store makes its small
 * files durable with `files` (the crypto engine's). The S3 store is loaded only when
 * named: the AWS SDK alone adds tens of megabytes to the resident memory of every process loading it.
 */
export async function openBlobStore(config: Config, files?: DurableFiles): Promise<BlobStore> {
  const spec = config.blobStore;
  if (spec.kind === 's3') {
    const { S3BlobStore } = await import('./s3/s3-blob-store.js');
    const { kind: _kind, partSize, queueSize, ...location } = spec;
    return new S3BlobStore(location, { partSize, queueSize });
  }
  return new FsBlobStore(path.join(config.dataDir, 'blobs'), { files });
}
