/**
 * Seeds a folder in bulk for the scale row of `npm run bench`: many subfolders and many files,
 * written through the repositories, straight into the database (the server stopped), in batched
 * multi-row inserts inside transactions. Every row is what the service itself would write: real
 * wrapped keys, file copies of one template file that share its blob (reference counted, as a
 * copy does), the owner's used bytes, and the folder aggregates set once at the end.
 */
import { Keyring, newChildKey } from '../src/crypto/keyring.js';
import type { DatabaseHandle } from '../src/db/database.js';
import type { NewFolder } from '../src/db/schema.js';
import { reserveBytes } from '../src/modules/accounts/accounts.repository.js';
import { cloneFiles, type CloneRequest } from '../src/modules/files/files.lifecycle.js';
import { findFile } from '../src/modules/files/files.repository.js';
import { folderKey } from '../src/modules/folders/folders.keys.js';
import { adjustChain, findFolder, insertFolders } from '../src/modules/folders/folders.repository.js';
import { newId, randomToken } from '../src/lib/ids.js';

export interface SeedOptions {
  masterKey: Buffer;
  folderId: string;
  /** A file already in the folder: the seeded files are copies of it. */
  templateFileId: string;
  files: number;
  folders: number;
  /** Rows per transaction. */
  batch?: number;
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

export async function seedFolder(database: DatabaseHandle, options: SeedOptions): Promise<void> {
  const { db } = database;
  const batch = options.batch ?? 10_000;
  const folder = (await findFolder(db, options.folderId))!;
  const template = (await findFile(db, options.templateFileId))!;
  const key = await folderKey(db, new Keyring(options.masterKey), folder.id);
  const now = new Date().toISOString();

  for (let done = 0; done < options.folders; done += batch) {
    const rows: NewFolder[] = [];
    for (let i = done; i < Math.min(options.folders, done + batch); i++) {
      const id = newId('fld');
      rows.push({
        id,
        bucket_id: folder.bucket_id,
        owner_id: folder.owner_id,
        parent_id: folder.id,
        name: `dir ${pad(i, 7)}`,
        visibility: 'private',
        is_share: 1,
        hash_url: randomToken(),
        key_wrapped: newChildKey(key, id).wrapped,
        is_root: 0,
        deleted_at: null,
        last_access_at: null,
        created_at: now,
        updated_at: now,
      });
    }
    await db.transaction().execute((trx) => insertFolders(trx, rows));
  }

  for (let done = 0; done < options.files; done += batch) {
    const requests: CloneRequest[] = [];
    for (let i = done; i < Math.min(options.files, done + batch); i++) {
      requests.push({
        file: template,
        sourceFolderKey: key,
        targetFolderKey: key,
        targetFolderId: folder.id,
        targetBucketId: folder.bucket_id,
        ownerId: folder.owner_id,
        name: `file ${pad(i, 8)}.bin`,
      });
    }
    await db.transaction().execute((trx) => cloneFiles(trx, requests, now));
  }

  // What the service does after adding items: the owner's used bytes and the folder aggregates
  // (the folder and its ancestors), once for everything seeded.
  const bytes = options.files * Number(template.size);
  await db.transaction().execute(async (trx) => {
    if (!(await reserveBytes(trx, folder.owner_id, bytes, Number.MAX_SAFE_INTEGER))) throw new Error('the seeded files exceed the quota');
    await adjustChain(
      trx,
      folder.id,
      '',
      1,
      { folders: options.folders, files: options.files, bytes },
      { folders: options.folders, files: options.files },
    );
  });
}
