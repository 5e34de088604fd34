import assert from 'node:assert/strict';
import type { ApiResponse, TestUser } from '../helper.js';

/** Asserts an answer's status, showing its body when it differs. */
export function assertStatus(res: ApiResponse, status: number, label = ''): void {
  assert.equal(res.status, status, `${label}: got ${res.status} ${JSON.stringify(res.body)}`);
}

/** Creates a folder in the user's default bucket (under `parentId` when given); its id. */
export async function mkdir(user: TestUser, name: string, parentId?: string): Promise<string> {
  const res = await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name, ...(parentId ? { parentId } : {}) });
  assertStatus(res, 201, `mkdir ${name}`);
  return res.body.data.id;
}
