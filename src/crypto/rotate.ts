import fs from 'node:fs';
import path from 'node:path';
import { KeyUnwrapError, unwrapKey } from './key-wrap.js';
import type { Keyring } from './keyring.js';
import { MASTER_KEY_FILE } from './master-key.js';

/**
 * The bucket key `wrapped` (of bucket `bucketId`) re-wrapped under `newMaster`, or null when it
 * already opens with the new key, so that a rotation interrupted before its commit can simply be
 * run again. Nothing below the bucket keys changes: folder, file and data keys are wrapped by
 * their parents. The buckets repository's rewrapBucketKeys runs it over every bucket.
 */
export function rewrapUnder(current: Keyring, newMaster: Buffer, bucketId: string, wrapped: string): string | null {
  return opensWith(newMaster, wrapped, bucketId) ? null : current.rewrapBucketKey(bucketId, wrapped, newMaster);
}

function opensWith(master: Buffer, wrapped: string, bucketId: string): boolean {
  try {
    unwrapKey(master, wrapped, bucketId);
    return true;
  } catch (error) {
    if (error instanceof KeyUnwrapError) return false;
    throw error;
  }
}

/**
 * Where the new master key goes before the database commits, so it is never lost: the file the
 * key was read from (through `<file>.new`, renamed over it once the rotation has committed), or
 * a new file of the operator's when the key comes from COFFRE_MASTER_KEY.
 */
export function stageMasterKey(
  newMaster: Buffer,
  target: { dataDir: string } | { outFile: string },
): { staged: string; commit: () => void } {
  const text = `${newMaster.toString('hex')}\n`;
  if ('outFile' in target) {
    fs.writeFileSync(target.outFile, text, { mode: 0o600, flag: 'wx' });
    return { staged: target.outFile, commit: () => {} };
  }
  const file = path.join(target.dataDir, MASTER_KEY_FILE);
  const staged = `${file}.new`;
  fs.writeFileSync(staged, text, { mode: 0o600 });
  const handle = fs.openSync(staged, 'r');
  fs.fsyncSync(handle);
  fs.closeSync(handle);
  return { staged, commit: () => fs.renameSync(staged, file) };
}

/**
 * Whether `masterKey` opens the database's bucket keys, given one of them (the buckets
 * repository's oldestBucketKey). An instance started without the deployment's COFFRE_MASTER_KEY
 * (say, one that generated its own into its data folder) would otherwise answer 500 for every
 * file another instance stored. An empty database (no bucket) takes any key.
 */
export function masterKeyOpens(masterKey: Buffer, bucket: { id: string; key_wrapped: string } | undefined): boolean {
  return !bucket || opensWith(masterKey, bucket.key_wrapped, bucket.id);
}
