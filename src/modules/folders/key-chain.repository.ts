import { sql } from 'kysely';
import type { DbOrTrx } from '../../db/database.js';
import { preparedQuery } from '../../db/prepared-query.js';
import type { FolderRow } from '../../db/schema.js';

export interface KeyChain {
  bucketId: string;
  bucketKeyWrapped: string;
  /** The wrapped keys from the bucket's root folder down to the folder asked for. */
  folders: { id: string; key_wrapped: string }[];
}

/** The recursive CTE `chain (id, parent_id, key_wrapped, bucket_id, depth)`: the folder `folderId` (depth 0) and its ancestors. */
function keyChainCte(folderId: string) {
  return sql`
    with recursive chain (id, parent_id, key_wrapped, bucket_id, depth) as (
      select id, parent_id, key_wrapped, bucket_id, 0 from folders where id = ${folderId}
      union all
      select f.id, f.parent_id, f.key_wrapped, f.bucket_id, chain.depth + 1 from folders f join chain on f.id = chain.parent_id
    )`;
}

/** Everything needed to unwrap a folder's key from the master key, in one query (every upload runs it: built once). */
const keyChainRows = preparedQuery(
  (_db, p: { folderId: string }) => sql<{ id: string; key_wrapped: string; depth: number; bucket_id: string; bucket_key: string }>`
    ${keyChainCte(p.folderId)}
    select chain.id, chain.key_wrapped, chain.depth, chain.bucket_id, buckets.key_wrapped as bucket_key
    from chain join buckets on buckets.id = chain.bucket_id
    order by chain.depth desc
  `,
);

export async function keyChain(db: DbOrTrx, folderId: string): Promise<KeyChain | undefined> {
  const rows = await keyChainRows.execute(db, { folderId });
  if (rows.length === 0) return undefined;
  const root = rows[0];
  return {
    bucketId: root.bucket_id,
    bucketKeyWrapped: root.bucket_key,
    folders: rows.map((r) => ({ id: r.id, key_wrapped: r.key_wrapped })),
  };
}

/**
 * A folder and its key chain in one statement (every upload reads both: on PostgreSQL one round
 * trip less), or undefined when the folder or its bucket does not exist.
 */
export async function findFolderWithKeyChain(db: DbOrTrx, folderId: string): Promise<{ folder: FolderRow; chain: KeyChain } | undefined> {
  const rows = await folderWithKeyChainRows.execute(db, { folderId });
  if (rows.length === 0) return undefined;
  const {
    chain_id: _id,
    chain_key_wrapped: _key,
    chain_bucket_id: bucketId,
    chain_bucket_key: bucketKeyWrapped,
    ...folder
  } = rows[rows.length - 1];
  const chain = { bucketId, bucketKeyWrapped, folders: rows.map((r) => ({ id: r.chain_id, key_wrapped: r.chain_key_wrapped })) };
  return { folder: folder as FolderRow, chain };
}

/** The key chain's rows, root first; the last (the folder's own) carries the folder's columns too. */
const folderWithKeyChainRows = preparedQuery(
  (_db, p: { folderId: string }) => sql<
    Partial<FolderRow> & { chain_id: string; chain_key_wrapped: string; chain_bucket_id: string; chain_bucket_key: string }
  >`
    ${keyChainCte(p.folderId)}
    select folder.*, chain.id as chain_id, chain.key_wrapped as chain_key_wrapped, chain.bucket_id as chain_bucket_id, buckets.key_wrapped as chain_bucket_key
    from chain join buckets on buckets.id = chain.bucket_id
    left join folders folder on chain.depth = 0 and folder.id = chain.id
    order by chain.depth desc
  `,
);
