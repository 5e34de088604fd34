import assert from 'node:assert/strict';
import type { ApiResponse, Client } from '../helper.js';
import { eventually } from './wait.js';

/**
 * Asks `/api/auth/me` until it stops answering 200 (for two seconds at most) and returns that
 * answer: a revocation reaches other instances through the database, a moment later.
 */
export async function refusedSoon(api: Client): Promise<ApiResponse> {
  return eventually(async () => {
    const res = await api.get('/api/auth/me');
    assert.notEqual(res.status, 200, 'the session still works');
    return res;
  }, 2000);
}
