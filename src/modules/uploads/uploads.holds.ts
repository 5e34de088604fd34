import type { DbOrTrx } from '../../db/database.js';

/** What an upload's hold (the `upload_holds` row of the same id) holds now; 0 when it has none. */
export async function heldBytes(db: DbOrTrx, uploadId: string): Promise<number> {
  const row = await db.selectFrom('upload_holds').select('bytes').where('id', '=', uploadId).executeTakeFirst();
  return Number(row?.bytes ?? 0);
}

/** An upload's hold lasts as long as the upload: each request that extends the upload extends it too. */
export async function extendHold(db: DbOrTrx, uploadId: string, expiresAt: string): Promise<void> {
  await db.updateTable('upload_holds').set({ expires_at: expiresAt }).where('id', '=', uploadId).execute();
}
