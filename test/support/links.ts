import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';

/** Splits a share link `…/s/<sharedHash>#<key>` into its hash and its key. */
export function splitLink(shareLink: string): { hash: string; key: string } {
  const match = /\/s\/([A-Za-z0-9_-]+)#([A-Za-z0-9_-]{43})$/.exec(shareLink);
  assert.ok(match, `unexpected shareLink ${shareLink}`);
  return { hash: match[1], key: match[2] };
}

export interface PublicAnswer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  raw: Buffer;
  body: any;
}

/** POSTs to a public link route from `address` (the throttling key), with extra headers or a bearer token. */
export async function publicPost(
  app: FastifyInstance,
  url: string,
  body: object,
  options: { address?: string; headers?: Record<string, string>; token?: string } = {},
): Promise<PublicAnswer> {
  const headers = { ...(options.token ? { authorization: `Bearer ${options.token}` } : {}), ...options.headers };
  const res = await app.inject({ method: 'POST', url, payload: body, remoteAddress: options.address ?? '127.0.0.1', headers });
  const isJson = String(res.headers['content-type'] ?? '').includes('json');
  return { status: res.statusCode, headers: res.headers, raw: res.rawPayload, body: isJson ? res.json() : undefined };
}
