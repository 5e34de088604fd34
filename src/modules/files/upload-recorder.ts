import { loadFolderFor, mayActOnFolder } from '../../access/access.js';
import type { StoredContent } from '../../content/index.js';
import { onePerContext, type AppContext, type Principal } from '../../context.js';
import type { DbOrTrx } from '../../db/database.js';
import { mutation } from '../../db/transaction.js';
import { writeAll, type Write } from '../../db/write-batch.js';
import type { FileRow, FileVersionRow, FolderRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { GroupRunner } from '../../lib/group-runner.js';
import { nowIso } from '../../lib/time.js';
import { releaseBytes } from '../accounts/accounts.repository.js';
import { reserveQuota } from '../accounts/quota.js';
import { deleteHolds, restoreHolds } from '../accounts/upload-holds.js';
import { freeItemName } from '../folders/folders.names.js';
import { adjustChainWrite } from '../folders/folders.repository.js';
import * as repo from './files.repository.js';
import type { OnConflict } from './files.schemas.js';
import { fileAttached, requireLiveFolder } from './files.tree.js';
import { addVersion, newFileRows } from './files.versioning.js';
import { pendingThumbnailsWrite } from '../thumbnails/thumbnails.repository.js';

/** An upload whose bytes are stored, waiting to be recorded (see recordUploadGroup). */
export interface StoredUpload {
  principal: Principal;
  folder: FolderRow;
  parentKey: Buffer;
  name: string;
  contentType: string;
  onConflict: OnConflict;
  stored: StoredContent;
  /** The upload's hold on the quota (upload-holds.ts), released by the transaction recording it. */
  holdId?: string;
}

/** Uploads recorded in one transaction at most (each is a row in a few multi-row statements). */
const UPLOAD_GROUP_MAX = 32;

/**
 * Records the uploads of one owner that finish while an earlier one is being recorded together:
 * on PostgreSQL each upload of an owner waits for the owner's row lock held through the commit
 * of the one before, and on SQLite each transaction is a commit of its own. One per context;
 * submit under the owner's id.
 */
export const uploadRecorder = onePerContext(
  (ctx) => new GroupRunner<StoredUpload, FileRow>((uploads) => recordUploadGroup(ctx, uploads), UPLOAD_GROUP_MAX),
);

async function recordUploadGroup(ctx: AppContext, uploads: StoredUpload[]): Promise<PromiseSettledResult<FileRow>[]> {
  const results = new Map<StoredUpload, FileRow>();
  if (uploads.length > 1) {
    try {
      for (const [upload, file] of await mutation(ctx.db, (trx) => recordNewFiles(ctx, trx, uploads))) results.set(upload, file);
    } catch {
      // Recorded one by one below, where each upload gets its own outcome.
    }
  }
  const settled: PromiseSettledResult<FileRow>[] = [];
  for (const upload of uploads) {
    const recorded = results.get(upload);
    if (recorded) {
      settled.push({ status: 'fulfilled', value: recorded });
      continue;
    }
    try {
      settled.push({ status: 'fulfilled', value: await mutation(ctx.db, (trx) => recordDurably(ctx, trx, upload)) });
    } catch (error) {
      settled.push({ status: 'rejected', reason: error });
    }
  }
  return settled;
}

/**
 * Records, in few statements whatever their number, the uploads of one owner that make new files
 * under free names (the usual case of many small uploads): one quota reservation, one insert of
 * the files and one of their versions, one aggregate update per folder. The others (a name
 * taken or repeated in the group, a folder no longer live or no longer granted) are left out
 * for recordUpload, which decides their versions, renames and errors. Throws when the quota
 * cannot take the group at once, which then goes one by one too.
 */
async function recordNewFiles(ctx: AppContext, trx: DbOrTrx, uploads: StoredUpload[]): Promise<Map<StoredUpload, FileRow>> {
  const ownerId = uploads[0].folder.owner_id;
  // First, as in recordUpload: the holds' rows, then the reservation, which takes the owner's
  // row lock, the tree lock, and turns what the uploads held into used bytes.
  const holds = await deleteHolds(
    trx,
    uploads.flatMap((upload) => (upload.holdId ? [upload.holdId] : [])),
  );
  await reserveQuota(trx, ownerId, sum(uploads.map((upload) => upload.stored.size)), ctx.config, sum(holds.values()));
  const now = nowIso();
  const rows = await newFilesUnderFreeNames(trx, uploads, now);
  const leftOut = uploads.filter((upload) => !rows.has(upload));
  await releaseBytes(trx, ownerId, sum(leftOut.map((upload) => upload.stored.size)));
  // Still in flight: recordUpload takes them one by one, their bytes held meanwhile.
  await restoreHolds(
    trx,
    ownerId,
    new Map(
      leftOut.flatMap((upload) => (upload.holdId && holds.has(upload.holdId) ? [[upload.holdId, holds.get(upload.holdId)!] as const] : [])),
    ),
  );
  if (rows.size === 0) return new Map();
  // Its lists grow with the group, over tables that grow with every upload: planned each time.
  await writeAll(trx, ctx.database.capabilities.writesInOneStatement, newFilesWrites(ctx, trx, rows, now), { plannedEachTime: true });
  await ctx.content.awaitDurable([...rows.keys()].map((upload) => upload.stored));
  return new Map([...rows].map(([upload, row]) => [upload, row.file]));
}

/** The rows of the uploads of a group that make new files under free names in folders still live and granted. */
async function newFilesUnderFreeNames(
  trx: DbOrTrx,
  uploads: StoredUpload[],
  now: string,
): Promise<Map<StoredUpload, { file: FileRow; version: FileVersionRow }>> {
  const rows = new Map<StoredUpload, { file: FileRow; version: FileVersionRow }>();
  for (const [folderId, inFolder] of groupBy(uploads, (upload) => upload.folder.id)) {
    const found = await repo.findFolderWithNamesTaken(trx, folderId, [...new Set(inFolder.map((upload) => upload.name))]);
    if (!found || found.folder.trash_batch !== '' || !(await mayActOnFolder(trx, inFolder[0].principal, found.folder, 'edit'))) continue;
    const { folder, taken } = found;
    for (const upload of inFolder) {
      // Another principal's grant is checked by recordUpload; a name's second upload becomes its version there.
      if (upload.principal.userId !== inFolder[0].principal.userId || taken.has(upload.name)) continue;
      taken.add(upload.name);
      rows.set(upload, newFileRows(folder, upload.parentKey, upload.name, upload.contentType, upload.stored, now));
    }
  }
  return rows;
}

/** The writes recording new files: their blobs, files and versions, and one aggregate update per folder. */
function newFilesWrites(
  ctx: AppContext,
  trx: DbOrTrx,
  rows: Map<StoredUpload, { file: FileRow; version: FileVersionRow }>,
  now: string,
): Write[] {
  const recorded = [...rows.values()];
  const names = new Map(recorded.map((row) => [row.file.id, row.file.name]));
  const writes: Write[] = [
    ...ctx.content.recordWrites(
      trx,
      [...rows.keys()].map((upload) => upload.stored),
      now,
    ),
    repo.insertFilesWrite(
      trx,
      recorded.map((row) => row.file),
    ),
    repo.insertVersionsWrite(
      trx,
      recorded.map((row) => row.version),
    ),
    ...optional(
      pendingThumbnailsWrite(
        trx,
        recorded.map((row) => row.version),
        (fileId) => names.get(fileId) ?? '',
      ),
    ),
  ];
  for (const [folderId, files] of groupBy(
    recorded.map((row) => row.file),
    (file) => file.folder_id,
  )) {
    const count = files.length;
    const bytes = files.reduce((total, file) => total + file.size, 0);
    writes.push(adjustChainWrite(folderId, '', 1, { folders: 0, files: count, bytes }, { folders: 0, files: count }));
  }
  return writes;
}

/** recordUpload, committed only once the blob's key is durable (its store syncs meanwhile). */
async function recordDurably(ctx: AppContext, trx: DbOrTrx, upload: StoredUpload): Promise<FileRow> {
  const file = await recordUpload(ctx, trx, upload);
  await ctx.content.awaitDurable([upload.stored]);
  return file;
}

/**
 * Records stored content as a new file or a new version, in few statements: on PostgreSQL every
 * upload of an owner waits for the owner's row, so what runs after it is what serialises them.
 * The quota reservation comes first (after the upload's hold's row, whose bytes it turns into
 * used ones): its conditional update of the owner's row takes the row lock `lockTrees` would
 * take (the same mode), so it is the tree lock of this mutation, and the checks after it see the
 * trees as the owner's other mutations left them.
 */
async function recordUpload(ctx: AppContext, trx: DbOrTrx, upload: StoredUpload): Promise<FileRow> {
  const { principal, parentKey, name: requestedName, contentType, onConflict, stored } = upload;
  const now = nowIso();
  const released = upload.holdId ? ((await deleteHolds(trx, [upload.holdId])).get(upload.holdId) ?? 0) : 0;
  await reserveQuota(trx, upload.folder.owner_id, stored.size, ctx.config, released);
  // Checked again under the lock: the folder may have been trashed, moved or deleted (with its
  // bucket), or a grant revoked, since the check before the upload. The rows are made from
  // this reading of it (its bucket may have changed with a move).
  const folder = await loadFolderFor(trx, principal, upload.folder.id, 'edit');
  requireLiveFolder(folder);
  const holder = await repo.liveNameHolder(trx, folder.id, requestedName);
  const blobStored = ctx.content.recordWrites(trx, [stored], now);
  const insert = (name: string) => insertNewFile(ctx, trx, newFileRows(folder, parentKey, name, contentType, stored, now), blobStored);
  if (holder.file === undefined && !holder.folderTaken) return insert(requestedName);
  if (holder.file && onConflict === 'version') {
    await writeAll(trx, ctx.database.capabilities.writesInOneStatement, blobStored);
    return addVersion(ctx, trx, holder.file, stored, contentType, now);
  }
  if (onConflict !== 'rename') throw new AppError('NAME_CONFLICT', `An item named "${requestedName}" already exists in this folder`);
  return insert(await freeItemName(trx, folder.id, requestedName, '', true));
}

/** Records a new file's rows, with `blobStored` (the blob's row, see newBlobsWrites) in the same statement where possible. */
async function insertNewFile(
  ctx: AppContext,
  trx: DbOrTrx,
  rows: { file: FileRow; version: FileVersionRow },
  blobStored: Write[],
): Promise<FileRow> {
  await writeAll(trx, ctx.database.capabilities.writesInOneStatement, [
    ...blobStored,
    repo.insertFilesWrite(trx, [rows.file]),
    repo.insertVersionsWrite(trx, [rows.version]),
    ...optional(pendingThumbnailsWrite(trx, [rows.version], () => rows.file.name)),
    fileAttached(rows.file),
  ]);
  return rows.file;
}

function optional<T>(value: T | undefined): T[] {
  return value === undefined ? [] : [value];
}

function sum(values: Iterable<number>): number {
  let total = 0;
  for (const value of values) total += value;
  return total;
}

function groupBy<T>(items: T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(keyOf(item));
    if (group) group.push(item);
    else groups.set(keyOf(item), [item]);
  }
  return groups;
}
