import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openBlobStore } from '../blobs/open-blob-store.js';
import { chooseEngine, createContentStore } from '../content/index.js';
import { ConfigError, loadConfig } from '../config.js';
import { Keyring } from '../crypto/keyring.js';
import { MASTER_KEY_FILE, loadMasterKey } from '../crypto/master-key.js';
import { masterKeyOpens, rewrapUnder, stageMasterKey } from '../crypto/rotate.js';
import { KEY_BYTES } from '../crypto/key-wrap.js';
import { prepareDatabase, prepareDatabaseWithReport } from '../db/prepare.js';
import { AppError } from '../errors.js';
import { accountService } from '../modules/accounts/accounts.service.js';
import { oldestBucketKey, rewrapBucketKeys } from '../modules/buckets/buckets.repository.js';
import { createTokenCache } from '../modules/accounts/tokens.cache.js';
import { createBasicAuth } from '../modules/accounts/basic-auth.use-case.js';
import { startServer } from '../server.js';

const HELP = `coffre: the Coffre file storage service

Usage:
  coffre serve                                   start the server (same as npm start)
  coffre migrate                                 bring the database schema up to date
  coffre user create --email E --password P --name N
                                                 create an account (any registration policy)
  coffre user quota --email E --bytes N          set an account's storage quota ("default" resets it)
  coffre keys rotate [--out FILE]                new master key; re-wraps the bucket keys only. The
                                                 key in <data>/master.key is replaced; with
                                                 COFFRE_MASTER_KEY set, the new key goes to FILE.
                                                 Restart every instance with the new key.

Configuration comes from environment variables; see the README.`;

async function withDatabase<T>(work: (ctx: Parameters<typeof accountService>[0]) => Promise<T>): Promise<T> {
  const config = loadConfig(process.env);
  const database = await prepareDatabase(config);
  const engine = chooseEngine(config.cryptoEngine);
  const blobs = await openBlobStore(config, engine.durableFiles);
  const tokens = createTokenCache(database);
  try {
    return await work({
      config,
      database,
      db: database.db,
      keyring: new Keyring(loadMasterKey(config.masterKey, config.dataDir)),
      blobs,
      content: createContentStore(database.db, blobs, engine),
      tokens,
      basicAuth: createBasicAuth({ config, db: database.db, tokens }),
    });
  } finally {
    await blobs.close();
    await database.close();
  }
}

function required(values: Record<string, string | boolean | undefined>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  const [command, sub, ...rest] = argv;
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  if (command === 'serve') {
    await startServer(loadConfig(process.env));
    return -1; // keeps running
  }
  if (command === 'migrate') {
    const { database, applied } = await prepareDatabaseWithReport(loadConfig(process.env));
    await database.close();
    process.stdout.write(`Database schema is up to date${applied.length ? ` (applied ${applied.join(', ')})` : ' (nothing to apply)'}.\n`);
    return 0;
  }
  if (command === 'user' && (sub === 'create' || sub === 'quota')) {
    const { values } = parseArgs({
      args: rest,
      options: { email: { type: 'string' }, password: { type: 'string' }, name: { type: 'string' }, bytes: { type: 'string' } },
      strict: true,
    });
    if (sub === 'create') {
      const email = required(values, 'email');
      const password = required(values, 'password');
      const name = required(values, 'name');
      if (password.length < 8) throw new UsageError('--password must have at least 8 characters');
      const user = await withDatabase((ctx) => accountService(ctx).createUser({ email, password, name }));
      process.stdout.write(`Created user ${user.id} <${user.email}>\n`);
      return 0;
    }
    const email = required(values, 'email');
    const raw = required(values, 'bytes');
    const bytes = raw === 'default' ? null : Number(raw);
    if (bytes !== null && (!Number.isSafeInteger(bytes) || bytes < 0))
      throw new UsageError('--bytes must be a non-negative integer or "default"');
    const user = await withDatabase((ctx) => accountService(ctx).setQuota(email, bytes));
    process.stdout.write(`Quota of <${user.email}> is now ${user.quotaBytes} bytes\n`);
    return 0;
  }
  if (command === 'keys' && sub === 'rotate') {
    const { values } = parseArgs({ args: rest, options: { out: { type: 'string' } }, strict: true });
    process.stdout.write(`${await rotateKeys(values.out)}\n`);
    return 0;
  }
  throw new UsageError(`unknown command: ${argv.join(' ')}`);
}

/** `coffre keys rotate`: the new key is saved before the bucket keys are re-wrapped, never after. */
async function rotateKeys(out: string | undefined): Promise<string> {
  const config = loadConfig(process.env);
  if (config.masterKey && !out)
    throw new UsageError("COFFRE_MASTER_KEY is set: give --out FILE for the new key (then put it in every instance's COFFRE_MASTER_KEY)");
  if (!config.masterKey && !fs.existsSync(path.join(config.dataDir, MASTER_KEY_FILE)))
    throw new UsageError(`no master key to rotate in ${config.dataDir}`);
  const currentKey = loadMasterKey(config.masterKey, config.dataDir);
  const current = new Keyring(currentKey);
  const newMaster = randomBytes(KEY_BYTES);
  const database = await prepareDatabase(config);
  try {
    if (!masterKeyOpens(currentKey, await oldestBucketKey(database.db)))
      throw new UsageError('the current master key does not open the bucket keys in this database: nothing to rotate from');
    const stage = stageMasterKey(newMaster, out ? { outFile: path.resolve(out) } : { dataDir: config.dataDir });
    let count: number;
    try {
      count = await rewrapBucketKeys(database, (bucketId, wrapped) => rewrapUnder(current, newMaster, bucketId, wrapped));
    } catch (error) {
      fs.rmSync(stage.staged, { force: true });
      throw error;
    }
    stage.commit();
    const where = out
      ? `written to ${path.resolve(out)}: set it as COFFRE_MASTER_KEY on every instance`
      : `now in ${path.join(config.dataDir, MASTER_KEY_FILE)}`;
    return `Re-wrapped ${count} bucket key(s) under a new master key, ${where}. Restart every instance with the new key; the old one no longer opens anything.`;
  } finally {
    await database.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error) => {
    if (
      error instanceof UsageError ||
      error instanceof ConfigError ||
      error instanceof AppError ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      process.stderr.write(`coffre: ${error.message}\n${error instanceof UsageError ? `\n${HELP}\n` : ''}`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`coffre: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exitCode = 1;
  },
);
