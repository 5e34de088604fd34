import path from 'node:path';

// The configuration imports nothing of the application (an import rule, .dependency-cruiser.cjs):
// every layer may read it, so the shapes it names are declared here.

export type RegistrationPolicy = 'open' | 'closed' | 'first-user';

/** COFFRE_CRYPTO_ENGINE: `auto` takes `native` when the addon is built, else `node` (src/content/choose-engine.ts). */
export type CryptoEngineChoice = 'auto' | 'native' | 'node';

/** An S3-compatible bucket (and prefix in it) holding the blobs. */
export interface S3Location {
  bucket: string;
  /** Prepended to every blob key, e.g. `coffre/` (empty: the bucket root). */
  prefix: string;
  /** Custom endpoint (MinIO, Ceph RGW, Garage, R2…); null: AWS S3 itself. */
  endpoint: string | null;
  region: string;
  forcePathStyle: boolean;
}

/** Where encrypted blobs live: the data folder, or an S3-compatible bucket. */
export type BlobStoreConfig =
  { readonly kind: 'fs' } | ({ readonly kind: 's3'; readonly partSize: number; readonly queueSize: number } & Readonly<S3Location>);

/** The whole runtime configuration, read once at start and frozen. Only `main.ts` and the CLI read `process.env`. */
export interface Config {
  readonly port: number;
  readonly host: string;
  /** Folder for the SQLite database and, later, blobs and the master key. */
  readonly dataDir: string;
  /** `postgres://…` for PostgreSQL; otherwise SQLite at `<dataDir>/coffre.db`. */
  readonly databaseUrl: string | null;
  /** Base URL of the links given to users (share links); null: the origin each request came to. */
  readonly publicUrl: string | null;
  readonly registration: RegistrationPolicy;
  readonly defaultQuotaBytes: number;
  /** Largest single file accepted by an upload. */
  readonly maxUploadBytes: number;
  readonly sessionTtlDays: number;
  /** Days an invitation or password-reset link stays usable. */
  readonly invitationTtlDays: number;
  /** Largest accepted JSON request body, in bytes. */
  readonly jsonBodyLimit: number;
  /** Largest accepted WebDAV XML body (PROPFIND, PROPPATCH, LOCK), in bytes. */
  readonly davXmlMaxBytes: number;
  /** Seconds a request body may go without a byte arriving before it is answered 408 (uploads included). */
  readonly bodyIdleSeconds: number;
  /** Hours an unfinished resumable upload is kept after its last request (Upload-Expires). */
  readonly uploadExpiryHours: number;
  /** Seconds a body that is not an upload (JSON) has to arrive whole. */
  readonly jsonBodySeconds: number;
  readonly logLevel: string;
  /** COFFRE_MASTER_KEY; null: read or create `<dataDir>/master.key`. */
  readonly masterKey: string | null;
  readonly trustProxy: boolean;
  /** Seconds between two runs of the blob collector; 0 turns it off. */
  readonly collectIntervalSeconds: number;
  /** How long the thumbnail job of this instance waits when there is nothing to make (0: it never runs here). */
  readonly thumbnailIntervalSeconds: number;
  /** Images declaring more pixels than this get no thumbnail (a decompression bomb is refused from its header). */
  readonly thumbnailMaxPixels: number;
  /** Time limit of one thumbnail. */
  readonly thumbnailSeconds: number;
  /** Originals larger than this (bytes) get no thumbnail: the job reads one whole into memory. */
  readonly thumbnailMaxInputBytes: number;
  /** Failed logins allowed per account, and per client address, within `loginWindowSeconds`. */
  readonly loginMaxFailuresPerAccount: number;
  readonly loginMaxFailuresPerAddress: number;
  readonly loginWindowSeconds: number;
  /** Sign-up attempts (accepted or not) allowed per client address within `registrationWindowSeconds`. */
  readonly registrationMaxPerAddress: number;
  readonly registrationWindowSeconds: number;
  /** User lookups by e-mail allowed per signed-in user, and per client address, within `lookupWindowSeconds`. */
  readonly lookupMaxPerUser: number;
  readonly lookupMaxPerAddress: number;
  readonly lookupWindowSeconds: number;
  /** COFFRE_BLOB_STORE: `fs` (default, `<dataDir>/blobs`) or an S3 bucket. */
  readonly blobStore: BlobStoreConfig;
  /** Days a trashed item stays in the trash before the upkeep deletes it for good (0: kept until emptied). */
  readonly trashRetentionDays: number;
  /** A file uploaded whole up to this many bytes is stored encrypted in the database instead of the blob store (0: never). */
  readonly inlineBlobBytes: number;
  /** COFFRE_CRYPTO_ENGINE: how stored content is sealed and opened (src/content/engine.ts). */
  readonly cryptoEngine: CryptoEngineChoice;
  /** Seconds a shutdown (SIGTERM, SIGINT) waits for the requests in flight before cutting them and exiting with 1. */
  readonly shutdownGraceSeconds: number;
}

