import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import { prepareDatabase } from '../../src/db/prepare.js';
import { PG_URL } from '../helper.js';

/** A second app over the same PostgreSQL schema: another instance of the same deployment, closed after the test. */
export async function siblingApp(t: TestContext, database: DatabaseHandle): Promise<FastifyInstance> {
  const config = loadConfig({
    COFFRE_DATA_DIR: `/tmp/coffre-sibling-${randomBytes(4).toString('hex')}`,
    COFFRE_REGISTRATION: 'open',
    LOG_LEVEL: 'silent',
    DATABASE_URL: PG_URL,
  });
  const db = await prepareDatabase(config, { pgSchema: database.schema, poolSize: 2 });
  const app = await buildApp({ config, database: db, logStream: false, webRoot: null });
  await app.ready();
  t.after(async () => {
    await app.close();
    await db.close();
  });
  return app;
}
