import type { Readable } from 'node:stream';
import { assertSameOwner, loadFileFor, loadFolderFor, mayActOnFile, mayActOnFolder, mayDownloadIn, visibleParentId, type Action } from '../../access/access.js';
import { adjustBlobRefs } from '../../blobs/blobs.repository.js';
import { onePerContext, type AppContext, type Principal } from '../../context.js';
import { newChildKey, openChildKey, rewrapChildKey } from '../../crypto/keyring.js';
import type { DbOrTrx } from '../../db/database.js';
import { mutation } from '../../db/transaction.js';
import { writeAll, type Write } from '../../db/write-batch.js';
import type { FileRow, FileVersionRow, FolderRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { parseRange } from '../../lib/range.js';
import { DEFAULT_PAGE_SIZE, decodeCursor, encodeCursor } from '../../lib/cursor.js';
import { assertId, newId, randomToken } from '../../lib/ids.js';
import { assertName } from '../../lib/names.js';
import { GroupRunner } from '../../lib/group-runner.js';
import { DAY_MS, isoPlus, nowIso } from '../../lib/time.js';
import { releaseBytes } from '../accounts/accounts.repository.js';
import { reserveQuota } from '../accounts/quota.js';
import { deleteHolds, restoreHolds, UploadHold } from '../accounts/upload-holds.js';
import { findBucket } from '../buckets/buckets.repository.js';
import { folderKey, loadFolderWithKeyChainFor, unwrapKeyChain } from '../folders/folders.keys.js';
import { assertNameFree, freeItemName } from '../folders/folders.names.js';
import { adjustChain, adjustChainWrite, findFolder, lockTrees, touchFolderAccess, type TreeRefs } from '../folders/folders.repository.js';
import { cloneFiles, purgeFiles } from './files.lifecycle.js';
import * as repo from './files.repository.js';
import type { StoredContent } from '../../content/index.js';
import { UploadTargets, type UploadTarget } from './upload-targets.cache.js';

export const RETENTION_PERIODS = ['30d', '45d', '90d', '120d', '180d', '1Y', '2Y', '3Y', '5Y'] as const;
export type RetentionPeriod = (typeof RETENTION_PERIODS)[number];
export type OnConflict = 'version' | 'rename' | 'fail';

/** Days in a retention period: `d` is days, `Y` is 365 days. */
export function retentionDays(period: RetentionPeriod): number {
  const n = Number(period.slice(0, -1));
  return period.endsWith('Y') ? n * 365 : n;
}

/** The file detail: the interface document's fields, then ours (API.md §4). */
export interface FileDetail {
  id: string;
  name: string;
  size: number;
  createdAt: string;
  updatedAt: string;
  folderId: string;
  bucketId: string;
  contentType: string;
  visibility: 'private' | 'public';
  retentionPeriod: RetentionPeriod | null;
  retainUntil: string | null;
  hashName: string;
  checksum: string;
  versionCount: number;
  isDelete: boolean;
  deletedAt: string | null;
}

export interface VersionView {
  id: string;
  size: number;
  checksum: string;
  contentType: string;
  createdAt: string;
  isCurrent: boolean;
}

export interface DownloadOptions {
  versionId?: string;
  /** The raw `Range` header. */
  range?: string;
  ifRange?: string;
  ifNoneMatch?: string;
}

/** What a download sends: status, headers and the decrypted body. */
export interface Download {
  status: 200 | 206 | 304;
  size: number;
  range?: { start: number; end: number };
  etag: string;
  name: string;
  contentType: string;
  body?: Readable;
}

export function fileDetail(row: FileRow): FileDetail {
  return {
    id: row.id,
    name: row.name,
    size: Number(row.size),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    folderId: row.folder_id,
    bucketId: row.bucket_id,
    contentType: row.content_type,
    visibility: row.visibility,
    retentionPeriod: row.retention_period as RetentionPeriod | null,
    retainUntil: row.retain_until,
    hashName: row.hash_name,
    checksum: row.checksum,
    versionCount: Number(row.version_count),
    isDelete: row.trash_batch !== '',
    deletedAt: row.deleted_at,
  };
}

/**
 * The checksum a caller may read: none ("") without the right to download, as the SHA-256 of a
 * plaintext tells whether it is content one already knows.
 */
function checksumFor(checksum: string, mayDownload: boolean): string {
  return mayDownload ? checksum : '';
}

/**
 * The detail of a file as the principal may see it: a grantee is not told the folder of a file
 * shared on its own, nor the checksum of what they may not download.
 */
export async function fileDetailFor(db: DbOrTrx, principal: Principal, row: FileRow): Promise<FileDetail> {
  const detail = fileDetail(row);
  if (row.owner_id === principal.userId) return detail;
  const folderId = await visibleParentId(db, principal, { owner_id: row.owner_id, parentId: row.folder_id });
  return { ...detail, folderId, checksum: checksumFor(row.checksum, await mayActOnFile(db, principal, row, 'download')) };
}

/** An upload whose bytes are stored, waiting to be recorded (see recordUploadGroup). */
interface StoredUpload {
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

const FILE_CONTRIBUTION = (size: number) => ({ folders: 0, files: 1, bytes: size });
const ONE_FILE = { folders: 0, files: 1 };

/** The file service of a context: one per context (see onePerContext). */
export const fileService = onePerContext(buildFileService);

function buildFileService(ctx: AppContext) {
  const { db, keyring, content, config } = ctx;
  const writesTogether = ctx.database.capabilities.writesInOneStatement;

  /** A mutation of the trees holding `refs`, serialised with the others on them (see lockTrees). */
  const mutate = <T>(refs: TreeRefs, work: (trx: DbOrTrx) => Promise<T>) =>
    mutation(db, async (trx) => {
      await lockTrees(trx, ctx.database.capabilities.rowLocks, refs);
      return work(trx);
    });


  function requireLiveFolder(folder: FolderRow): void {
    if (folder.trash_batch !== '') throw new AppError('FOLDER_IN_TRASH');
  }

  function requireLiveFile(file: FileRow): void {
    if (file.trash_batch !== '') throw new AppError('FILE_IN_TRASH');
  }

  /** Removes a file's contribution from the folders above it that share its trash state. */
  async function detachFile(trx: DbOrTrx, file: FileRow): Promise<void> {
    await adjustChain(trx, file.folder_id, file.trash_batch, -1, FILE_CONTRIBUTION(Number(file.size)), ONE_FILE);
  }

  async function attachFile(trx: DbOrTrx, file: Pick<FileRow, 'folder_id' | 'size'>, folderId = file.folder_id): Promise<void> {
    await fileAttached(file, folderId).execute(trx);
  }

  /** The aggregates of the live chain from `folderId` up gaining `file`: a write to run alone or beside others. */
  function fileAttached(file: Pick<FileRow, 'folder_id' | 'size'>, folderId = file.folder_id) {
    return adjustChainWrite(folderId, '', 1, FILE_CONTRIBUTION(Number(file.size)), ONE_FILE);
  }

  async function fileKeyOf(trx: DbOrTrx, file: FileRow): Promise<Buffer> {
    return openChildKey(await folderKey(trx, keyring, file.folder_id), file.key_wrapped, file.id);
  }

  /**
   * Stores one uploaded stream (or small body) into a folder: the bytes are encrypted into a new blob first, then
   * one transaction records the file or its new version, reserves the quota and updates the
   * folder aggregates. If anything fails, the blob is removed again. While the bytes arrive
   * they are held against the owner's quota (upload-holds.ts): an announced length at once.
   */
  async function uploadOne(
    principal: Principal,
    folderId: string,
    input: {
      name: string;
      contentType: string;
      body: Readable | Buffer;
      /** The body stream's chunks are memory of their own that nothing else reads (see StoreOptions). */
      bodyOwnsChunks?: boolean;
      /** A streamed body's length as the request announced it (a raw upload's Content-Length). */
      announcedBytes?: number;
      /** The most a streamed body can hold (a multipart part: what its request's Content-Length leaves). */
      atMostBytes?: number;
      onConflict: OnConflict;
    },
  ): Promise<FileDetail> {
    const name = assertName(input.name);
    const { folder, key: parentKey } = await uploadTarget(principal, folderId);
    requireLiveFolder(folder);
    if (input.onConflict === 'fail') await assertNameFree(db, folder.id, name);
    const hold = new UploadHold(db, folder.owner_id, config);
    try {
      await holdAhead(hold, input);
      const limits = { maxBytes: config.maxUploadBytes, inlineMaxBytes: config.inlineBlobBytes, hold: hold.cover };
      const stored = await content.store(input.body, limits, { sourceOwnsChunks: input.bodyOwnsChunks });
      const upload = { principal, folder, parentKey, name, contentType: input.contentType, onConflict: input.onConflict, stored, holdId: hold.recordId };
      const recorded = await recordStored(upload);
      hold.recorded();
      return recorded;
    } catch (error) {
      await hold.release();
      throw error;
    }
  }

  /** What a streamed body announces is held before it is read: one step instead of growing ones. */
  async function holdAhead(hold: UploadHold, input: { body: Readable | Buffer; announcedBytes?: number; atMostBytes?: number }): Promise<void> {
    if (Buffer.isBuffer(input.body)) return;
    const announced = input.announcedBytes;
    if (announced !== undefined && announced > config.maxUploadBytes) throw new AppError('PAYLOAD_TOO_LARGE', `Files are limited to ${config.maxUploadBytes} bytes`);
    if (announced !== undefined) return hold.take(announced);
    if (input.atMostBytes !== undefined) await hold.expect(Math.min(input.atMostBytes, config.maxUploadBytes));
  }

  /** Records stored content (see recordUploadGroup); on failure its blob goes again. */
  async function recordStored(upload: StoredUpload): Promise<FileDetail> {
    try {
      // The whole detail, checksum included: the uploader sent this content, whatever their rights.
      return fileDetail(await uploadRecorder.submit(upload.folder.owner_id, upload));
    } catch (error) {
      uploadTargets.forget(upload.folder.id);
      await content.discard(upload.stored);
      throw error;
    }
  }

  /**
   * The folder an upload goes to and its key, unwrapped here, before the transaction, which then
   * holds its locks only for the writes. The owner's folders are kept a while (see
   * upload-targets.cache.ts); anyone else's grant is checked every time.
   */
  async function uploadTarget(principal: Principal, folderId: string): Promise<UploadTarget> {
    const kept = uploadTargets.get(folderId, principal.userId);
    if (kept) return kept;
    const { folder, chain } = await loadFolderWithKeyChainFor(db, principal, folderId, 'edit');
    const target = { folder, key: unwrapKeyChain(keyring, chain) };
    if (folder.owner_id === principal.userId && folder.trash_batch === '') uploadTargets.keep(target);
    return target;
  }

  /**
   * Records the uploads of one owner that finish while an earlier one is being recorded together:
   * on PostgreSQL each upload of an owner waits for the owner's row lock held through the commit
   * of the one before, and on SQLite each transaction is a commit of its own.
   */
  const uploadRecorder = new GroupRunner<StoredUpload, FileRow>(recordUploadGroup, UPLOAD_GROUP_MAX);
  const uploadTargets = new UploadTargets();

  async function recordUploadGroup(uploads: StoredUpload[]): Promise<PromiseSettledResult<FileRow>[]> {
    const results = new Map<StoredUpload, FileRow>();
    if (uploads.length > 1) {
      try {
        for (const [upload, file] of await mutation(db, (trx) => recordNewFiles(trx, uploads))) results.set(upload, file);
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
        settled.push({ status: 'fulfilled', value: await mutation(db, (trx) => recordDurably(trx, upload)) });
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
  async function recordNewFiles(trx: DbOrTrx, uploads: StoredUpload[]): Promise<Map<StoredUpload, FileRow>> {
    const ownerId = uploads[0].folder.owner_id;
    const total = uploads.reduce((sum, upload) => sum + upload.stored.size, 0);
    // First, as in recordUpload: the holds' rows, then the reservation, which takes the owner's
    // row lock, the tree lock, and turns what the uploads held into used bytes.
    const holds = await deleteHolds(trx, uploads.flatMap((upload) => (upload.holdId ? [upload.holdId] : [])));
    await reserveQuota(trx, ownerId, total, config, sum(holds.values()));
    const now = nowIso();
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
    const leftOut = uploads.filter((upload) => !rows.has(upload));
    await releaseBytes(trx, ownerId, sum(leftOut.map((upload) => upload.stored.size)));
    // Still in flight: recordUpload takes them one by one, their bytes held meanwhile.
    await restoreHolds(trx, ownerId, new Map(leftOut.flatMap((upload) => (upload.holdId && holds.has(upload.holdId) ? [[upload.holdId, holds.get(upload.holdId)!] as const] : []))));
    if (rows.size === 0) return new Map();
    const recorded = [...rows.values()];
    const writes: Write[] = [
      ...content.recordWrites(trx, [...rows.keys()].map((upload) => upload.stored), now),
      repo.insertFilesWrite(trx, recorded.map((row) => row.file)),
      repo.insertVersionsWrite(trx, recorded.map((row) => row.version)),
    ];
    for (const [folderId, files] of groupBy(recorded.map((row) => row.file), (file) => file.folder_id)) {
      const count = files.length;
      const bytes = files.reduce((sum, file) => sum + file.size, 0);
      writes.push(adjustChainWrite(folderId, '', 1, { folders: 0, files: count, bytes }, { folders: 0, files: count }));
    }
    // Its lists grow with the group, over tables that grow with every upload: planned each time.
    await writeAll(trx, writesTogether, writes, { plannedEachTime: true });
    await content.awaitDurable([...rows.keys()].map((upload) => upload.stored));
    return new Map([...rows].map(([upload, row]) => [upload, row.file]));
  }

  /** recordUpload, committed only once the blob's key is durable (its store syncs meanwhile). */
  async function recordDurably(trx: DbOrTrx, upload: StoredUpload): Promise<FileRow> {
    const file = await recordUpload(trx, upload);
    await content.awaitDurable([upload.stored]);
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
  async function recordUpload(trx: DbOrTrx, upload: StoredUpload): Promise<FileRow> {
    const { principal, parentKey, name: requestedName, contentType, onConflict, stored } = upload;
    const now = nowIso();
    const released = upload.holdId ? ((await deleteHolds(trx, [upload.holdId])).get(upload.holdId) ?? 0) : 0;
    await reserveQuota(trx, upload.folder.owner_id, stored.size, config, released);
    // Checked again under the lock: the folder may have been trashed, moved or deleted (with its
    // bucket), or a grant revoked, since the check before the upload. The rows are made from
    // this reading of it (its bucket may have changed with a move).
    const folder = await loadFolderFor(trx, principal, upload.folder.id, 'edit');
    requireLiveFolder(folder);
    const holder = await repo.liveNameHolder(trx, folder.id, requestedName);
    const blobStored = content.recordWrites(trx, [stored], now);
    if (holder.file === undefined && !holder.folderTaken) return insertNewFile(trx, folder, parentKey, requestedName, contentType, stored, now, blobStored);
    if (holder.file && onConflict === 'version') {
      await writeAll(trx, writesTogether, blobStored);
      return addVersion(trx, holder.file, stored, contentType, now);
    }
    if (onConflict !== 'rename') throw new AppError('NAME_CONFLICT', `An item named "${requestedName}" already exists in this folder`);
    return insertNewFile(trx, folder, parentKey, await freeItemName(trx, folder.id, requestedName, '', true), contentType, stored, now, blobStored);
  }

  /** Records a new file of stored content, with `blobStored` (the blob's row, see newBlobsWrites) in the same statement where possible. */
  async function insertNewFile(trx: DbOrTrx, folder: FolderRow, parentKey: Buffer, name: string, contentType: string, stored: StoredContent, now: string, blobStored: Write[]): Promise<FileRow> {
    const { file, version } = newFileRows(folder, parentKey, name, contentType, stored, now);
    await writeAll(trx, writesTogether, [
      ...blobStored,
      repo.insertFilesWrite(trx, [file]),
      repo.insertVersionsWrite(trx, [version]),
      fileAttached(file),
    ]);
    return file;
  }

  /** The rows of a new file in `folder` and of its first version, with a new file key wrapped by the folder's. */
  function newFileRows(folder: FolderRow, parentKey: Buffer, name: string, contentType: string, stored: StoredContent, now: string): { file: FileRow; version: FileVersionRow } {
    const fileId = newId('fil');
    const versionId = newId('ver');
    const fileKey = newChildKey(parentKey, fileId);
    const file: FileRow = {
      id: fileId,
      bucket_id: folder.bucket_id,
      folder_id: folder.id,
      owner_id: folder.owner_id,
      name,
      content_type: contentType,
      visibility: 'private',
      retention_period: null,
      retain_until: null,
      hash_name: randomToken(),
      key_wrapped: fileKey.wrapped,
      current_version_id: versionId,
      size: stored.size,
      checksum: stored.checksum,
      version_count: 1,
      versions_bytes: stored.size,
      trash_batch: '',
      deleted_at: null,
      created_at: now,
      updated_at: now,
    };
    return { file, version: versionRow(versionId, fileId, fileKey.key, stored, contentType, now) };
  }

  function versionRow(id: string, fileId: string, fileKey: Buffer, stored: StoredContent, contentType: string, now: string): FileVersionRow {
    return {
      id,
      file_id: fileId,
      blob_id: stored.blobId,
      size: stored.size,
      checksum: stored.checksum,
      content_type: contentType,
      data_key_wrapped: rewrapChildKey(stored.dataKey, fileKey, id),
      created_at: now,
    };
  }

  /** A new current version of a live file (its bytes already stored and the quota reserved); the file as it now is. */
  async function addVersion(trx: DbOrTrx, file: FileRow, stored: StoredContent, contentType: string, now: string): Promise<FileRow> {
    const versionId = newId('ver');
    await repo.insertVersions(trx, [versionRow(versionId, file.id, await fileKeyOf(trx, file), stored, contentType, now)]);
    return setCurrentVersion(trx, file, { id: versionId, size: stored.size, checksum: stored.checksum, contentType }, now);
  }

  async function setCurrentVersion(
    trx: DbOrTrx,
    file: FileRow,
    version: { id: string; size: number; checksum: string; contentType: string },
    now: string,
  ): Promise<FileRow> {
    const changes = {
      current_version_id: version.id,
      size: version.size,
      checksum: version.checksum,
      content_type: version.contentType,
      version_count: Number(file.version_count) + 1,
      versions_bytes: Number(file.versions_bytes) + version.size,
      updated_at: now,
    };
    await repo.updateFile(trx, file.id, changes);
    const delta = version.size - Number(file.size);
    if (delta !== 0) await adjustChain(trx, file.folder_id, '', 1, { folders: 0, files: 0, bytes: delta }, { folders: 0, files: 0 });
    return { ...file, ...changes };
  }

  async function details(principal: Principal, fileId: string): Promise<FileDetail> {
    return fileDetailFor(db, principal, await loadFileFor(db, principal, fileId, 'view'));
  }

  async function update(
    principal: Principal,
    fileId: string,
    input: { name: string; visibility: 'private' | 'public'; retentionPeriod?: RetentionPeriod },
  ): Promise<void> {
    const name = assertName(input.name);
    await mutate({ files: [fileId] }, async (trx) => {
      const file = await loadFileFor(trx, principal, fileId, 'edit');
      // Making a file public shares it with everyone, and a retention binds its owner for years:
      // both stay with the owner, whatever an editor may otherwise change.
      const ownersOnly = input.visibility !== file.visibility || input.retentionPeriod !== undefined;
      if (ownersOnly && !(await mayActOnFile(trx, principal, file, 'manage'))) {
        throw new AppError('FILE_NOT_FOUND', 'Only the owner changes the visibility or retention of a file');
      }
      requireLiveFile(file);
      if (name !== file.name) await assertNameFree(trx, file.folder_id, name);
      const now = nowIso();
      let retention = {};
      if (input.retentionPeriod) {
        const retainUntil = isoPlus(now, retentionDays(input.retentionPeriod) * DAY_MS);
        if (file.retain_until && file.retain_until > retainUntil) {
          throw new AppError('RETENTION_SHORTENING', `The file is retained until ${file.retain_until}; ${input.retentionPeriod} from now ends earlier`);
        }
        retention = { retention_period: input.retentionPeriod, retain_until: retainUntil };
      }
      await repo.updateFile(trx, file.id, { name, visibility: input.visibility, ...retention, updated_at: now });
    });
  }

  async function list(
    principal: Principal,
    folderId: string,
    query: { limit?: number; cursor?: string; sort?: repo.FileSort; order?: 'asc' | 'desc' },
  ) {
    const folder = await loadFolderFor(db, principal, folderId, 'view', 'FOLDER_FORBIDDEN');
    const sort = query.sort ?? 'name';
    const order = query.order ?? 'asc';
    const after = query.cursor ? (decodeCursor(query.cursor, 2) as [string | number, string]) : undefined;
    // A cursor made for another sort holds a value of the wrong type for this one.
    if (after && (typeof after[0] !== (sort === 'size' ? 'number' : 'string') || typeof after[1] !== 'string')) {
      throw new AppError('INVALID_CURSOR', 'This cursor belongs to another sort order');
    }
    const page = await repo.listFilesPage(db, folder.id, folder.trash_batch, { sort, order, limit: query.limit ?? DEFAULT_PAGE_SIZE, after });
    const mayDownload = await mayDownloadIn(db, principal, folder, page.rows.map((row) => row.id));
    const last = page.rows[page.rows.length - 1];
    return {
      data: page.rows.map((row) => ({ ...fileDetail(row), checksum: checksumFor(row.checksum, mayDownload(row.id)) })),
      total: Number(folder.child_files),
      nextCursor: page.hasMore && last ? encodeCursor([repo.sortValue(last, sort), last.id]) : null,
    };
  }

  /**
   * Loads the version to serve and unwraps its data key through the folder and file keys, or from
   * `fileKey` when the caller already holds it (a share link, which never uses the master key).
   */
  async function openVersion(file: FileRow, versionId?: string, knownFileKey?: Buffer): Promise<{ version: FileVersionRow; dataKey: Buffer }> {
    const version = await repo.findVersion(db, file.id, versionId ?? file.current_version_id!);
    if (!version) throw new AppError('VERSION_NOT_FOUND');
    const fileKey = knownFileKey ?? (await fileKeyOf(db, file));
    return { version, dataKey: openChildKey(fileKey, version.data_key_wrapped, version.id) };
  }

  /**
   * Prepares a download: status, headers and a stream that decrypts only the segments the range
   * needs. A segment that fails authentication ends the stream with an error (never in clear).
   */
  async function streamVersion(
    file: FileRow,
    options: DownloadOptions,
    fileKey?: Buffer,
  ): Promise<Download> {
    const { version, dataKey } = await openVersion(file, options.versionId, fileKey);
    const size = Number(version.size);
    const etag = `"${version.id}"`;
    const base = { size, etag, name: file.name, contentType: version.content_type };
    if (options.ifNoneMatch && options.ifNoneMatch.split(',').some((tag) => tag.trim() === etag || tag.trim() === '*')) {
      return { ...base, status: 304 };
    }
    // If-Range with another validator: the client's copy is stale, so it gets the whole file.
    const range = options.ifRange && options.ifRange !== etag ? ({ kind: 'none' } as const) : parseRange(options.range, size);
    if (range.kind === 'unsatisfiable') throw new AppError('RANGE_NOT_SATISFIABLE', undefined, undefined, { 'content-range': `bytes */${size}` });
    const stored = { blobId: version.blob_id, size, dataKey };
    if (range.kind === 'range') return { ...base, status: 206, range, body: (await content.open(stored, range)).stream };
    return { ...base, status: 200, body: (await content.open(stored)).stream };
  }

  async function download(
    principal: Principal,
    fileId: string,
    options: DownloadOptions,
  ): Promise<Download> {
    const file = await loadFileFor(db, principal, fileId, 'download');
    if (options.versionId) assertId('ver', options.versionId, 'versionId');
    const download = await streamVersion(file, options);
    // A read of a file counts as an access of its folder (API.md §3, lastAccessAt).
    if (download.status !== 304) await touchFolderAccess(db, file.folder_id, nowIso(), 60_000);
    return download;
  }

  async function publicFile(hashName: string): Promise<FileRow> {
    const file = await repo.findFileByHashName(db, hashName);
    if (!file || file.visibility !== 'public' || file.trash_batch !== '') throw new AppError('FILE_NOT_FOUND');
    return file;
  }

  async function publicDownload(hashName: string, options: DownloadOptions): Promise<Download> {
    return streamVersion(await publicFile(hashName), options);
  }

  /** Re-wraps a file's key for another folder (one wrap; the content is untouched). */
  async function rewrapForFolder(trx: DbOrTrx, file: FileRow, targetFolderId: string): Promise<string> {
    return rewrapChildKey(await fileKeyOf(trx, file), await folderKey(trx, keyring, targetFolderId), file.id);
  }

  async function loadTargetFolder(trx: DbOrTrx, principal: Principal, targetFolderId: string): Promise<FolderRow> {
    const target = await loadFolderFor(trx, principal, assertId('fld', targetFolderId, 'targetFolderId'), 'edit');
    requireLiveFolder(target);
    return target;
  }

  async function move(principal: Principal, fileId: string, input: { targetFolderId: string; name?: string }): Promise<FileDetail> {
    const requested = input.name === undefined ? undefined : assertName(input.name);
    await mutate({ files: [fileId], folders: [input.targetFolderId] }, async (trx) => {
      const file = await loadFileFor(trx, principal, fileId, 'edit');
      requireLiveFile(file);
      const target = await loadTargetFolder(trx, principal, input.targetFolderId);
      assertSameOwner(file, target);
      const name = requested ?? file.name;
      if (target.id === file.folder_id && name === file.name) return;
      await assertNameFree(trx, target.id, name);
      const keyWrapped = target.id === file.folder_id ? file.key_wrapped : await rewrapForFolder(trx, file, target.id);
      await detachFile(trx, file);
      await repo.updateFile(trx, file.id, { folder_id: target.id, bucket_id: target.bucket_id, name, key_wrapped: keyWrapped, updated_at: nowIso() });
      await attachFile(trx, file, target.id);
    });
    return details(principal, fileId);
  }

  async function copy(principal: Principal, fileId: string, input: { targetFolderId: string; name?: string }): Promise<FileDetail> {
    const requested = input.name === undefined ? undefined : assertName(input.name);
    const copyId = await mutate({ files: [fileId], folders: [input.targetFolderId] }, async (trx) => {
      const file = await loadFileFor(trx, principal, fileId, 'download');
      requireLiveFile(file);
      const target = await loadTargetFolder(trx, principal, input.targetFolderId);
      let name: string;
      if (requested !== undefined) {
        await assertNameFree(trx, target.id, requested);
        name = requested;
      } else {
        name = await freeItemName(trx, target.id, file.name, 'copy', true);
      }
      await reserveQuota(trx, target.owner_id, Number(file.size), config);
      const now = nowIso();
      const [clone] = await cloneFiles(
        trx,
        [
          {
            file,
            sourceFolderKey: await folderKey(trx, keyring, file.folder_id),
            targetFolderId: target.id,
            targetFolderKey: await folderKey(trx, keyring, target.id),
            targetBucketId: target.bucket_id,
            ownerId: target.owner_id,
            name,
          },
        ],
        now,
      );
      await attachFile(trx, { folder_id: target.id, size: file.size });
      return clone.id;
    });
    return details(principal, copyId);
  }

  async function remove(principal: Principal, fileId: string, mode: 'soft' | 'hard'): Promise<void> {
    return removeAs(principal, fileId, mode, mode === 'hard' ? 'manage' : 'edit');
  }

  /** Deletes a file, the caller holding `action` on it. */
  async function removeAs(principal: Principal, fileId: string, mode: 'soft' | 'hard', action: Action): Promise<void> {
    await mutate({ files: [fileId] }, async (trx) => {
      const file = await loadFileFor(trx, principal, fileId, action);
      const now = nowIso();
      if (mode === 'soft') {
        if (file.trash_batch !== '') return;
        await detachFile(trx, file);
        await repo.updateFile(trx, file.id, { trash_batch: file.id, deleted_at: now });
        return;
      }
      if (file.retain_until && file.retain_until > now) throw new AppError('RETENTION_ACTIVE', `The file is retained until ${file.retain_until}`);
      await detachFile(trx, file);
      await purgeFiles(trx, [{ id: file.id, owner_id: file.owner_id, versions_bytes: Number(file.versions_bytes) }], now);
    });
  }

  async function restore(principal: Principal, fileId: string): Promise<FileDetail> {
    await mutate({ files: [fileId] }, async (trx) => {
      const file = await loadFileFor(trx, principal, fileId, 'edit');
      if (file.trash_batch === '') throw new AppError('NOT_IN_TRASH');
      const folder = (await findFolder(trx, file.folder_id))!;
      const targetId = folder.trash_batch === '' ? folder.id : (await findBucket(trx, file.bucket_id))!.root_folder_id!;
      await detachFile(trx, file);
      const name = await freeItemName(trx, targetId, file.name, 'restored', true);
      const keyWrapped = targetId === file.folder_id ? file.key_wrapped : await rewrapForFolder(trx, file, targetId);
      await repo.updateFile(trx, file.id, { folder_id: targetId, name, key_wrapped: keyWrapped, trash_batch: '', deleted_at: null, updated_at: nowIso() });
      await attachFile(trx, file, targetId);
    });
    return details(principal, fileId);
  }

  async function versions(principal: Principal, fileId: string): Promise<VersionView[]> {
    const file = await loadFileFor(db, principal, fileId, 'view');
    const mayDownload = await mayActOnFile(db, principal, file, 'download');
    return (await repo.listVersions(db, file.id)).map((v) => ({
      id: v.id,
      size: Number(v.size),
      checksum: checksumFor(v.checksum, mayDownload),
      contentType: v.content_type,
      createdAt: v.created_at,
      isCurrent: v.id === file.current_version_id,
    }));
  }

  /** Makes an old version current again, as a new version sharing its blob. */
  async function restoreVersion(principal: Principal, fileId: string, versionId: string): Promise<FileDetail> {
    await mutate({ files: [fileId] }, async (trx) => {
      const file = await loadFileFor(trx, principal, fileId, 'edit');
      requireLiveFile(file);
      const old = await repo.findVersion(trx, file.id, versionId);
      if (!old) throw new AppError('VERSION_NOT_FOUND');
      await reserveQuota(trx, file.owner_id, Number(old.size), config);
      const fileKey = await fileKeyOf(trx, file);
      const now = nowIso();
      const id = newId('ver');
      const dataKey = openChildKey(fileKey, old.data_key_wrapped, old.id);
      await repo.insertVersions(trx, [{ ...old, id, data_key_wrapped: rewrapChildKey(dataKey, fileKey, id), created_at: now }]);
      await adjustBlobRefs(trx, [old.blob_id], 1, now);
      await setCurrentVersion(trx, file, { id, size: Number(old.size), checksum: old.checksum, contentType: old.content_type }, now);
    });
    return details(principal, fileId);
  }

  async function deleteVersion(principal: Principal, fileId: string, versionId: string): Promise<void> {
    await mutate({ files: [fileId] }, async (trx) => {
      const file = await loadFileFor(trx, principal, fileId, 'manage');
      const version = await repo.findVersion(trx, file.id, versionId);
      if (!version) throw new AppError('VERSION_NOT_FOUND');
      if (version.id === file.current_version_id) throw new AppError('VERSION_IS_CURRENT');
      const now = nowIso();
      if (file.retain_until && file.retain_until > now) throw new AppError('RETENTION_ACTIVE', `The file is retained until ${file.retain_until}`);
      await repo.deleteVersion(trx, version.id);
      await adjustBlobRefs(trx, [version.blob_id], -1, now);
      await repo.updateFile(trx, file.id, {
        version_count: Number(file.version_count) - 1,
        versions_bytes: Number(file.versions_bytes) - Number(version.size),
        updated_at: now,
      });
      await releaseBytes(trx, file.owner_id, Number(version.size));
    });
  }

  /**
   * Takes back one stored part of a multipart request that failed on a later part, so a refused
   * request leaves nothing behind: a new file goes for good, a new version is removed and the
   * previous one is current again.
   */
  async function undoUpload(principal: Principal, uploaded: FileDetail): Promise<void> {
    // The uploader created this file in the same request, which takes only `edit` (an editor of a shared folder).
    if (uploaded.versionCount === 1) return removeAs(principal, uploaded.id, 'hard', 'edit');
    await mutate({ files: [uploaded.id] }, async (trx) => {
      const file = await loadFileFor(trx, principal, uploaded.id, 'edit');
      const [current, previous] = await repo.listVersions(trx, file.id);
      if (!previous || current.id !== file.current_version_id) return;
      const now = nowIso();
      await repo.deleteVersion(trx, current.id);
      await adjustBlobRefs(trx, [current.blob_id], -1, now);
      await repo.updateFile(trx, file.id, {
        current_version_id: previous.id,
        size: previous.size,
        checksum: previous.checksum,
        content_type: previous.content_type,
        version_count: Number(file.version_count) - 1,
        versions_bytes: Number(file.versions_bytes) - Number(current.size),
        updated_at: now,
      });
      const delta = Number(previous.size) - Number(current.size);
      if (delta !== 0 && file.trash_batch === '') await adjustChain(trx, file.folder_id, '', 1, { folders: 0, files: 0, bytes: delta }, { folders: 0, files: 0 });
      await releaseBytes(trx, file.owner_id, Number(current.size));
    });
  }

  return {
    undoUpload,
    uploadOne,
    details,
    update,
    list,
    download,
    publicDownload,
    /** A download through a share link: the link has unwrapped the file key with the client's key. */
    linkDownload: (file: FileRow, fileKey: Buffer, options: DownloadOptions) => streamVersion(file, options, fileKey),
    move,
    copy,
    remove,
    restore,
    versions,
    restoreVersion,
    deleteVersion,
  };
}

export type FileService = ReturnType<typeof buildFileService>;
