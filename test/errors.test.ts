import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ERROR_CATALOG } from '../src/errors.js';
import { DIALECTS, build, client, signUp } from './helper.js';

function assertEnvelope(res: { statusCode: number; json: () => any }, status: number, code: string) {
  assert.equal(res.statusCode, status);
  const body = res.json();
  assert.deepEqual(Object.keys(body).filter((k) => k !== 'details').sort(), ['code', 'data', 'message', 'status']);
  assert.equal(body.status, status);
  assert.equal(body.code, code);
  assert.equal(body.data, null);
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(full) : full.endsWith('.ts') ? [full] : [];
  });
}

describe('error catalog', () => {
  it('holds every code the source throws, and the OpenAPI document lists every code', async (t) => {
    const used = new Set<string>();
    for (const file of sourceFiles('src')) {
      for (const match of fs.readFileSync(file, 'utf8').matchAll(/(?:AppError|appError)\(\s*'([A-Z_]+)'/g)) used.add(match[1]);
    }
    assert.ok(used.size > 20, `only ${used.size} codes found in the source`);
    for (const code of used) assert.ok(code in ERROR_CATALOG, `${code} is thrown but not in the catalog`);
    for (const [code, entry] of Object.entries(ERROR_CATALOG)) {
      assert.match(code, /^[A-Z][A-Z_]+$/);
      assert.ok(entry.status >= 400 && entry.status < 600, code);
      assert.ok(entry.message.length > 5, code);
    }
    const { app } = await build(t, DIALECTS[0]);
    const doc = (await client(app).get('/api/openapi.json')).body;
    for (const code of Object.keys(ERROR_CATALOG)) assert.ok(doc.info.description.includes(`\`${code}\``), `${code} is not documented`);
  });
});

for (const dialect of DIALECTS) {
  describe(`errors and service routes [${dialect}]`, () => {
    it('answers bad requests with the error envelope', async (t) => {
      const { app } = await build(t, dialect, { config: { jsonBodyLimit: 2048 } });
      const user = await signUp(app);
      const auth = { authorization: `Bearer ${user.token}` };
      assertEnvelope(await app.inject({ method: 'GET', url: '/api/nowhere' }), 404, 'ROUTE_NOT_FOUND');
      assertEnvelope(await app.inject({ method: 'GET', url: '/api/nowhere', headers: auth }), 404, 'ROUTE_NOT_FOUND');
      assertEnvelope(
        await app.inject({ method: 'POST', url: '/api/auth/login', headers: { 'content-type': 'application/json' }, payload: '{"email": ' }),
        400,
        'INVALID_JSON',
      );
      assertEnvelope(
        await app.inject({ method: 'POST', url: '/api/auth/login', headers: { 'content-type': 'text/plain' }, payload: 'email=a' }),
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      );
      assertEnvelope(
        await app.inject({
          method: 'POST',
          url: `/api/folders/create/${user.defaultBucketId}`,
          headers: { ...auth, 'content-type': 'application/json' },
          payload: JSON.stringify({ name: 'x'.repeat(4000) }),
        }),
        413,
        'PAYLOAD_TOO_LARGE',
      );
      const validation = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: 1 } });
      assertEnvelope(validation, 400, 'VALIDATION_FAILED');
      assert.ok(validation.json().details.length > 0);
    });

    it('never shows a stack trace on a 5xx', async (t) => {
      const { app, database } = await build(t, dialect);
      const user = await signUp(app);
      await database.close(); // every query now fails
      const res = await app.inject({ method: 'GET', url: '/api/auth/me', headers: { authorization: `Bearer ${user.token}` } });
      assertEnvelope(res, 500, 'INTERNAL_ERROR');
      assert.doesNotMatch(res.body, /at |\.ts|\.js|select|SQL/i);
    });

    it('tags every response with a request id, echoing a valid incoming one', async (t) => {
      const { app } = await build(t, dialect);
      const plain = await app.inject({ method: 'GET', url: '/healthz' });
      assert.match(String(plain.headers['x-request-id']), /^[0-9a-f-]{36}$/);
      const echoed = await app.inject({ method: 'GET', url: '/api/nowhere', headers: { 'x-request-id': 'trace-123' } });
      assert.equal(echoed.headers['x-request-id'], 'trace-123');
      const refused = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'bad id with spaces' } });
      assert.notEqual(refused.headers['x-request-id'], 'bad id with spaces');
    });

    it('serves the welcome, liveness and readiness routes', async (t) => {
      const { app } = await build(t, dialect);
      const api = client(app);
      const welcome = await api.get('/api');
      assert.equal(welcome.status, 200);
      assert.equal(welcome.body.data.name, 'Coffre');
      assert.equal(welcome.body.data.docs, '/api/docs');
      assert.deepEqual((await api.get('/healthz')).body, { status: 'ok' });
      assert.deepEqual((await api.get('/readyz')).body, { status: 'ready', database: dialect, blobStore: 'fs' });
    });
  });
}
