import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand, DeleteBucketCommand, DeleteObjectsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import type { S3Location } from '../../src/config.js';

// The SDK warns once per process that its releases after January 2027 need Node 22.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** An S3-protocol server for tests: COFFRE_TEST_S3_ENDPOINT when set, else s3rver on a loopback port, in a process of its own. */
export interface TestS3 {
  endpoint: string;
  /** What a server process needs in its environment to reach it (AWS_* credentials). */
  env: Record<string, string>;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** Creates an empty bucket of its own; returns its location. */
  newBucket(): Promise<S3Location>;
  /** Every object key of a bucket. */
  listKeys(bucket: string): Promise<string[]>;
  client: S3Client;
  close(): Promise<void>;
}

export async function startTestS3(): Promise<TestS3> {
  let endpoint = process.env.COFFRE_TEST_S3_ENDPOINT;
  let credentials = {
    accessKeyId: process.env.AWS_ACCESS_KEY_ID || 'S3RVER',
    secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY || 'S3RVER',
  };
  let stopServer = async () => {};
  if (!endpoint) {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'coffre-s3rver-'));
    const server = await startS3rverProcess(directory);
    endpoint = `http://127.0.0.1:${server.port}`;
    // s3rver accepts any signature made with its own fixed credentials.
    credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
    stopServer = async () => {
      await server.stop();
      fs.rmSync(directory, { recursive: true, force: true });
    };
  }
  const region = process.env.AWS_REGION || 'us-east-1';
  const client = new S3Client({ endpoint, region, forcePathStyle: true, credentials });
  const buckets: string[] = [];

  async function listKeys(bucket: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
      keys.push(...(page.Contents ?? []).map((o) => o.Key!));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return keys;
  }

  return {
    endpoint,
    credentials,
    client,
    env: {
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      AWS_REGION: region,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    listKeys,
    async newBucket() {
      const bucket = `coffre-t-${randomBytes(6).toString('hex')}`;
      await client.send(new CreateBucketCommand({ Bucket: bucket }));
      buckets.push(bucket);
      return { bucket, prefix: '', endpoint: endpoint!, region, forcePathStyle: true };
    },
    async close() {
      // An external server keeps no test buckets behind.
      if (process.env.COFFRE_TEST_S3_ENDPOINT) {
        for (const bucket of buckets) {
          const keys = await listKeys(bucket).catch(() => []);
          if (keys.length)
            await client
              .send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys.map((Key) => ({ Key })) } }))
              .catch(() => {});
          await client.send(new DeleteBucketCommand({ Bucket: bucket })).catch(() => {});
        }
      }
      client.destroy();
      await stopServer();
    },
  };
}

/**
 * s3rver in a child process: a test's own memory and CPU figures then count the S3 client
 * only, as they would against a real S3 service (in-process, the server's request buffers
 * were counted as the store's).
 */
async function startS3rverProcess(directory: string): Promise<{ port: number; stop(): Promise<void> }> {
  const script = fileURLToPath(new URL('./s3rver-process.mjs', import.meta.url));
  const child = spawn(process.execPath, [script, directory], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = once(child, 'exit');
  const lines = readline.createInterface({ input: child.stdout! });
  const first = await Promise.race([
    once(lines, 'line').then(([line]) => line as string),
    exited.then(([code]) => {
      throw new Error(`s3rver exited with ${code} before listening`);
    }),
  ]);
  lines.close();
  const { port } = JSON.parse(first) as { port: number };
  return {
    port,
    async stop() {
      if (child.exitCode === null) {
        child.stdin!.end();
        await exited;
      }
    },
  };
}
