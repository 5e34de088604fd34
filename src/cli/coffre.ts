import { parseArgs } from 'node:util';
import { openBlobStore } from '../blobs/open-blob-store.js';
import { ConfigError, loadConfig } from '../config.js';
import { Keyring } from '../crypto/keyring.js';
import { loadMasterKey } from '../crypto/master-key.js';
import { prepareDatabase, prepareDatabaseWithReport } from '../db/prepare.js';
import { AppError } from '../errors.js';
import { accountService } from '../modules/accounts/accounts.service.js';
import { startServer } from '../server.js';

const HELP = `coffre: the Coffre file storage service

Usage:
  coffre serve                                   start the server (same as npm start)
  coffre migrate                                 bring the database schema up to date
  coffre user create --email E --password P --name N
                                                 create an account (any registration policy)
  coffre user quota --email E --bytes N          set an account's storage quota ("default" resets it)

Configuration comes from environment variables; see the README.`;

async function withDatabase<T>(work: (ctx: Parameters<typeof accountService>[0]) => Promise<T>): Promise<T> {
  const config = loadConfig(process.env);
  const database = await prepareDatabase(config);
  const blobs = openBlobStore(config);
  try {
    return await work({ config, database, db: database.db, keyring: new Keyring(loadMasterKey(config.masterKey, config.dataDir)), blobs });
  } finally {
    await blobs.close?.();
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
    if (bytes !== null && (!Number.isSafeInteger(bytes) || bytes < 0)) throw new UsageError('--bytes must be a non-negative integer or "default"');
    const user = await withDatabase((ctx) => accountService(ctx).setQuota(email, bytes));
    process.stdout.write(`Quota of <${user.email}> is now ${user.quotaBytes} bytes\n`);
    return 0;
  }
  throw new UsageError(`unknown command: ${argv.join(' ')}`);
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error) => {
    if (error instanceof UsageError || error instanceof ConfigError || error instanceof AppError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`coffre: ${error.message}\n${error instanceof UsageError ? `\n${HELP}\n` : ''}`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`coffre: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exitCode = 1;
  },
);
