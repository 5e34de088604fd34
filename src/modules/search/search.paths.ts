import type { Principal } from '../../context.js';
import type { DbOrTrx } from '../../db/database.js';
import { folderChains, grantedFolders, type ChainLink, type SearchHit } from './search.repository.js';

/** Where a result lives, as the caller may see it. */
export interface ResultPlace {
  path: string;
  folderId: string;
}

const NOWHERE: ResultPlace = { path: '/', folderId: '' };

/**
 * The folder path of each hit, in one query for the page. An owner sees the whole path below the
 * bucket root; a grantee only from the highest folder shared with them (docs/api.md, §6), and an
 * item shared on its own shows no folder at all.
 */
export async function placesOf(db: DbOrTrx, principal: Principal, hits: SearchHit[]): Promise<Map<string, ResultPlace>> {
  const parents = [...new Set(hits.map((h) => h.parent_id).filter((id): id is string => !!id))];
  const chains = new Map<string, ChainLink[]>();
  for (const link of await folderChains(db, parents)) {
    const chain = chains.get(link.start_id) ?? [];
    chain.push(link);
    chains.set(link.start_id, chain);
  }
  for (const chain of chains.values()) chain.sort((a, b) => a.depth - b.depth);
  const sharedChainIds = hits
    .filter((h) => h.owner_id !== principal.userId)
    .flatMap((h) => (chains.get(h.parent_id ?? '') ?? []).map((l) => l.id));
  const granted = await grantedFolders(db, principal.userId, [...new Set(sharedChainIds)]);

  const places = new Map<string, ResultPlace>();
  for (const hit of hits) {
    const chain = chains.get(hit.parent_id ?? '');
    if (!chain) {
      places.set(hit.id, NOWHERE);
      continue;
    }
    const visible = hit.owner_id === principal.userId ? chain.length : visibleLength(chain, granted);
    places.set(hit.id, visible === 0 ? NOWHERE : { path: pathOf(chain.slice(0, visible)), folderId: chain[0].id });
  }
  return places;
}

/** Up to the highest folder of the chain (nearest first) shared with the caller. */
function visibleLength(chain: ChainLink[], granted: Set<string>): number {
  let length = 0;
  chain.forEach((link, i) => {
    if (granted.has(link.id)) length = i + 1;
  });
  return length;
}

/** `/A/B` from a chain nearest first; a root's name (the bucket's) is not part of a path. */
function pathOf(chain: ChainLink[]): string {
  const names = chain.filter((l) => l.is_root === 0).map((l) => l.name);
  return `/${names.reverse().join('/')}`;
}
