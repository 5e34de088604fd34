import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { PG_URL, databaseUrlFor, newSchemaName } from '../helper.js';
import { startTestS3, type TestS3 } from './s3.js';

/** One real Coffre server process (`node --import tsx src/main.ts`), on a port of its own. */
export interface Instance {
  name: string;
  url: string;
  process: ChildProcess;
  /** Every JSON log line the process wrote so far. */
  logs: Record<string, unknown>[];
  /** Everything else it wrote (stderr, plain stdout lines). */
  output: string[];
  stop(): Promise<void>;
}

const ROOT = new URL('../../', import.meta.url).pathname;

/** Starts a server with `env` (added to a clean copy of this process's environment); resolves once it listens. */
export async function startInstance(name: string, env: Record<string, string>): Promise<Instance> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `coffre-${name}-`));
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HOST: '127.0.0.1', PORT: '0', COFFRE_DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  const output: string[] = [];
  let pending = '';
  let resolveUrl: (url: string) => void;
  const listening = new Promise<string>((resolve) => (resolveUrl = resolve));
  child.stdout!.setEncoding('utf8').on('data', (text: string) => {
    pending += text;
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) {
      const running = /Coffre is running: (http:\/\/localhost:\d+)/.exec(line);
      if (running) resolveUrl(running[1].replace('localhost', '127.0.0.1'));
      if (line.startsWith('{')) {
        try {
          logs.push(JSON.parse(line));
          continue;
        } catch {
          // not a log line
        }
      }
      if (line.trim()) output.push(line);
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (text: string) => output.push(text));
  const exited = once(child, 'exit');
  const url = await Promise.race([
    listening,
    exited.then(([code]) => {
      throw new Error(`instance ${name} exited with ${code} before listening:\n${output.join('\n')}`);
    }),
    // Three instances compile the app through tsx at once, beside the rest of the suite on two
    // cores: 30 s was not always enough (a full run on 2026-11-29). A stuck instance still fails.
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`instance ${name} did not listen within 120 s:\n${output.join('\n')}`)), 120_000).unref(),
    ),
  ]).catch((error) => {
    child.kill('SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw error;
  });
  return {
    name,
    url,
    process: child,
    logs,
    output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface HttpAnswer {
  status: number;
  headers: Headers;
  body: any;
  raw: Buffer;
}

/** One HTTP request to an instance; JSON bodies are sent and parsed. */
export async function http(
  base: string,
  method: string,
  url: string,
  options: { token?: string; json?: unknown; body?: Buffer; headers?: Record<string, string> } = {},
): Promise<HttpAnswer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: Buffer | string | undefined;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  } else if (options.body) {
    headers['content-type'] = 'application/octet-stream';
    body = options.body;
  }
  const res = await fetch(`${base}${url}`, { method, headers, body });
  const raw = Buffer.from(await res.arrayBuffer());
  let parsed: unknown = raw;
  if ((res.headers.get('content-type') ?? '').includes('json') && raw.length > 0) parsed = JSON.parse(raw.toString('utf8'));
  return { status: res.status, headers: res.headers, body: parsed, raw };
}

/** Server processes sharing one database and one blob store, and the objects of that store. */
export interface SharedInstances {
  instances: Instance[];
  /** Every object of the shared S3 bucket, read whole. */
  bucketObjects(): Promise<Buffer[]>;
}

/**
 * The environment of instances of one deployment: the PostgreSQL schema of `database`, the S3
 * bucket `bucket` of `s3`, one new master key, and open registration.
 */
export function sharedEnvironment(s3: TestS3, bucket: string, database: DatabaseHandle): Record<string, string> {
  return {
    ...s3.env,
    DATABASE_URL: databaseUrlFor(database)!,
    COFFRE_BLOB_STORE: `s3://${bucket}?endpoint=${encodeURIComponent(s3.endpoint)}&region=us-east-1&forcePathStyle=true`,
    COFFRE_MASTER_KEY: randomBytes(32).toString('hex'),
    COFFRE_REGISTRATION: 'open',
  };
}

/**
 * Server processes named `names` over one new PostgreSQL schema (they migrate it) and one S3
 * bucket (test/support/s3.ts), with one master key: what scale-out runs on. All are stopped, and
 * the store closed, when the test ends.
 */
export async function startSharedInstances(t: TestContext, names: string[]): Promise<SharedInstances> {
  const s3 = await startTestS3();
  const database = await openDatabase({ url: PG_URL, pgSchema: newSchemaName(), poolSize: 1 });
  const { bucket } = await s3.newBucket();
  const env = { ...sharedEnvironment(s3, bucket, database), LOG_LEVEL: 'warn' };
  const started = await Promise.allSettled(names.map((name) => startInstance(name, env)));
  t.after(async () => {
    await Promise.all(started.map((i) => (i.status === 'fulfilled' ? i.value.stop() : undefined)));
    await database.close();
    await s3.close();
  });
  const instances = started.map((i) => {
    if (i.status === 'rejected') throw i.reason;
    return i.value;
  });
  const read = async (Key: string) =>
    Buffer.from(await (await s3.client.send(new GetObjectCommand({ Bucket: bucket, Key }))).Body!.transformToByteArray());
  return { instances, bucketObjects: async () => Promise.all((await s3.listKeys(bucket)).map(read)) };
}
