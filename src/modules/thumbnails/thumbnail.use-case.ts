import { loadFileFor } from '../../access/access.js';
import type { AppContext, Principal } from '../../context.js';
import { openChildKey } from '../../crypto/keyring.js';
import { AppError } from '../../errors.js';
import { assertId } from '../../lib/ids.js';
import type { Sendable } from '../../lib/sendable.js';
import { fileKeyOf } from '../files/files.tree.js';
import { THUMBNAIL_TYPE } from './thumbnail-render.js';
import { findThumbnail } from './thumbnails.repository.js';

/** A year: the longest lifetime caches are asked to keep an answer. */
const IMMUTABLE = 'private, max-age=31536000, immutable';

/**
 * The thumbnail of a file's current version, or of version `versionId`, to a principal who may
 * see the file (the right to view, as in a folder's list: no download right needed). With the
 * version named in the address the answer never changes, so caches keep it a year.
 */
export async function thumbnail(ctx: AppContext, principal: Principal, fileId: string, versionId?: string): Promise<Sendable> {
  const file = await loadFileFor(ctx.db, principal, fileId, 'view');
  if (versionId) assertId('ver', versionId, 'v');
  const id = versionId ?? file.current_version_id;
  const row = id ? await findThumbnail(ctx.db, id) : undefined;
  if (row?.file_id === file.id && row.state === 'pending') throw new AppError('THUMBNAIL_PENDING');
  if (!row || row.file_id !== file.id || row.state !== 'done' || !row.blob_id || !row.data_key_wrapped) {
    throw new AppError('THUMBNAIL_NOT_FOUND');
  }
  const fileKey = await fileKeyOf(ctx, ctx.db, file);
  const content = {
    blobId: row.blob_id,
    size: Number(row.size),
    dataKey: openChildKey(fileKey, row.data_key_wrapped, `thumbnail:${row.version_id}`),
  };
  return {
    size: content.size,
    tag: row.version_id,
    name: `${file.name}.webp`,
    contentType: THUMBNAIL_TYPE,
    cacheControl: versionId ? IMMUTABLE : undefined,
    open: async (span) => (await ctx.content.open(content, span)).stream,
  };
}
