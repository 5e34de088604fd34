import path from 'node:path';
import { parseMasterKey } from './crypto/master-key.js';

export type RegistrationPolicy = 'open' | 'closed' | 'first-user';

/** The whole runtime configuration, read once at start and frozen. Only `main.ts` and the CLI read `process.env`. */
export interface Config {
  readonly port: number;
  readonly host: string;
  /** Folder for the SQLite database and, later, blobs and the master key. */
  readonly dataDir: string;
  /** `postgres://…` for PostgreSQL; otherwise SQLite at `<dataDir>/coffre.db`. */
  readonly databaseUrl: string | null;
  /** Base URL used in links given to users, e.g. share links. */
  readonly publicUrl: string;
  readonly registration: RegistrationPolicy;
  readonly defaultQuotaBytes: number;
  /** Largest single file accepted by an upload. */
  readonly maxUploadBytes: number;
  readonly sessionTtlDays: number;
  /** Largest accepted JSON request body, in bytes. */
  readonly jsonBodyLimit: number;
  readonly logLevel: string;
  /** COFFRE_MASTER_KEY; null: read or create `<dataDir>/master.key`. */
  readonly masterKey: string | null;
  readonly trustProxy: boolean;
  /** Seconds between two runs of the blob collector; 0 turns it off. */
  readonly collectIntervalSeconds: number;
  /** Failed logins allowed per account, and per client address, within `loginWindowSeconds`. */
  readonly loginMaxFailuresPerAccount: number;
  readonly loginMaxFailuresPerAddress: number;
  readonly loginWindowSeconds: number;
}

/** Every variable the service reads, with its default; the README's configuration table mirrors this list. */
export const CONFIG_VARIABLES = [
  ['PORT', '8080', 'TCP port to listen on'],
  ['HOST', '0.0.0.0', 'Interface to listen on'],
  ['COFFRE_DATA_DIR', './data', 'Folder for the SQLite database, the encrypted blobs (`blobs/`) and the generated master key'],
  ['DATABASE_URL', '(unset: SQLite in the data folder)', '`postgres://user@host:5432/db` to use PostgreSQL'],
  ['COFFRE_PUBLIC_URL', 'http://localhost:<PORT>', 'Public base URL of the service, used in links'],
  ['COFFRE_REGISTRATION', 'first-user', '`open`, `closed`, or `first-user` (sign-up only while no user exists)'],
  ['COFFRE_DEFAULT_QUOTA_BYTES', '10737418240', 'Storage quota of a new account (10 GiB)'],
  ['COFFRE_MAX_UPLOAD_BYTES', '10737418240', 'Largest file one upload accepts (10 GiB); larger is 413'],
  ['COFFRE_SESSION_TTL_DAYS', '30', 'Lifetime of a login token'],
  ['COFFRE_JSON_BODY_LIMIT', '1048576', 'Largest JSON request body in bytes'],
  ['COFFRE_LOGIN_MAX_FAILURES_PER_ACCOUNT', '5', 'Failed logins per account before 429'],
  ['COFFRE_LOGIN_MAX_FAILURES_PER_ADDRESS', '20', 'Failed logins per client address before 429'],
  ['COFFRE_LOGIN_WINDOW_SECONDS', '900', 'Window of the failed-login counters'],
  ['COFFRE_COLLECT_INTERVAL_SECONDS', '60', 'How often the upkeep runs: unreferenced encrypted blobs, expired tokens, old throttle counters (0: never)'],
  ['COFFRE_TRUST_PROXY', 'false', 'Trust `X-Forwarded-*` headers (behind a reverse proxy)'],
  ['COFFRE_MASTER_KEY', '(unset: generated once into <data>/master.key)', 'Instance master key, 64 hex characters; the same on every instance'],
  ['LOG_LEVEL', 'info', 'pino level: fatal, error, warn, info, debug, trace, silent'],
] as const;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** Builds the configuration from environment variables; throws one ConfigError naming every bad variable. */
export function loadConfig(env: Env = {}, overrides: Partial<Config> = {}): Config {
  const problems: string[] = [];
  const int = (name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      problems.push(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
      return fallback;
    }
    return value;
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (['1', 'true', 'yes'].includes(raw.toLowerCase())) return true;
    if (['0', 'false', 'no'].includes(raw.toLowerCase())) return false;
    problems.push(`${name} must be true or false, got "${raw}"`);
    return fallback;
  };

  const port = int('PORT', 8080, 0, 65535);
  const registration = (env.COFFRE_REGISTRATION || 'first-user') as RegistrationPolicy;
  if (!['open', 'closed', 'first-user'].includes(registration)) {
    problems.push(`COFFRE_REGISTRATION must be open, closed or first-user, got "${registration}"`);
  }
  const databaseUrl = env.DATABASE_URL || null;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push(`DATABASE_URL must be a postgres:// URL (leave it unset for SQLite), got "${databaseUrl}"`);
  }
  const publicUrl = (env.COFFRE_PUBLIC_URL || `http://localhost:${port}`).replace(/\/+$/, '');
  try {
    new URL(publicUrl);
  } catch {
    problems.push(`COFFRE_PUBLIC_URL must be an absolute URL, got "${publicUrl}"`);
  }
  const logLevel = env.LOG_LEVEL || 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    problems.push(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "${logLevel}"`);
  }

  const config: Config = {
    port,
    host: env.HOST || '0.0.0.0',
    dataDir: path.resolve(env.COFFRE_DATA_DIR || './data'),
    databaseUrl,
    publicUrl,
    registration,
    defaultQuotaBytes: int('COFFRE_DEFAULT_QUOTA_BYTES', 10 * 1024 ** 3, 0),
    maxUploadBytes: int('COFFRE_MAX_UPLOAD_BYTES', 10 * 1024 ** 3, 1),
    sessionTtlDays: int('COFFRE_SESSION_TTL_DAYS', 30, 1, 3650),
    jsonBodyLimit: int('COFFRE_JSON_BODY_LIMIT', 1024 * 1024, 1024),
    loginMaxFailuresPerAccount: int('COFFRE_LOGIN_MAX_FAILURES_PER_ACCOUNT', 5, 1),
    loginMaxFailuresPerAddress: int('COFFRE_LOGIN_MAX_FAILURES_PER_ADDRESS', 20, 1),
    loginWindowSeconds: int('COFFRE_LOGIN_WINDOW_SECONDS', 900, 1),
    collectIntervalSeconds: int('COFFRE_COLLECT_INTERVAL_SECONDS', 60, 0),
    trustProxy: bool('COFFRE_TRUST_PROXY', false),
    logLevel,
    masterKey: env.COFFRE_MASTER_KEY || null,
    ...overrides,
  };
  if (env.COFFRE_MASTER_KEY) {
    try {
      parseMasterKey(env.COFFRE_MASTER_KEY);
    } catch (error) {
      problems.push(`COFFRE_MASTER_KEY: ${(error as Error).message}`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}
