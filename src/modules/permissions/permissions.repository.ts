import { sql } from 'kysely';
import type { DbOrTrx } from '../../db/database.js';
import type { NewPermission, PermissionRow } from '../../db/schema.js';

export type ItemKind = PermissionRow['item_kind'];

export function findItemGrants(db: DbOrTrx, kind: ItemKind, itemId: string, userIds: string[]): Promise<PermissionRow[]> {
  if (userIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('permissions')
    .selectAll()
    .where('item_kind', '=', kind)
    .where('item_id', '=', itemId)
    .where('user_id', 'in', userIds)
    .execute();
}

/**
 * Inserts permissions; one that a concurrent request inserted first is updated instead, so two
 * grants racing on one (item, user) both succeed and the last one wins.
 */
export async function upsertGrants(db: DbOrTrx, rows: NewPermission[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('permissions')
    .values(rows)
    .onConflict((oc) =>
      oc.columns(['item_kind', 'item_id', 'user_id']).doUpdateSet((eb) => ({
        can_view: eb.ref('excluded.can_view'),
        can_download: eb.ref('excluded.can_download'),
        can_edit: eb.ref('excluded.can_edit'),
        updated_at: eb.ref('excluded.updated_at'),
      })),
    )
    .execute();
}

/** The permissions on an item with their grantees, oldest first. */
export function listItemGrants(db: DbOrTrx, kind: ItemKind, itemId: string) {
  return db
    .selectFrom('permissions')
    .innerJoin('users', 'users.id', 'permissions.user_id')
    .select([
      'permissions.user_id',
      'permissions.can_view',
      'permissions.can_download',
      'permissions.can_edit',
      'permissions.created_at',
      'users.email',
      'users.name',
    ])
    .where('permissions.item_kind', '=', kind)
    .where('permissions.item_id', '=', itemId)
    .orderBy('permissions.id')
    .execute();
}

/** Deletes one user's permission on an item; false when there was none. */
export async function deleteGrant(db: DbOrTrx, kind: ItemKind, itemId: string, userId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('permissions')
    .where('item_kind', '=', kind)
    .where('item_id', '=', itemId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Deletes every permission on these items (they are being deleted for good). */
export async function deleteGrantsOn(db: DbOrTrx, kind: ItemKind, itemIds: string[] | ReturnType<typeof sql>): Promise<void> {
  if (Array.isArray(itemIds)) {
    if (itemIds.length === 0) return;
    await db.deleteFrom('permissions').where('item_kind', '=', kind).where('item_id', 'in', itemIds).execute();
    return;
  }
  await sql`delete from permissions where item_kind = ${kind} and item_id in (${itemIds})`.execute(db);
}

export interface SharedWithRow {
  id: string;
  item_kind: ItemKind;
  item_id: string;
  can_view: number;
  can_download: number;
  can_edit: number;
  created_at: string;
  owner_id: string;
  owner_name: string;
  owner_email: string;
}

/**
 * One page of the grants others made to `userId` on live items, newest first (ids sort by
 * creation time), keyset on the id.
 */
export async function listGrantsTo(db: DbOrTrx, userId: string, page: { limit: number; beforeId?: string }) {
  let query = grantsToLiveItems(db, userId)
    .innerJoin('users as owner', 'owner.id', 'permissions.owner_id')
    .select([
      'permissions.id',
      'permissions.item_kind',
      'permissions.item_id',
      'permissions.can_view',
      'permissions.can_download',
      'permissions.can_edit',
      'permissions.created_at',
      'permissions.owner_id',
      'owner.name as owner_name',
      'owner.email as owner_email',
    ]);
  if (page.beforeId) query = query.where('permissions.id', '<', page.beforeId);
  const rows = (await query
    .orderBy('permissions.id', 'desc')
    .limit(page.limit + 1)
    .execute()) as SharedWithRow[];
  return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
}

/** How many live items others shared with `userId` (the `total` of /shared-with-me). */
export async function countGrantsTo(db: DbOrTrx, userId: string): Promise<number> {
  const row = await grantsToLiveItems(db, userId)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Grants to a user on items not in the trash (a trashed item is out of sight until restored). */
function grantsToLiveItems(db: DbOrTrx, userId: string) {
  return db
    .selectFrom('permissions')
    .leftJoin('folders', (join) => join.onRef('folders.id', '=', 'permissions.item_id').on('permissions.item_kind', '=', 'folder'))
    .leftJoin('files', (join) => join.onRef('files.id', '=', 'permissions.item_id').on('permissions.item_kind', '=', 'file'))
    .where('permissions.user_id', '=', userId)
    .where((eb) => eb.or([eb('folders.trash_batch', '=', ''), eb('files.trash_batch', '=', '')]));
}
