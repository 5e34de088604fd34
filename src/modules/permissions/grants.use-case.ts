import type { AppContext, Principal } from '../../context.js';
import type { DbOrTrx } from '../../db/database.js';
import type { NewPermission, PermissionRow } from '../../db/schema.js';
import { mutation } from '../../db/transaction.js';
import { AppError } from '../../errors.js';
import { assertId, newId } from '../../lib/ids.js';
import { nowIso } from '../../lib/time.js';
import { loadManagedItem, permissionView } from './permissions.items.js';
import * as repo from './permissions.repository.js';
import type { ItemKind } from './permissions.repository.js';
import type { Grant, Permission, ShareUser } from './permissions.schemas.js';

/** Users one request may name: the statement stays small, and a mistaken paste fails early. */
export const MAX_GRANTEES = 100;

/**
 * Creates or updates the permissions of several users on one item, all or nothing: an unknown
 * user (404 USER_NOT_FOUND), or with `createOrUpdate: false` a user without a permission yet
 * (404 PERMISSION_NOT_FOUND), changes nothing. `created` tells whether any permission is new.
 */
export async function grant(
  ctx: AppContext,
  principal: Principal,
  kind: ItemKind,
  itemId: string,
  input: Grant[],
  createOrUpdate = true,
): Promise<{ created: boolean; permissions: Permission[] }> {
  const grants = normalise(principal, input);
  const userIds = grants.map((g) => g.userId);
  return mutation(ctx.db, async (trx) => {
    const item = await loadManagedItem(trx, principal, kind, itemId);
    await assertUsersExist(trx, userIds);
    const existing = new Set((await repo.findItemGrants(trx, kind, item.id, userIds)).map((p) => p.user_id));
    const absent = userIds.find((id) => !existing.has(id));
    if (absent && !createOrUpdate) throw new AppError('PERMISSION_NOT_FOUND', `User ${absent} holds no permission on this item`);
    await repo.upsertGrants(trx, grantRows(kind, item, grants, nowIso()));
    const saved = inOrderOf(userIds, await repo.findItemGrants(trx, kind, item.id, userIds));
    return { created: absent !== undefined, permissions: saved.map(permissionView) };
  });
}

/** The users with a permission on the item itself, for its owner. */
export async function list(ctx: AppContext, principal: Principal, kind: ItemKind, itemId: string): Promise<ShareUser[]> {
  const { db } = ctx;
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
export async function revoke(ctx: AppContext, principal: Principal, kind: ItemKind, itemId: string, userId: string): Promise<void> {
  assertId('usr', userId, 'userId');
  await mutation(ctx.db, async (trx) => {
    const item = await loadManagedItem(trx, principal, kind, itemId);
    if (!(await repo.deleteGrant(trx, kind, item.id, userId))) throw new AppError('PERMISSION_NOT_FOUND');
  });
}

/** Checks the grantees: well-formed ids, not the caller, at most MAX_GRANTEES; the last grant of a user wins. */
function normalise(principal: Principal, grants: Grant[]): Grant[] {
  if (grants.length === 0 || grants.length > MAX_GRANTEES) {
    throw new AppError('VALIDATION_FAILED', `Name between 1 and ${MAX_GRANTEES} users`, [
      { field: 'userId', problem: `1 to ${MAX_GRANTEES} users` },
    ]);
  }
  const byUser = new Map<string, Grant>();
  for (const grant of grants) {
    assertId('usr', grant.userId, 'userId');
    if (grant.userId === principal.userId) throw new AppError('SHARE_WITH_SELF');
    byUser.set(grant.userId, grant);
  }
  return [...byUser.values()];
}

/** Refuses the whole grant when any user named does not exist (404 USER_NOT_FOUND, the first one named). */
async function assertUsersExist(trx: DbOrTrx, userIds: string[]): Promise<void> {
  const known = new Set((await trx.selectFrom('users').select('id').where('id', 'in', userIds).execute()).map((u) => u.id));
  const unknown = userIds.find((id) => !known.has(id));
  if (unknown) throw new AppError('USER_NOT_FOUND', `No user ${unknown}`);
}

const flag = (value: boolean) => (value ? 1 : 0);

/** The rows of the grants, with their defaults: view and download yes, edit no. */
function grantRows(kind: ItemKind, item: { id: string; owner_id: string }, grants: Grant[], now: string): NewPermission[] {
  return grants.map((g) => ({
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
}

/** The permissions in the order their users were named. */
function inOrderOf(userIds: string[], saved: PermissionRow[]): PermissionRow[] {
  const order = new Map(userIds.map((id, i) => [id, i]));
  return saved.sort((a, b) => order.get(a.user_id)! - order.get(b.user_id)!);
}
