import { loadFileFor } from '../../access/access.js';
import type { AppContext, Principal } from '../../context.js';
import { openChildKey } from '../../crypto/keyring.js';
import type { FileRow, FileVersionRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { assertId } from '../../lib/ids.js';
import type { Sendable } from '../../lib/sendable.js';
import { nowIso } from '../../lib/time.js';
import { touchFolderAccess } from '../folders/folders.repository.js';
import * as repo from './files.repository.js';
import { fileKeyOf } from './files.tree.js';

/** A read of a file counts as an access of its folder, written at most once a minute. */
const ACCESS_WRITE_INTERVAL_MS = 60_000;

/**
 * A file (or one of its versions) to send to a principal who may download it. Opening it
 * records an access of the file's folder (its lastAccessAt), once the content is open.
 */
export async function download(ctx: AppContext, principal: Principal, fileId: string, options: { versionId?: string }): Promise<Sendable> {
  const file = await loadFileFor(ctx.db, principal, fileId, 'download');
  if (options.versionId) assertId('ver', options.versionId, 'versionId');
  return readContent(ctx, file, options.versionId);
}

/**
 * A version of a file the caller was allowed to read (downloaded, or previewed with the view
 * right); opening it records an access of the file's folder, as a download does.
 */
export async function readContent(ctx: AppContext, file: FileRow, versionId?: string): Promise<Sendable> {
  const content = await versionContent(ctx, file, versionId);
  return {
    ...content,
    open: async (span) => {
      const stream = await content.open(span);
      await touchFolderAccess(ctx.db, file.folder_id, nowIso(), ACCESS_WRITE_INTERVAL_MS);
      return stream;
    },
  };
}

/** The current version of a public file, to anyone with its hash name. */
export async function publicDownload(ctx: AppContext, hashName: string): Promise<Sendable> {
  const file = await repo.findFileByHashName(ctx.db, hashName);
  if (!file || file.visibility !== 'public' || file.trash_batch !== '') throw new AppError('FILE_NOT_FOUND');
  return versionContent(ctx, file);
}

/**
 * A download through a share link: the link has unwrapped the file key with the client's key,
 * so the master key is never used. `_conditions` are the request's conditional headers, which the
 * HTTP layer now reads itself (see sendContent); kept while the links module still passes them.
 */
export async function linkDownload(ctx: AppContext, file: FileRow, fileKey: Buffer, _conditions?: unknown): Promise<Sendable> {
  return versionContent(ctx, file, undefined, fileKey);
}

/**
 * A version of a file as content to send: its size and tag, and a stream that decrypts only the
 * segments a range needs. A segment that fails authentication ends the stream with an error
 * (never in clear).
 */
async function versionContent(ctx: AppContext, file: FileRow, versionId?: string, knownFileKey?: Buffer): Promise<Sendable> {
  const { version, dataKey } = await openVersion(ctx, file, versionId, knownFileKey);
  const stored = { blobId: version.blob_id, size: Number(version.size), dataKey };
  return {
    size: stored.size,
    tag: version.id,
    name: file.name,
    contentType: version.content_type,
    open: async (span) => (await ctx.content.open(stored, span)).stream,
  };
}

/**
 * Loads the version to serve and unwraps its data key through the folder and file keys, or from
 * `knownFileKey` when the caller already holds it (a share link, which never uses the master key).
 */
async function openVersion(
  ctx: AppContext,
  file: FileRow,
  versionId?: string,
  knownFileKey?: Buffer,
): Promise<{ version: FileVersionRow; dataKey: Buffer }> {
  const version = await repo.findVersion(ctx.db, file.id, versionId ?? file.current_version_id!);
  if (!version) throw new AppError('VERSION_NOT_FOUND');
  const fileKey = knownFileKey ?? (await fileKeyOf(ctx, ctx.db, file));
  return { version, dataKey: openChildKey(fileKey, version.data_key_wrapped, version.id) };
}
