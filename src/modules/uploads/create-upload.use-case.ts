import type { AppContext, Principal } from '../../context.js';
import { wrapKey } from '../../crypto/key-wrap.js';
import { AppError } from '../../errors.js';
import { newId } from '../../lib/ids.js';
import { assertName } from '../../lib/names.js';
import { isoPlus, nowIso } from '../../lib/time.js';
import { UploadHold } from '../accounts/upload-holds.js';
import type { OnConflict } from '../files/files.schemas.js';
import { requireLiveFolder } from '../files/files.tree.js';
import { loadFolderWithKeyChainFor, unwrapKeyChain } from '../folders/folders.keys.js';
import { assertNameFree } from '../folders/folders.names.js';
import { expiryMs } from './append-upload.use-case.js';
import { parseMetadata } from './tus.headers.js';
import { insertUpload } from './uploads.repository.js';

export interface NewUpload {
  /** Upload-Length; undefined when deferred. */
  length?: number;
  /** The raw Upload-Metadata header. */
  metadata: string;
}

const ON_CONFLICT: readonly OnConflict[] = ['version', 'rename', 'fail'];

/**
 * Creates a resumable upload into a folder the caller may edit: the name is checked now (and
 * again when the last byte arrives), the owner's quota holds an announced length at once (507
 * otherwise), and an empty encrypted blob is staged. Resolves with the new upload's id and expiry.
 */
export async function createUpload(ctx: AppContext, principal: Principal, input: NewUpload): Promise<{ id: string; expiresAt: string }> {
  const { db, config } = ctx;
  const target = uploadTarget(input.metadata);
  if (input.length !== undefined && input.length > config.maxUploadBytes)
    throw new AppError('PAYLOAD_TOO_LARGE', `Files are limited to ${config.maxUploadBytes} bytes`);
  const { folder, chain } = await loadFolderWithKeyChainFor(db, principal, target.folderId, 'edit');
  requireLiveFolder(folder);
  if (target.onConflict === 'fail') await assertNameFree(db, folder.id, target.name);
  const id = newId('upl');
  const now = nowIso();
  const expiresAt = isoPlus(now, expiryMs(ctx));
  const hold = new UploadHold(db, folder.owner_id, config, { id, held: 0, leaseMs: expiryMs(ctx) });
  if (input.length !== undefined) await hold.take(input.length);
  try {
    const { content, dataKey } = await ctx.content.resumable.begin();
    try {
      await insertUpload(db, {
        id,
        user_id: principal.userId,
        folder_id: folder.id,
        name: target.name,
        content_type: target.contentType,
        on_conflict: target.onConflict,
        metadata: input.metadata,
        length: input.length ?? null,
        received: 0,
        blob_id: content.blobId,
        data_key_wrapped: wrapKey(unwrapKeyChain(ctx.keyring, chain), dataKey, id),
        header: content.header.toString('base64'),
        tail: content.tail.toString('base64'),
        staging: content.staging,
        state: 'open',
        created_at: now,
        updated_at: now,
        expires_at: expiresAt,
      });
    } catch (error) {
      await ctx.content.resumable.abort(content);
      throw error;
    }
  } catch (error) {
    await hold.release();
    throw error;
  }
  return { id, expiresAt };
}

/** Where the metadata says the file goes: folderId and filename (or name) are required. */
function uploadTarget(header: string): { folderId: string; name: string; contentType: string; onConflict: OnConflict } {
  const metadata = parseMetadata(header);
  const folderId = metadata.get('folderId');
  const name = metadata.get('filename') ?? metadata.get('name');
  if (!folderId || !name) throw new AppError('UPLOAD_BAD_METADATA', 'Upload-Metadata must name folderId and filename');
  const onConflict = (metadata.get('onConflict') ?? 'version') as OnConflict;
  if (!ON_CONFLICT.includes(onConflict)) throw new AppError('UPLOAD_BAD_METADATA', 'onConflict must be version, rename or fail');
  const contentType = metadata.get('filetype') || metadata.get('contentType') || 'application/octet-stream';
  if (contentType.length > 255 || /[\r\n]/.test(contentType)) throw new AppError('UPLOAD_BAD_METADATA', 'The content type is not valid');
  return { folderId, name: assertName(name), contentType, onConflict };
}
