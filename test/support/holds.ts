import path from 'node:path';
import type { TestContext } from 'node:test';
import { FsBlobStore } from '../../src/blobs/fs/fs-blob-store.js';
import { chooseEngine, createContentStore } from '../../src/content/index.js';
import type { AppContext } from '../../src/context.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import type { TestApp } from '../helper.js';

/** What a user's account counts against the quota: used bytes, held bytes, and the hold rows of their uploads in flight. */
export async function heldNow(database: DatabaseHandle, userId: string) {
  const user = await database.db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirstOrThrow();
  const rows = await database.db.selectFrom('upload_holds').select(['id', 'bytes']).where('user_id', '=', userId).execute();
  return { used: Number(user.used_bytes), held: Number(user.held_bytes), rows: rows.map((r) => Number(r.bytes)) };
}

/**
 * A context for running the upkeep round (src/jobs.ts maintenanceRound) over a test app's
 * database and data folder: the app keeps its own context to itself.
 */
export function upkeepContext(t: Pick<TestContext, 'after'>, test: TestApp): AppContext {
  const blobs = new FsBlobStore(path.join(test.config.dataDir, 'blobs'));
  t.after(() => blobs.close());
  const content = createContentStore(test.database.db, blobs, chooseEngine(test.config.cryptoEngine));
  return { config: test.config, database: test.database, db: test.database.db, blobs, content } as unknown as AppContext;
}
