import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { ConfigError, type Config } from './config.js';
import { Keyring } from './crypto/keyring.js';
import { loadMasterKey } from './crypto/master-key.js';
import { masterKeyOpens } from './crypto/rotate.js';
import { prepareDatabase } from './db/prepare.js';
import { closeGracefully } from './http/graceful-close.js';
import { limitHeapGrowth } from './lib/heap-growth.js';
import { oldestBucketKey } from './modules/buckets/buckets.repository.js';

/** Starts a listening server and wires graceful shutdown on SIGTERM/SIGINT. */
export async function startServer(config: Config): Promise<FastifyInstance> {
  limitHeapGrowth();
  const database = await prepareDatabase(config);
  const masterKey = loadMasterKey(config.masterKey, config.dataDir);
  if (!masterKeyOpens(masterKey, await oldestBucketKey(database.db))) {
    await database.close();
    throw new ConfigError([
      'COFFRE_MASTER_KEY: the master key does not open the bucket keys in this database: every instance needs the same COFFRE_MASTER_KEY (after `coffre keys rotate`, the new one)',
    ]);
  }
  const app = await buildApp({ config, database, keyring: new Keyring(masterKey) });
  app.addHook('onClose', async () => database.close());

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(() => {
      app.log.error(`shutdown took longer than ${config.shutdownGraceSeconds} s (COFFRE_SHUTDOWN_GRACE_SECONDS), exiting`);
      process.exit(1);
    }, config.shutdownGraceSeconds * 1000);
    force.unref();
    closeGracefully(app).then(
      () => process.exit(0),
      (error) => {
        app.log.error({ err: error }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));

  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const where = config.databaseUrl ? 'PostgreSQL' : `SQLite in ${config.dataDir}`;
  app.log.info(`Coffre is listening on http://localhost:${port} (${where}); API reference at http://localhost:${port}/api/docs`);
  // Also on stdout in plain words, for a person who just ran `npm start`.
  process.stdout.write(`\nCoffre is running: http://localhost:${port}  (API reference: http://localhost:${port}/api/docs)\n\n`);
  return app;
}
