import type { ByteRange } from '../../blobs/blob-store.js';
import type { AppContext } from '../../context.js';
import { AppError } from '../../errors.js';
import { parseRange } from '../../http/range.js';
import { nowIso } from '../../lib/time.js';
import { findVersion } from '../files/files.repository.js';
import { fileService, type DownloadOptions } from '../files/files.service.js';
import type { Db } from '../../db/database.js';
import { authorizeContent, checkKey, holdAccess, unwrapWithLinkKey, type Admitted } from './link-admission.js';
import { LinkTransfer, endTransfer, renewPass } from './links.passes.js';
import type { SealedDownload, Visitor } from './links.types.js';

/**
 * A download decrypted by the server with the link key the visitor sent. Only file links count
 * downloads (a folder link counts its opens); the access is held once the key opened the chain.
 */
export async function download(ctx: AppContext, sharedHash: string, visitor: Visitor, options: DownloadOptions, transfer: LinkTransfer) {
  const { db } = ctx;
  const { link, rules, file, wraps, pass } = await authorizeContent(db, sharedHash, visitor);
  const key = await unwrapWithLinkKey(db, link, visitor, rules, wraps);
  // The key opened the chain before anything is held: a visitor without it spends nothing.
  await holdOrRenew(db, { link, pass }, file.current_version_id!, visitor, transfer);
  return fileService(ctx).linkDownload(file, key, options);
}

/**
 * The stored ciphertext and the wrapped keys from the link key down to its data key, for a
 * browser that decrypts it itself: the link key never reaches the server on this route.
 */
export async function sealed(
  ctx: AppContext,
  sharedHash: string,
  visitor: Visitor,
  options: Pick<DownloadOptions, 'range' | 'ifRange'>,
  transfer: LinkTransfer,
): Promise<SealedDownload> {
  const { db } = ctx;
  const { link, rules, file, wraps, pass } = await authorizeContent(db, sharedHash, visitor);
  await checkKey(db, link, visitor, rules, true);
  const version = await findVersion(db, file.id, file.current_version_id!);
  if (!version) throw new AppError('VERSION_NOT_FOUND');
  await holdOrRenew(db, { link, pass }, version.id, visitor, transfer);
  const etag = `"${version.id}.sealed"`;
  const stored = { id: version.id, blobId: version.blob_id, size: Number(version.size), dataKeyWrapped: version.data_key_wrapped };
  const opened = await ctx.content.sealed(stored, [{ id: link.id, wrapped: link.key_wrapped }, ...wraps], storedRange(options, etag));
  const { keyChain } = opened;
  return {
    body: opened.stream,
    length: opened.length,
    storedSize: opened.storedSize,
    range: opened.range,
    etag,
    name: file.name,
    keyIds: keyChain.map((c) => c.id),
    keyChain: keyChain.map((c) => c.wrapped),
  };
}

/**
 * A file link's download holds an access for `versionId`; a folder link counts its opens, not its
 * downloads, and one made on the open's pass (past an exhausted limit) moves the pass's window on.
 */
async function holdOrRenew(
  db: Db,
  { link, pass }: Pick<Admitted, 'link' | 'pass'>,
  versionId: string,
  visitor: Visitor,
  transfer: LinkTransfer,
) {
  if (link.kind === 'file') await holdAccess(db, link, versionId, visitor, transfer);
  else if (pass) await renewPass(db, visitor.pass!, nowIso());
}

/** A transfer of a request whose pass (if any) `endTransfer` settles when the response ends. */
export function transfer(ctx: AppContext, onError: (error: unknown) => void): LinkTransfer {
  return new LinkTransfer((pass, delivered) => endTransfer(ctx.db, pass, delivered, nowIso()).catch(onError));
}

/** Picks the range of the stored bytes to send; If-Range with another validator gets the whole (new) version. */
function storedRange(options: Pick<DownloadOptions, 'range' | 'ifRange'>, etag: string) {
  return (storedSize: number): ByteRange | undefined => {
    if (options.ifRange && options.ifRange !== etag) return undefined;
    const range = parseRange(options.range, storedSize);
    if (range.kind === 'unsatisfiable')
      throw new AppError('RANGE_NOT_SATISFIABLE', undefined, undefined, { 'content-range': `bytes */${storedSize}` });
    return range.kind === 'range' ? range : undefined;
  };
}
