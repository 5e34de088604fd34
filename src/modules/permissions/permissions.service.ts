import { loadFileFor, loadFolderFor, visibleParentId } from '../../access/access.js';
import type { AppContext, Principal } from '../../context.js';
import type { DbOrTrx } from '../../db/database.js';
import type { FolderRow, NewPermission, PermissionRow } from '../../db/schema.js';
import { mutation } from '../../db/transaction.js';
import { AppError } from '../../errors.js';
import { DEFAULT_PAGE_SIZE, decodeCursor, encodeCursor } from '../../lib/cursor.js';
import { assertId, newId } from '../../lib/ids.js';
import { nowIso } from '../../lib/time.js';
import { fileDetailFor } from '../files/files.detail.js';
import { findFolders } from '../folders/folders.repository.js';
import { listItem } from '../folders/folders.views.js';
import * as repo from './permissions.repository.js';
import type { Grant, Permission, ShareUser, SharedItem } from './permissions.schemas.js';

export type ItemKind = repo.ItemKind;

/** Users one request may name: the statement stays small, and a mistaken paste fails early. */
export const MAX_GRANTEES = 100;

/** A user's permission on an item, as `PUT /files/shared/...` and the share-users routes return it. */
function permissionView(row: PermissionRow): Permission {
  return {
    userId: row.user_id,
    canView: row.can_view === 1,
    canDownload: row.can_download === 1,
    canEdit: row.can_edit === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

const flag = (value: boolean) => (value ? 1 : 0);

export function permissionService(ctx: AppContext) {
  const { db } = ctx;

  /** The item whose permissions the caller manages: only its owner may (others: 404). */
  async function loadManagedItem(trx: DbOrTrx, principal: Principal, kind: ItemKind, itemId: string): Promise<{ id: string; owner_id: string }> {
    if (kind === 'file') {
      const file = await loadFileFor(trx, principal, assertId('fil', itemId, 'fileId'), 'manage');
      if (file.trash_batch !== '') throw new AppError('FILE_IN_TRASH');
      return file;
    }
    const folder = await loadFolderFor(trx, principal, assertId('fld', itemId, 'folderId'), 'manage');
    // Sharing a root would hand out the whole bucket; share its folders instead.
    if (folder.is_root) throw new AppError('ROOT_FOLDER_READONLY');
    if (folder.trash_batch !== '') throw new AppError('FOLDER_IN_TRASH');
    return folder;
  }

  /** Checks the grantees: well-formed ids, not the caller, at most MAX_GRANTEES; the last grant of a user wins. */
  function normalise(principal: Principal, grants: Grant[]): Grant[] {
    if (grants.length === 0 || grants.length > MAX_GRANTEES) {
      throw new AppError('VALIDATION_FAILED', `Name between 1 and ${MAX_GRANTEES} users`, [{ field: 'userId', problem: `1 to ${MAX_GRANTEES} users` }]);
    }
    const byUser = new Map<string, Grant>();
    for (const grant of grants) {
      assertId('usr', grant.userId, 'userId');
      if (grant.userId === principal.userId) throw new AppError('SHARE_WITH_SELF');
      byUser.set(grant.userId, grant);
    }
    return [...byUser.values()];
  }

  /**
   * Creates or updates the permissions of several users on one item, all or nothing: an unknown
   * user (404 USER_NOT_FOUND), or with `createOrUpdate: false` a user without a permission yet
   * (404 PERMISSION_NOT_FOUND), changes nothing. `created` tells whether any permission is new.
   */
  async function grant(
    principal: Principal,
    kind: ItemKind,
    itemId: string,
    input: Grant[],
    createOrUpdate = true,
  ): Promise<{ created: boolean; permissions: Permission[] }> {
    const grants = normalise(principal, input);
    const userIds = grants.map((g) => g.userId);
    return mutation(db, async (trx) => {
      const item = await loadManagedItem(trx, principal, kind, itemId);
      const known = new Set((await trx.selectFrom('users').select('id').where('id', 'in', userIds).execute()).map((u) => u.id));
      const unknown = userIds.find((id) => !known.has(id));
      if (unknown) throw new AppError('USER_NOT_FOUND', `No user ${unknown}`);
      const existing = new Set((await repo.findItemGrants(trx, kind, item.id, userIds)).map((p) => p.user_id));
      const absent = userIds.find((id) => !existing.has(id));
      if (absent && !createOrUpdate) throw new AppError('PERMISSION_NOT_FOUND', `User ${absent} holds no permission on this item`);
      const now = nowIso();
      const rows: NewPermission[] = grants.map((g) => ({
        id: newId('prm'),
        item_kind: kind,
        item_id: item.id,
        owner_id: item.owner_id,
        user_id: g.userId,
        can_view: flag(g.canView ?? true),
        can_download: flag(g.canDownload ?? true),
        can_edit: flag(g.canEdit ?? false),
        created_at: now,
        updated_at: now,
      }));
      await repo.upsertGrants(trx, rows);
      const saved = await repo.findItemGrants(trx, kind, item.id, userIds);
      const order = new Map(userIds.map((id, i) => [id, i]));
      saved.sort((a, b) => order.get(a.user_id)! - order.get(b.user_id)!);
      return { created: absent !== undefined, permissions: saved.map(permissionView) };
    });
  }

  async function list(principal: Principal, kind: ItemKind, itemId: string): Promise<ShareUser[]> {
    const item = await loadManagedItem(db, principal, kind, itemId);
    return (await repo.listItemGrants(db, kind, item.id)).map((row) => ({
      userId: row.user_id,
      email: row.email,
      name: row.name,
      canView: row.can_view === 1,
      canDownload: row.can_download === 1,
      canEdit: row.can_edit === 1,
      createdAt: row.created_at,
    }));
  }

  /** Takes a user's permission away; it stops working with the next request. */
  async function revoke(principal: Principal, kind: ItemKind, itemId: string, userId: string): Promise<void> {
    assertId('usr', userId, 'userId');
    await mutation(db, async (trx) => {
      const item = await loadManagedItem(trx, principal, kind, itemId);
      if (!(await repo.deleteGrant(trx, kind, item.id, userId))) throw new AppError('PERMISSION_NOT_FOUND');
    });
  }

  /** The live items other users shared with the caller, newest grant first. */
  async function sharedWithMe(principal: Principal, query: { limit?: number; cursor?: string }) {
    const beforeId = query.cursor ? String(decodeCursor(query.cursor, 1)[0]) : undefined;
    const page = await repo.listGrantsTo(db, principal.userId, { limit: query.limit ?? DEFAULT_PAGE_SIZE, beforeId });
    const idsOf = (kind: ItemKind) => page.rows.filter((r) => r.item_kind === kind).map((r) => r.item_id);
    const fileIds = idsOf('file');
    const folders = await findFolders(db, idsOf('folder'));
    const files = fileIds.length ? await db.selectFrom('files').selectAll().where('id', 'in', fileIds).execute() : [];
    // The folder holding a shared item is named only when the caller may see it too.
    const folderItem = async (f: FolderRow) => ({ ...listItem(f), parentId: await visibleParentId(db, principal, { owner_id: f.owner_id, parentId: f.parent_id }) });
    const folderById = new Map(await Promise.all([...folders.values()].map(async (f) => [f.id, await folderItem(f)] as const)));
    const fileById = new Map(await Promise.all(files.map(async (f) => [f.id, await fileDetailFor(db, principal, f)] as const)));
    const data: SharedItem[] = page.rows.map((row) => {
      const folder = row.item_kind === 'folder' ? folderById.get(row.item_id) ?? null : null;
      const file = row.item_kind === 'file' ? fileById.get(row.item_id) ?? null : null;
      return {
        itemType: row.item_kind,
        itemId: row.item_id,
        name: folder?.name ?? file?.name ?? '',
        owner: { userId: row.owner_id, name: row.owner_name, email: row.owner_email },
        permission: { canView: row.can_view === 1, canDownload: row.can_download === 1, canEdit: row.can_edit === 1 },
        sharedAt: row.created_at,
        folder,
        file,
      };
    });
    const last = page.rows[page.rows.length - 1];
    return { data, total: await repo.countGrantsTo(db, principal.userId), nextCursor: page.hasMore && last ? encodeCursor([last.id]) : null };
  }

  return { grant, list, revoke, sharedWithMe };
}