/** Every variable the service reads, with its default; the README's configuration table mirrors this list. */
export const CONFIG_VARIABLES = [
  ['PORT', '8080', 'TCP port to listen on'],
  ['HOST', '0.0.0.0', 'Interface to listen on'],
  ['COFFRE_DATA_DIR', './data', 'Folder for the SQLite database, the encrypted blobs (`blobs/`) and the generated master key'],
  ['DATABASE_URL', '(unset: SQLite in the data folder)', '`postgres://user@host:5432/db` to use PostgreSQL'],
  [
    'COFFRE_PUBLIC_URL',
    '(unset: the address each request came to)',
    'Public base URL of the service, used in share links; unset, a link starts with the address its creator reached the server by (`X-Forwarded-Proto` and `-Host` with `COFFRE_TRUST_PROXY`)',
  ],
  ['COFFRE_REGISTRATION', 'first-user', '`open`, `closed`, or `first-user` (sign-up only while no user exists)'],
  ['COFFRE_DEFAULT_QUOTA_BYTES', '10737418240', 'Storage quota of a new account (10 GiB)'],
  ['COFFRE_MAX_UPLOAD_BYTES', '10737418240', 'Largest file one upload accepts (10 GiB); larger is 413'],
  ['COFFRE_SESSION_TTL_DAYS', '30', 'Lifetime of a login token'],
  ['COFFRE_INVITATION_TTL_DAYS', '7', 'Lifetime of an invitation or password-reset link made by an administrator (each works once)'],
  ['COFFRE_JSON_BODY_LIMIT', '1048576', 'Largest JSON request body in bytes'],
  ['COFFRE_DAV_XML_MAX_BYTES', '1048576', 'Largest WebDAV XML request body (PROPFIND, PROPPATCH, LOCK) in bytes; larger is 413'],
  [
    'COFFRE_BODY_IDLE_SECONDS',
    '60',
    'A request body (an upload too) from which no byte arrives for this long is answered 408 `REQUEST_TIMEOUT` and what it sent is freed; an upload that keeps moving is never cut',
  ],
  [
    'COFFRE_JSON_BODY_SECONDS',
    '30',
    'A request body that is not an upload (JSON) must arrive whole within this many seconds, else 408 `REQUEST_TIMEOUT`',
  ],
  ['COFFRE_LOGIN_MAX_FAILURES_PER_ACCOUNT', '5', 'Failed logins per account before 429'],
  ['COFFRE_LOGIN_MAX_FAILURES_PER_ADDRESS', '20', 'Failed logins per client address before 429'],
  ['COFFRE_LOGIN_WINDOW_SECONDS', '900', 'Window of the failed-login counters'],
  ['COFFRE_REGISTRATION_MAX_PER_ADDRESS', '10', 'Sign-up attempts per client address (accepted, taken e-mail or otherwise) before 429'],
  ['COFFRE_REGISTRATION_WINDOW_SECONDS', '3600', 'Window of the sign-up counters (at most 86400)'],
  ['COFFRE_LOOKUP_MAX_PER_USER', '60', 'User lookups by e-mail (`GET /users/lookup`) per signed-in user before 429'],
  ['COFFRE_LOOKUP_MAX_PER_ADDRESS', '300', 'User lookups by e-mail per client address before 429'],
  ['COFFRE_LOOKUP_WINDOW_SECONDS', '900', 'Window of the lookup counters (at most 86400)'],
  [
    'COFFRE_COLLECT_INTERVAL_SECONDS',
    '60',
    'How often the upkeep runs: unreferenced encrypted blobs, expired tokens, old throttle counters (0: never)',
  ],
  [
    'COFFRE_THUMBNAIL_INTERVAL_SECONDS',
    '5',
    'How long the thumbnail job of an instance rests when no image waits for its thumbnail (0: this instance makes none)',
  ],
  [
    'COFFRE_THUMBNAIL_MAX_PIXELS',
    '100000000',
    'Images declaring more pixels than this get no thumbnail (a decompression bomb is refused from its header)',
  ],
  ['COFFRE_THUMBNAIL_SECONDS', '10', 'Time limit of one thumbnail; an image taking longer keeps the generic icon'],
  ['COFFRE_THUMBNAIL_MAX_INPUT_BYTES', '67108864', 'Images larger than this (bytes) get no thumbnail'],
  ['COFFRE_TRUST_PROXY', 'false', 'Trust `X-Forwarded-*` headers (behind a reverse proxy)'],
  [
    'COFFRE_BLOB_STORE',
    'fs',
    'Where encrypted blobs live: `fs` (`<data>/blobs`) or `s3://bucket[/prefix]?endpoint=URL&region=R&forcePathStyle=true` (credentials from `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`; `partSize` and `queueSize` tune multipart uploads)',
  ],
  [
    'COFFRE_INLINE_BLOB_BYTES',
    '65536',
    'Files up to this size (a raw `PUT` body or a multipart part) are stored (encrypted) in the database instead of the blob store: one commit instead of two, a file and two fsyncs (0: never; at most 65536)',
  ],
  [
    'COFFRE_TRASH_RETENTION_DAYS',
    '30',
    'Days an item stays in the trash before the upkeep deletes it for good (retained files stay; 0: until emptied)',
  ],
  [
    'COFFRE_SHUTDOWN_GRACE_SECONDS',
    '10',
    "On SIGTERM or SIGINT, how long requests in flight (a long transfer) may run before they are cut and the process exits with 1; keep it below the process manager's own limit (Kubernetes: `terminationGracePeriodSeconds`, 30 by default)",
  ],
  [
    'COFFRE_CRYPTO_ENGINE',
    'auto',
    'How content is encrypted: `native` (the addon `npm ci` builds: AES-GCM and SHA-256 on the I/O threads), `node` (node:crypto only, the portable fallback), or `auto` (native when built); both write the same format',
  ],
  [
    'COFFRE_MASTER_KEY',
    '(unset: generated once into <data>/master.key)',
    'Instance master key, 64 hex characters; the same on every instance',
  ],
  ['LOG_LEVEL', 'info', 'pino level: fatal, error, warn, info, debug, trace, silent'],
] as const;

