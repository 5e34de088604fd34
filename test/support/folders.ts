import assert from 'node:assert/strict';
import type { ApiResponse, TestUser } from '../helper.js';

/** Asserts an answer's status, showing its body when it differs. */
export function assertStatus(res: ApiResponse, status: number, label = ''): void {
  assert.equal(res.status, status, `${label}: got ${res.status} ${JSON.stringify(res.body)}`);
}

/** Creates a folder in the user's default bucket (under `parentId` when given); its id. */
export async function mkdir(user: TestUser, name: string, parentId?: string): Promise<string> {
  return (await createFolder(user, name, parentId)).id;
}

/** Creates a folder (in `bucketId`, default the user's default bucket) and returns it as the API answers it. */
export async function createFolder(
  user: TestUser,
  name: string,
  parentId?: string,
  extra: Record<string, unknown> = {},
  bucketId = user.defaultBucketId,
): Promise<any> {
  const res = await user.api.post(`/api/folders/create/${bucketId}`, { name, ...(parentId ? { parentId } : {}), ...extra });
  assertStatus(res, 201, `create folder ${name}`);
  return res.body.data;
}

/** A folder's details as the API answers them, asserting 200. */
export async function folderDetails(user: TestUser, id: string): Promise<any> {
  const res = await user.api.get(`/api/folders/details/${id}`);
  assertStatus(res, 200, `details ${id}`);
  return res.body.data;
}

/** The names of a folder's subfolders, in the API's order; checks that `total` counts them. */
export async function childNames(user: TestUser, folderId: string): Promise<string[]> {
  const res = await user.api.get(`/api/folders/${folderId}/subfolders?limit=1000`);
  assertStatus(res, 200, `subfolders of ${folderId}`);
  assert.equal(res.body.data.total, res.body.data.data.length, 'total counts the listed items');
  return res.body.data.data.map((f: any) => f.name);
}

/**
 * The folder list of the user's default bucket (sorted by id) and the details of `ids`, without
 * their access times: compared before and after an operation that must change nothing.
 */
export async function folderSnapshot(user: TestUser, ids: string[]) {
  const list = await user.api.get(`/api/folders/list/${user.defaultBucketId}?limit=1000`);
  assertStatus(list, 200, 'folder list');
  const folders = [...list.body.data.data].sort((a: any, b: any) => a.id.localeCompare(b.id));
  const detailed = [];
  for (const id of ids) {
    const { lastAccessAt: _ignored, ...rest } = await folderDetails(user, id);
    detailed.push(rest);
  }
  return { total: list.body.data.total, folders, detailed };
}
