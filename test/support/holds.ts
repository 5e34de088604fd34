import type { DatabaseHandle } from '../../src/db/database.js';

/** What a user's account counts against the quota: used bytes, held bytes, and the hold rows of their uploads in flight. */
export async function heldNow(database: DatabaseHandle, userId: string) {
  const user = await database.db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirstOrThrow();
  const rows = await database.db.selectFrom('upload_holds').select(['id', 'bytes']).where('user_id', '=', userId).execute();
  return { used: Number(user.used_bytes), held: Number(user.held_bytes), rows: rows.map((r) => Number(r.bytes)) };
}