// AES-256, as crypto/key-wrap.ts's KEY_BYTES (which this file may not import).
const MASTER_KEY_BYTES = 32;

/** The master key from its text (COFFRE_MASTER_KEY, or the key file): 64 hex characters or base64 of 32 bytes. */
export function parseMasterKey(text: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== MASTER_KEY_BYTES) throw new Error('the master key must be 32 bytes: 64 hex characters or base64');
  return key;
}

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
  const { int, bool } = envReader(env, problems);
  const port = int('PORT', 8080, 0, 65535);
  const { registration, databaseUrl, publicUrl, blobStore, cryptoEngine, logLevel } = readChoices(env, problems);
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
    invitationTtlDays: int('COFFRE_INVITATION_TTL_DAYS', 7, 1, 365),
    jsonBodyLimit: int('COFFRE_JSON_BODY_LIMIT', 1024 * 1024, 1024),
    davXmlMaxBytes: int('COFFRE_DAV_XML_MAX_BYTES', 1024 * 1024, 1024),
    bodyIdleSeconds: int('COFFRE_BODY_IDLE_SECONDS', 60, 1, 86400),
    jsonBodySeconds: int('COFFRE_JSON_BODY_SECONDS', 30, 1, 86400),
    uploadExpiryHours: int('COFFRE_UPLOAD_EXPIRY_HOURS', 24, 1, 24 * 365),
    loginMaxFailuresPerAccount: int('COFFRE_LOGIN_MAX_FAILURES_PER_ACCOUNT', 5, 1),
    loginMaxFailuresPerAddress: int('COFFRE_LOGIN_MAX_FAILURES_PER_ADDRESS', 20, 1),
    loginWindowSeconds: int('COFFRE_LOGIN_WINDOW_SECONDS', 900, 1),
    // Windows stay under a day: the upkeep forgets counters a day old (jobs.ts).
    registrationMaxPerAddress: int('COFFRE_REGISTRATION_MAX_PER_ADDRESS', 10, 1),
    registrationWindowSeconds: int('COFFRE_REGISTRATION_WINDOW_SECONDS', 3600, 1, 86400),
    lookupMaxPerUser: int('COFFRE_LOOKUP_MAX_PER_USER', 60, 1),
    lookupMaxPerAddress: int('COFFRE_LOOKUP_MAX_PER_ADDRESS', 300, 1),
    lookupWindowSeconds: int('COFFRE_LOOKUP_WINDOW_SECONDS', 900, 1, 86400),
    collectIntervalSeconds: int('COFFRE_COLLECT_INTERVAL_SECONDS', 60, 0),
    thumbnailIntervalSeconds: int('COFFRE_THUMBNAIL_INTERVAL_SECONDS', 5, 0, 86400),
    thumbnailMaxPixels: int('COFFRE_THUMBNAIL_MAX_PIXELS', 100_000_000, 1),
    thumbnailSeconds: int('COFFRE_THUMBNAIL_SECONDS', 10, 1, 3600),
    thumbnailMaxInputBytes: int('COFFRE_THUMBNAIL_MAX_INPUT_BYTES', 64 * 1024 * 1024, 1),
    blobStore,
    trashRetentionDays: int('COFFRE_TRASH_RETENTION_DAYS', 30, 0, 36500),
    inlineBlobBytes: int('COFFRE_INLINE_BLOB_BYTES', 64 * 1024, 0, 64 * 1024),
    cryptoEngine,
    shutdownGraceSeconds: int('COFFRE_SHUTDOWN_GRACE_SECONDS', 10, 1, 86400),
    trustProxy: bool('COFFRE_TRUST_PROXY', false),
    logLevel,
    masterKey: env.COFFRE_MASTER_KEY || null,
    ...overrides,
  };
  if (env.COFFRE_MASTER_KEY) checkMasterKey(env.COFFRE_MASTER_KEY, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}

