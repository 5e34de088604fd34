import { randomBytes } from 'node:crypto';
import { loadFileFor, loadFolderFor } from '../../access/access.js';
import type { AppContext, Principal } from '../../context.js';
import { openChildKey } from '../../crypto/keyring.js';
import { unwrapKey, wrapKey } from '../../crypto/key-wrap.js';
import type { FileRow, FolderRow, ShareLinkRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { newId, randomToken } from '../../lib/ids.js';
import { hashPassword } from '../../lib/secrets.js';
import { DAY_MS, isoPlus, nowIso } from '../../lib/time.js';
import { folderKey } from '../folders/folders.keys.js';
import { keyCheckOf, keyProofOf } from './links.key-proof.js';
import * as repo from './links.repository.js';
import type { LinkKind, LinkSettings } from './links.types.js';
import { listing, summary } from './links.views.js';

/**
 * Makes a link to an item the caller manages; its address starts with `baseUrl` (see publicBaseUrl).
 * The link key is kept only wrapped by the item's own key, for its owner to copy the link again.
 */
export async function create(ctx: AppContext, principal: Principal, kind: LinkKind, itemId: string, input: LinkSettings, baseUrl: string) {
  const { item, key } = await loadItem(ctx, principal, kind, itemId);
  const linkKey = randomBytes(32);
  const id = newId('lnk');
  const now = nowIso();
  const row = {
    id,
    shared_hash: randomToken(16),
    kind,
    file_id: kind === 'file' ? item.id : null,
    folder_id: kind === 'folder' ? item.id : null,
    owner_id: principal.userId,
    key_wrapped: wrapKey(linkKey, key, id),
    password_hash: input.password ? await hashPassword(input.password) : null,
    expires_at: input.expirationDays ? isoPlus(now, input.expirationDays * DAY_MS) : null,
    max_access: input.maxAccess ?? 0,
    can_view: input.canView === false ? 0 : 1,
    can_download: input.canDownload === false ? 0 : 1,
    can_edit: input.canEdit ? 1 : 0,
    is_public: input.isPublic === false ? 0 : 1,
    revoked_at: null,
    key_check: keyCheckOf(keyProofOf(linkKey)),
    link_key_wrapped: wrapKey(key, linkKey, linkKeyWrapId(id)),
    created_at: now,
    updated_at: now,
  };
  await repo.insertLink(ctx.db, row);
  // The link key in clear exists only in this response (and in `address`'s): never stored, never logged.
  return { shareLink: shareLinkOf(baseUrl, row.shared_hash, linkKey), ...summary(row as ShareLinkRow) };
}

/** A link of the caller's, its full address again: the link key unwrapped with the item's key. */
export async function address(ctx: AppContext, principal: Principal, kind: LinkKind, sharedHash: string, baseUrl: string) {
  const link = await ownLink(ctx, principal, kind, sharedHash);
  if (!link.link_key_wrapped) throw new AppError('LINK_KEY_NOT_KEPT');
  const { key } = await loadItem(ctx, principal, kind, (link.file_id ?? link.folder_id)!);
  const linkKey = unwrapKey(key, link.link_key_wrapped, linkKeyWrapId(link.id));
  return { shareLink: shareLinkOf(baseUrl, link.shared_hash, linkKey) };
}

function shareLinkOf(baseUrl: string, sharedHash: string, linkKey: Buffer): string {
  return `${baseUrl}/s/${sharedHash}#${linkKey.toString('base64url')}`;
}

/** The associated data of a link key's wrap: not the link id alone, which the item key's wrap uses. */
function linkKeyWrapId(linkId: string): string {
  return `link-key:${linkId}`;
}

/** The live links of an item the caller manages. */
export async function list(ctx: AppContext, principal: Principal, kind: LinkKind, itemId: string) {
  const item =
    kind === 'file' ? await loadFileFor(ctx.db, principal, itemId, 'manage') : await loadFolderFor(ctx.db, principal, itemId, 'manage');
  return (await repo.liveLinksOf(ctx.db, kind, item.id)).map(listing);
}

type LinkChanges = Pick<LinkSettings, 'password' | 'expirationDays' | 'maxAccess' | 'canDownload'>;

/** Changes a link's password, expiry, access limit or download permission. */
export async function update(ctx: AppContext, principal: Principal, kind: LinkKind, sharedHash: string, input: LinkChanges) {
  if (
    input.password === undefined &&
    input.expirationDays === undefined &&
    input.maxAccess === undefined &&
    input.canDownload === undefined
  ) {
    throw new AppError('EMPTY_UPDATE', undefined, [{ field: 'body', problem: 'give password, expirationDays, maxAccess or canDownload' }]);
  }
  const link = await ownLink(ctx, principal, kind, sharedHash);
  const now = nowIso();
  const changes = {
    ...(input.password !== undefined ? { password_hash: input.password === '' ? null : await hashPassword(input.password) } : {}),
    ...(input.expirationDays !== undefined
      ? { expires_at: input.expirationDays === 0 ? null : isoPlus(now, input.expirationDays * DAY_MS) }
      : {}),
    ...(input.maxAccess !== undefined ? { max_access: input.maxAccess } : {}),
    ...(input.canDownload !== undefined ? { can_download: input.canDownload ? 1 : 0 } : {}),
    updated_at: now,
  };
  await repo.updateLink(ctx.db, link.id, changes);
  return listing({ ...link, ...changes });
}

/** Revokes a link for good. */
export async function revoke(ctx: AppContext, principal: Principal, kind: LinkKind, sharedHash: string): Promise<void> {
  const link = await ownLink(ctx, principal, kind, sharedHash);
  const now = nowIso();
  await repo.updateLink(ctx.db, link.id, { revoked_at: now, updated_at: now });
}

/** The item a new link would open, with its key; trash, roots and unshareable folders refused. */
async function loadItem(
  ctx: AppContext,
  principal: Principal,
  kind: LinkKind,
  itemId: string,
): Promise<{ item: FileRow | FolderRow; key: Buffer }> {
  const { db, keyring } = ctx;
  if (kind === 'file') {
    const file = await loadFileFor(db, principal, itemId, 'manage');
    if (file.trash_batch !== '') throw new AppError('FILE_IN_TRASH');
    return { item: file, key: openChildKey(await folderKey(db, keyring, file.folder_id), file.key_wrapped, file.id) };
  }
  const folder = await loadFolderFor(db, principal, itemId, 'manage');
  if (folder.trash_batch !== '') throw new AppError('FOLDER_IN_TRASH');
  if (folder.is_root === 1) throw new AppError('ROOT_FOLDER_READONLY');
  if (folder.is_share === 0) throw new AppError('SHARING_DISABLED');
  return { item: folder, key: await folderKey(db, keyring, folder.id) };
}

/** A link of the caller's, of this kind; anyone else's (or a revoked one) is unknown. */
async function ownLink(ctx: AppContext, principal: Principal, kind: LinkKind, sharedHash: string): Promise<ShareLinkRow> {
  const link = await repo.findLinkByHash(ctx.db, sharedHash);
  if (!link || link.kind !== kind || link.owner_id !== principal.userId || link.revoked_at) throw new AppError('LINK_NOT_FOUND');
  return link;
}
