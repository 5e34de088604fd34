/**
 * Runs `read` over `ids` in chunks and gathers the rows: an `in (...)` list stays well inside
 * SQLite's and PostgreSQL's limits on bound parameters, whatever the number of ids.
 */
export async function inChunks<T, R>(ids: readonly T[], read: (chunk: T[]) => Promise<R[]>, size = 500): Promise<R[]> {
  const rows: R[] = [];
  for (let i = 0; i < ids.length; i += size) rows.push(...(await read(ids.slice(i, i + size))));
  return rows;
}
