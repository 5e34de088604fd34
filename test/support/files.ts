import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import type { TestUser } from '../helper.js';

/** Uploads `data` as `name` into a folder with the raw PUT route; returns the file detail. */
export async function putFile(app: FastifyInstance, user: TestUser, folderId: string, name: string, data: Buffer | string): Promise<any> {
  const res = await app.inject({
    method: 'PUT',
    url: `/api/files/upload/${folderId}?name=${encodeURIComponent(name)}`,
    headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/octet-stream' },
    payload: data,
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().data;
}

/** The id of the root folder of a bucket of the user's (default: their default bucket). */
export async function rootFolderId(user: TestUser, bucketId = user.defaultBucketId): Promise<string> {
  const res = await user.api.get(`/api/folders/root/subfolders?bucketId=${bucketId}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data.parentFolder.id;
}

/** A well-formed id nobody holds. */
export function unknownId(prefix: string): string {
  return `${prefix}_${'0'.repeat(25)}z`;
}

/**
 * Stores, in a folder, what the size routes must tell apart: a file with a second version, a file
 * in the trash and a file deleted for good. Returns the bytes they should count: current versions
 * (trash included) 1536 + 512, other versions 1024; the 4096 deleted bytes count nowhere.
 */
export async function storeMixedContent(
  app: FastifyInstance,
  user: TestUser,
  folderId: string,
  prefix = '',
): Promise<{ current: number; versions: number }> {
  await putFile(app, user, folderId, `${prefix}versioned.bin`, Buffer.alloc(1024, 1));
  const versioned = await putFile(app, user, folderId, `${prefix}versioned.bin`, Buffer.alloc(1536, 2));
  assert.equal(versioned.versionCount, 2);
  const trashed = await putFile(app, user, folderId, `${prefix}trashed.bin`, Buffer.alloc(512, 3));
  assert.equal((await user.api.delete(`/api/files/delete/${trashed.id}?trash=soft`)).status, 200);
  const gone = await putFile(app, user, folderId, `${prefix}gone.bin`, Buffer.alloc(4096, 4));
  assert.equal((await user.api.delete(`/api/files/delete/${gone.id}?trash=hard`)).status, 200);
  return { current: 1536 + 512, versions: 1024 };
}
