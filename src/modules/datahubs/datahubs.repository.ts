import type { DbOrTrx } from '../../db/database.js';
import type { DatahubRow } from '../../db/schema.js';

export async function insertDatahub(db: DbOrTrx, datahub: DatahubRow): Promise<void> {
  await db.insertInto('datahubs').values(datahub).execute();
}
