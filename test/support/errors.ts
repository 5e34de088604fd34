import assert from 'node:assert/strict';

const ERROR_KEYS = ['code', 'data', 'message', 'status'];

interface ErrorAnswer {
  status: number;
  body: any;
  headers?: Record<string, unknown>;
}

/**
 * Asserts the error envelope: exactly {status, message, code, data: null}, plus `details` only on
 * validation errors; `status` mirrors the HTTP status; JSON content type when the headers are known.
 * Without `code`, any catalog code is accepted.
 */
export function assertError(res: ErrorAnswer, status: number, code?: string, label = ''): void {
  const prefix = label ? `${label}: ` : '';
  assert.equal(res.status, status, `${prefix}expected ${status} ${code ?? ''}, got ${res.status} ${JSON.stringify(res.body)}`);
  if (res.headers) assert.match(String(res.headers['content-type']), /^application\/json/, `${prefix}content type`);
  assert.equal(typeof res.body, 'object', `${prefix}the error body is JSON`);
  const keys = Object.keys(res.body).sort();
  assert.deepEqual(
    keys.filter((k) => k !== 'details'),
    ERROR_KEYS,
    `${prefix}unexpected keys ${keys.join(', ')}`,
  );
  assert.equal(res.body.status, status, prefix);
  if (code !== undefined) assert.equal(res.body.code, code, `${prefix}${JSON.stringify(res.body)}`);
  assert.equal(res.body.data, null, prefix);
  assert.equal(typeof res.body.message, 'string', prefix);
  assert.ok(res.body.message.length > 0, `${prefix}an error has a message`);
  if ('details' in res.body) {
    assert.ok(Array.isArray(res.body.details) && res.body.details.length > 0, 'details, when present, is a non-empty array');
    for (const detail of res.body.details) {
      assert.deepEqual(Object.keys(detail).sort(), ['field', 'problem']);
      assert.equal(typeof detail.field, 'string');
      assert.equal(typeof detail.problem, 'string');
    }
  }
}

/** Asserts a 429 RATE_LIMITED envelope whose Retry-After is a whole number of seconds within the window. */
export function assertRateLimited(res: ErrorAnswer, windowSeconds: number): void {
  assertError(res, 429, 'RATE_LIMITED');
  const retryAfter = String(res.headers?.['retry-after'] ?? '');
  assert.match(retryAfter, /^\d+$/, `Retry-After is not a number of seconds: "${retryAfter}"`);
  assert.ok(Number(retryAfter) >= 1 && Number(retryAfter) <= windowSeconds, `Retry-After ${retryAfter} is outside 1..${windowSeconds}`);
}
