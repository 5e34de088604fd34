import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import type { DatabaseHandle } from '../db/database.js';
import { KeyUnwrapError, unwrapKey } from './key-wrap.js';
import type { Keyring } from './keyring.js';
import { MASTER_KEY_FILE } from './master-key.js';

/**
 * Re-wraps every bucket key under `newMaster`, in one transaction; nothing below the bucket keys
 * changes (folder, file and data keys are wrapped by their parents, link keys by nobody here).
 * Returns how many buckets were re-wrapped. A bucket that already opens with the new key is left
 * as it is, so a rotation interrupted before its commit can simply be run again.
 */
export async function rewrapBucketKeys(database: DatabaseHandle, current: Keyring, newMaster: Buffer): Promise<number> {
  return database.db.transaction().execute(async (trx) => {
    // PostgreSQL: no bucket is created or changed by a running instance while the keys turn over.
    if (database.capabilities.rowLocks) await sql`lock table buckets in exclusive mode`.execute(trx);
    let rewrapped = 0;
    // SQLite takes its write lock at the first update: the second pass catches a bucket created
    // by another process between the first read and that lock.
    for (let pass = 0; pass < 2; pass++) {
      const rows = await trx.selectFrom('buckets').select(['id', 'key_wrapped']).execute();
      for (const row of rows) {
        if (opensWith(newMaster, row.key_wrapped, row.id)) continue;
        const wrapped = current.rewrapBucketKey(row.id, row.key_wrapped, newMaster);
        await trx.updateTable('buckets').set({ key_wrapped: wrapped }).where('id', '=', row.id).execute();
        rewrapped++;
      }
    }
    return rewrapped;
  });
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
export function stageMasterKey(newMaster: Buffer, target: { dataDir: string } | { outFile: string }): { staged: string; commit: () => void } {
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
 * Whether `masterKey` opens the database's bucket keys. An instance started without the
 * deployment's COFFRE_MASTER_KEY (say, one that generated its own into its data folder) would
 * otherwise answer 500 for every file another instance stored. An empty database takes any key.
 */
export async function masterKeyOpens(database: DatabaseHandle, masterKey: Buffer): Promise<boolean> {
  const bucket = await database.db.selectFrom('buckets').select(['id', 'key_wrapped']).orderBy('created_at').limit(1).executeTakeFirst();
  return !bucket || opensWith(masterKey, bucket.key_wrapped, bucket.id);
}
