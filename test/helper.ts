import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Writable } from 'node:stream';
import type { TestContext } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { LogEvent } from 'kysely';
import { buildApp } from '../src/app.js';
import { loadConfig, type Config } from '../src/config.js';
import type { CryptoEngineChoice } from '../src/content/index.js';
import type { DatabaseHandle, DialectName } from '../src/db/database.js';
import { prepareDatabase } from '../src/db/prepare.js';
import { sharedSerializers } from './support/shared-serializers.js';

/** The database dialects this run covers (set by scripts/test.mjs; SQLite alone by default). */
export const DIALECTS = (process.env.COFFRE_TEST_DIALECTS || 'sqlite').split(',') as DialectName[];
export const PG_URL = process.env.COFFRE_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const RUN_ID = process.env.COFFRE_TEST_RUN_ID || `solo${randomBytes(3).toString('hex')}`;

/** A new schema name of this run (dropped by scripts/test.mjs when the run ends). */
export function newSchemaName(): string {
  return `t_${RUN_ID}_${randomBytes(6).toString('hex')}`;
}

/**
 * The DATABASE_URL a separate process (a server, the CLI) uses to reach a test's database: the
 * PostgreSQL URL with the test's schema as search path; SQLite needs none (it is in the data folder).
 */
export function databaseUrlFor(database: DatabaseHandle): string | undefined {
  if (database.dialect !== 'postgres') return undefined;
  const url = new URL(PG_URL);
  url.searchParams.set('options', `-c search_path=${database.schema}`);
  return url.toString();
}

let defaultEngine: CryptoEngineChoice = 'auto';

/**
 * The crypto engine of the apps this test file builds when a test does not choose one: a file
 * runs another file's suites again on the portable engine by calling this before importing it.
 */
export function useCryptoEngine(engine: CryptoEngineChoice): void {
  defaultEngine = engine;
}

export interface BuildOptions {
  config?: Partial<Config>;
  /** Called for every SQL statement (to count queries). */
  onQuery?: (event: LogEvent) => void;
  /** Where the app's log lines go (with `config.logLevel`); default: no logging. */
  logStream?: Writable;
  /** Folder of a built web application to serve (default: dist/web when it exists). */
  webRoot?: string | null;
}

/**
 * Every test client comes from 127.0.0.1: the sign-up and lookup allowances of an address are
 * lifted so that tests may sign up and look up as many users as they need. Tests of those limits
 * set them in `config`.
 */
const UNTHROTTLED = {
  COFFRE_REGISTRATION_MAX_PER_ADDRESS: '1000000',
  COFFRE_LOOKUP_MAX_PER_USER: '1000000',
  COFFRE_LOOKUP_MAX_PER_ADDRESS: '1000000',
};

/** One serializer factory for every app of this process (see shared-serializers.ts). */
const serializers = sharedSerializers();

export interface TestApp {
  app: FastifyInstance;
  database: DatabaseHandle;
  config: Config;
  dialect: DialectName;
}

/**
 * A ready app on a fresh database of its own (a temp SQLite file, or a new PostgreSQL schema),
 * closed and removed when the test ends.
 */
export async function build(t: TestContext, dialect: DialectName, options: BuildOptions = {}): Promise<TestApp> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffre-test-'));
  // Schemas are dropped by scripts/test.mjs once the whole run is over: dropping them while other
  // test files run makes Kysely's migrator, which inspects every schema, fail intermittently.
  const schema = newSchemaName();
  const config = loadConfig(
    {
      COFFRE_DATA_DIR: dataDir,
      COFFRE_REGISTRATION: 'open',
      LOG_LEVEL: 'silent',
      ...UNTHROTTLED,
      ...(dialect === 'postgres' ? { DATABASE_URL: PG_URL } : {}),
    },
    { cryptoEngine: defaultEngine, ...options.config },
  );
  const database = await prepareDatabase(config, {
    pgSchema: dialect === 'postgres' ? schema : undefined,
    poolSize: 5,
    log: options.onQuery ? (event) => options.onQuery!(event) : undefined,
  });
  const app = await buildApp({
    config,
    database,
    logStream: options.logStream ?? false,
    webRoot: options.webRoot,
    buildSerializer: serializers,
  });
  await app.ready();
  t.after(async () => {
    await app.close();
    await database.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  return { app, database, config, dialect };
}

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: LightMyRequestResponse['headers'];
}

/** A small client over `app.inject` that sends JSON and parses JSON answers. */
export function client(app: FastifyInstance, token?: string) {
  async function call(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse> {
    const response = await app.inject({
      method: method as any,
      url,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
      ...(body !== undefined ? { payload: body as any } : {}),
    });
    let parsed: unknown = response.body;
    if (String(response.headers['content-type'] ?? '').includes('json') && response.body.length > 0) parsed = response.json();
    return { status: response.statusCode, body: parsed, headers: response.headers };
  }
  return {
    get: (url: string, headers?: Record<string, string>) => call('GET', url, undefined, headers),
    post: (url: string, body?: unknown, headers?: Record<string, string>) => call('POST', url, body ?? {}, headers),
    put: (url: string, body?: unknown, headers?: Record<string, string>) => call('PUT', url, body ?? {}, headers),
    patch: (url: string, body?: unknown, headers?: Record<string, string>) => call('PATCH', url, body ?? {}, headers),
    delete: (url: string, body?: unknown, headers?: Record<string, string>) => call('DELETE', url, body, headers),
  };
}

export type Client = ReturnType<typeof client>;

export interface TestUser {
  id: string;
  email: string;
  token: string;
  defaultBucketId: string;
  defaultDatahubId: string;
  api: Client;
}

let userCounter = 0;

/** Registers a new user through the API and returns a client signed in as them. */
export async function signUp(app: FastifyInstance, name = 'Test User'): Promise<TestUser> {
  const email = `user${++userCounter}-${randomBytes(3).toString('hex')}@example.com`;
  const res = await client(app).post('/api/auth/register', { email, password: 'correct horse battery', name });
  if (res.status !== 201) throw new Error(`sign-up failed: ${res.status} ${JSON.stringify(res.body)}`);
  const { user, accessToken } = res.body.data;
  return {
    id: user.id,
    email,
    token: accessToken,
    defaultBucketId: user.defaultBucketId,
    defaultDatahubId: user.defaultDatahubId,
    api: client(app, accessToken),
  };
}