/** Reads integers and booleans from `env`; a bad value adds a problem and gives the default. */
function envReader(env: Env, problems: string[]) {
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
  return { int, bool };
}

/** The settings that name one of a few choices, or a URL; each bad one adds a problem. */
function readChoices(env: Env, problems: string[]) {
  const registration = (env.COFFRE_REGISTRATION || 'first-user') as RegistrationPolicy;
  if (!['open', 'closed', 'first-user'].includes(registration)) {
    problems.push(`COFFRE_REGISTRATION must be open, closed or first-user, got "${registration}"`);
  }
  const databaseUrl = env.DATABASE_URL || null;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push(`DATABASE_URL must be a postgres:// URL (leave it unset for SQLite), got "${databaseUrl}"`);
  }
  const publicUrl = env.COFFRE_PUBLIC_URL ? env.COFFRE_PUBLIC_URL.replace(/\/+$/, '') : null;
  if (publicUrl && !URL.canParse(publicUrl)) problems.push(`COFFRE_PUBLIC_URL must be an absolute URL, got "${publicUrl}"`);
  const blobStore = parseBlobStore(env.COFFRE_BLOB_STORE, env.AWS_REGION, problems);
  const cryptoEngine = (env.COFFRE_CRYPTO_ENGINE || 'auto') as CryptoEngineChoice;
  if (!['auto', 'native', 'node'].includes(cryptoEngine))
    problems.push(`COFFRE_CRYPTO_ENGINE must be auto, native or node, got "${cryptoEngine}"`);
  const logLevel = env.LOG_LEVEL || 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    problems.push(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "${logLevel}"`);
  }
  return { registration, databaseUrl, publicUrl, blobStore, cryptoEngine, logLevel };
}

/** Adds a problem when COFFRE_MASTER_KEY is not a key (see parseMasterKey). */
function checkMasterKey(text: string, problems: string[]): void {
  try {
    parseMasterKey(text);
  } catch (error) {
    problems.push(`COFFRE_MASTER_KEY: ${(error as Error).message}`);
  }
}

const S3_PARAMS = ['endpoint', 'region', 'forcePathStyle', 'partSize', 'queueSize'];
const MiB = 1024 * 1024;

/** Parses COFFRE_BLOB_STORE; a bad value adds one problem naming what is wrong and the expected form. */
function parseBlobStore(raw: string | undefined, awsRegion: string | undefined, problems: string[]): BlobStoreConfig {
  if (raw === undefined || raw === '' || raw === 'fs') return { kind: 'fs' };
  const expected =
    'expected `fs` or s3://bucket[/prefix]?endpoint=URL&region=R&forcePathStyle=true (optional: partSize=BYTES, queueSize=N)';
  const bad = (why: string): BlobStoreConfig => {
    problems.push(`COFFRE_BLOB_STORE ${why}, got "${raw}" (${expected})`);
    return { kind: 'fs' };
  };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return bad('is not a URL');
  }
  if (url.protocol !== 's3:') return bad(`has an unknown scheme "${url.protocol.replace(/:$/, '')}"`);
  if (url.username || url.password) return bad('must not hold credentials (use AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)');
  const bucket = url.hostname;
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
    return bad('needs a valid bucket name (3-63 lowercase letters, digits, dots, hyphens)');
  const unknown = [...url.searchParams.keys()].filter((k) => !S3_PARAMS.includes(k));
  if (unknown.length > 0) return bad(`has unknown parameter(s) ${unknown.join(', ')}`);
  let prefix = decodeURIComponent(url.pathname.replace(/^\/+/, ''));
  if (prefix && !prefix.endsWith('/')) prefix += '/';
  const endpoint = url.searchParams.get('endpoint') || null;
  if (endpoint) {
    try {
      const e = new URL(endpoint);
      if (e.protocol !== 'http:' && e.protocol !== 'https:') return bad('has an endpoint that is not http(s)');
    } catch {
      return bad('has an endpoint that is not a URL');
    }
  }
  const pathStyle = url.searchParams.get('forcePathStyle');
  if (pathStyle !== null && !['true', 'false'].includes(pathStyle)) return bad('has forcePathStyle other than true or false');
  // Multipart: parts of 5 MiB to 5 GiB (S3's limits), up to 16 in flight; memory per upload is
  // about (queueSize + 1) × partSize.
  const partSize = url.searchParams.has('partSize') ? Number(url.searchParams.get('partSize')) : 5 * MiB;
  if (!Number.isInteger(partSize) || partSize < 5 * MiB || partSize > 5 * 1024 * MiB)
    return bad(`has partSize outside ${5 * MiB}..${5 * 1024 * MiB} bytes`);
  const queueSize = url.searchParams.has('queueSize') ? Number(url.searchParams.get('queueSize')) : 2;
  if (!Number.isInteger(queueSize) || queueSize < 1 || queueSize > 16) return bad('has queueSize outside 1..16');
  return {
    kind: 's3',
    partSize,
    queueSize,
    bucket,
    prefix,
    endpoint,
    region: url.searchParams.get('region') || awsRegion || 'us-east-1',
    forcePathStyle: pathStyle === 'true',
  };
}
