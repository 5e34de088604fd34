import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { BlobNotFoundError } from '../src/blobs/blob-store.js';
import { CipherFormatError } from '../src/content/index.js';
import { ERROR_CATALOG, InternalError, type ErrorCode } from '../src/errors.js';
import { VERSION } from '../src/version.js';
import { DIALECTS, build, client, signUp, type ApiResponse } from './helper.js';
import { putFile, rootFolderId } from './support/files.js';
import { assertError } from './support/errors.js';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ERROR_KEYS = ['code', 'data', 'message', 'status'];

function listSourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return listSourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

describe('error catalog (no database)', () => {
  it('has well-formed entries: UPPER_SNAKE codes, 4xx/5xx statuses, messages', () => {
    const codes = Object.keys(ERROR_CATALOG);
    assert.ok(codes.length >= 20);
    for (const [code, entry] of Object.entries(ERROR_CATALOG)) {
      assert.match(code, /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/, code);
      assert.ok(Number.isInteger(entry.status) && entry.status >= 400 && entry.status <= 599, `${code}: status ${entry.status}`);
      assert.ok(entry.message.trim().length > 0, `${code} has no message`);
    }
  });

  it('holds every code that src/ raises with AppError', () => {
    const files = listSourceFiles(SRC);
    assert.ok(files.length > 10, `only ${files.length} source files found under ${SRC}`);
    // new AppError('CODE' …), new AppError(\n 'CODE' …); single or double quotes.
    const pattern = /\bnew\s+AppError\(\s*(['"`])([A-Za-z0-9_]+)\1/g;
    const used = new Map<string, string>();
    for (const file of files) {
      const text = fs.readFileSync(file, 'utf8');
      for (const match of text.matchAll(pattern)) used.set(match[2], path.relative(SRC, file));
    }
    assert.ok(used.size >= 20, `the scan found only ${used.size} codes: ${[...used.keys()].join(', ')}`);
    const unknown = [...used].filter(([code]) => !(code in ERROR_CATALOG)).map(([code, file]) => `${code} (${file})`);
    assert.deepEqual(unknown, [], 'codes raised in src/ but missing from ERROR_CATALOG');
  });

  it('names the internal failures the error handler answers: damaged content, lost content', () => {
    const cases: [InternalError, ErrorCode][] = [
      [new CipherFormatError('segment 3 does not authenticate'), 'CONTENT_INTEGRITY'],
      [new BlobNotFoundError('blob-key'), 'CONTENT_MISSING'],
    ];
    for (const [error, code] of cases) {
      assert.ok(error instanceof InternalError, error.name);
      assert.equal(error.code, code);
      assert.equal(ERROR_CATALOG[code].status, 500);
      assert.notEqual(error.message, ERROR_CATALOG[code].message, 'its own message is the cause, for the log');
    }
  });

  it('the scan recognises the multi-line form and rejects codes outside the catalog', () => {
    // Guards the regular expression above against silently matching nothing.
    const pattern = /\bnew\s+AppError\(\s*(['"`])([A-Za-z0-9_]+)\1/g;
    const sample = "throw new AppError(\n      'FOLDER_NOT_FOUND',\n    );\nthrow new AppError('NOT_A_CODE');\nnew AppError(code);";
    assert.deepEqual(
      [...sample.matchAll(pattern)].map((m) => m[2]),
      ['FOLDER_NOT_FOUND', 'NOT_A_CODE'],
    );
    assert.ok(!('NOT_A_CODE' in ERROR_CATALOG));
  });
});

for (const dialect of DIALECTS) {
  describe(`errors: envelope and status codes [${dialect}]`, () => {
    it('answers an unknown route with 404 ROUTE_NOT_FOUND, with or without a token', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      for (const api of [client(app), user.api, client(app, 'cof_not-a-real-token')]) {
        for (const url of [
          '/api/nope',
          '/api/auth/nope?x=1',
          '/nope',
          '/api/folders/nope/nope/nope',
          '/api/docs/static/nope.js',
          '/api/auth/me/',
        ]) {
          const res = await api.get(url);
          assertError(res, 404, 'ROUTE_NOT_FOUND');
          assert.ok(!res.body.message.includes('?x=1'), 'the query string is not echoed');
        }
        assertError(await api.post('/api/nope', { a: 1 }), 404, 'ROUTE_NOT_FOUND');
        assertError(await api.delete('/api/auth/me'), 404, 'ROUTE_NOT_FOUND');
      }
    });

    it('answers malformed JSON with 400 INVALID_JSON', async (t) => {
      const { app } = await build(t, dialect);
      const api = client(app);
      for (const body of ['{bad', '{"email": "a@b.c",', '"unterminated', '{"a":1}}', 'nul']) {
        const res = await api.post('/api/auth/login', body, { 'content-type': 'application/json' });
        assertError(res, 400, 'INVALID_JSON');
        assert.equal(res.body.details, undefined);
      }
      // Prototype poisoning is refused rather than parsed.
      const poisoned = await api.post('/api/auth/login', '{"__proto__":{"admin":true},"email":"a@b.c","password":"x"}', {
        'content-type': 'application/json',
      });
      assertError(poisoned, 400, 'INVALID_JSON');
      // Malformed JSON on an authenticated route, signed in.
      const user = await signUp(app);
      assertError(await user.api.post('/api/auth/tokens', '{"name":', { 'content-type': 'application/json' }), 400, 'INVALID_JSON');
    });

    it('treats an empty body sent as JSON as no body', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const res = await app.inject({
        method: 'POST',
        url: '/api/auth/logout',
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
        payload: '',
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { status: 200, message: '', data: null });
      // Where a body is required, an empty one is a validation error, not a JSON error.
      const login = await client(app).post('/api/auth/login', '', { 'content-type': 'application/json' });
      assertError(login, 400, 'VALIDATION_FAILED');
    });

    it('answers a wrong content type with 415 UNSUPPORTED_MEDIA_TYPE', async (t) => {
      const { app } = await build(t, dialect);
      const api = client(app);
      const body = JSON.stringify({ email: 'a@example.com', password: 'correct horse battery' });
      assertError(await api.post('/api/auth/login', body, { 'content-type': 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
      assertError(
        await api.post('/api/auth/login', 'email=a%40example.com&password=x', { 'content-type': 'application/x-www-form-urlencoded' }),
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      );
      assertError(await api.post('/api/auth/register', '<a/>', { 'content-type': 'application/xml' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
      // JSON with a charset parameter is still JSON.
      const withCharset = await api.post('/api/auth/login', body, { 'content-type': 'application/json; charset=utf-8' });
      assertError(withCharset, 401, 'INVALID_CREDENTIALS');
    });

    it('answers a body over jsonBodyLimit with 413 PAYLOAD_TOO_LARGE, and accepts one under it', async (t) => {
      const { app } = await build(t, dialect, { config: { jsonBodyLimit: 2048 } });
      const api = client(app);
      const tooLarge = JSON.stringify({ email: 'a@example.com', password: 'p'.repeat(3000) });
      assert.ok(Buffer.byteLength(tooLarge) > 2048);
      assertError(await api.post('/api/auth/login', tooLarge, { 'content-type': 'application/json' }), 413, 'PAYLOAD_TOO_LARGE');
      const underLimit = JSON.stringify({ email: 'a@example.com', password: 'p'.repeat(1000) });
      assert.ok(Buffer.byteLength(underLimit) < 2048);
      assertError(await api.post('/api/auth/login', underLimit, { 'content-type': 'application/json' }), 401, 'INVALID_CREDENTIALS');
    });

    it('gives validation errors details naming the field', async (t) => {
      const { app } = await build(t, dialect);
      const res = await client(app).post('/api/auth/register', { email: 'a@example.com', password: 'short', name: 'A' });
      assertError(res, 400, 'VALIDATION_FAILED');
      assert.ok(
        res.body.details.some((d: { field: string }) => d.field === 'body.password'),
        JSON.stringify(res.body.details),
      );
      const notAnObject = await client(app).post('/api/auth/login', '[1,2]', { 'content-type': 'application/json' });
      assertError(notAnObject, 400, 'VALIDATION_FAILED');
    });

    it('keeps the envelope on errors raised before routing (an undecodable URL)', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const res = await user.api.delete('/api/auth/tokens/%E0%A4%A', undefined, { 'x-request-id': 'bad-url-1' });
      assertError(res, 400, 'VALIDATION_FAILED');
      assert.equal(res.headers['x-request-id'], 'bad-url-1');
    });

    it('answers an internal failure with 500 INTERNAL_ERROR and leaks no SQL or stack', async (t) => {
      const { app, database } = await build(t, dialect);
      const user = await signUp(app);
      // Closing the pool (not dropping a table: DDL here races with other runs' schema inspection).
      await database.close();
      const res = await user.api.get('/api/auth/me');
      assertError(res, 500, 'INTERNAL_ERROR');
      assert.equal(res.body.message, ERROR_CATALOG.INTERNAL_ERROR.message);
      const raw = JSON.stringify(res.body);
      for (const leak of ['tokens', 'select', 'SQLITE', 'relation', 'stack', '.ts:', 'at ']) {
        assert.ok(!raw.toLowerCase().includes(leak.toLowerCase()), `the 500 body leaks "${leak}": ${raw}`);
      }
    });

    it('answers stored content that is gone with 500 CONTENT_MISSING, its cause in the log only', async (t) => {
      const lines: string[] = [];
      const logStream = new Writable({
        write(chunk, _encoding, callback) {
          lines.push(String(chunk));
          callback();
        },
      });
      // Never inline: the content goes to the blob store, whose files are then lost.
      const { app, config } = await build(t, dialect, { config: { logLevel: 'error', inlineBlobBytes: 0 }, logStream });
      const user = await signUp(app);
      const file = await putFile(app, user, await rootFolderId(user), 'lost.txt', 'content whose blob goes missing');
      fs.rmSync(path.join(config.dataDir, 'blobs'), { recursive: true, force: true });
      const res = await user.api.get(`/api/files/download/${file.id}`);
      assertError(res, 500, 'CONTENT_MISSING');
      assert.equal(res.body.message, ERROR_CATALOG.CONTENT_MISSING.message);
      const logged = lines.map((line) => JSON.parse(line)).find((line) => line.msg === ERROR_CATALOG.CONTENT_MISSING.message);
      assert.ok(logged, `nothing logged about it: ${lines.join('')}`);
      assert.equal(logged.err.type, 'BlobNotFoundError');
      assert.ok(!JSON.stringify(res.body).includes(logged.err.message), 'the cause stays in the log');
    });

    it('every error response has exactly status, message, code, data (and details on validation)', async (t) => {
      const { app } = await build(t, dialect, { config: { jsonBodyLimit: 2048 } });
      const user = await signUp(app);
      const anon = client(app);
      const cases: [Promise<ApiResponse>, number, string][] = [
        [anon.get('/api/auth/me'), 401, 'UNAUTHENTICATED'],
        [anon.get('/api/does-not-exist'), 404, 'ROUTE_NOT_FOUND'],
        [anon.post('/api/auth/login', '{', { 'content-type': 'application/json' }), 400, 'INVALID_JSON'],
        [anon.post('/api/auth/login', 'x', { 'content-type': 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE'],
        [
          anon.post('/api/auth/login', JSON.stringify({ email: 'x'.repeat(4000) }), { 'content-type': 'application/json' }),
          413,
          'PAYLOAD_TOO_LARGE',
        ],
        [anon.post('/api/auth/login', { email: 'nobody@example.com', password: 'whatever!' }), 401, 'INVALID_CREDENTIALS'],
        [anon.post('/api/auth/register', { email: user.email, password: 'correct horse battery', name: 'Dup' }), 409, 'EMAIL_TAKEN'],
        [anon.post('/api/auth/register', { email: 'bad', password: 'correct horse battery', name: 'X' }), 400, 'VALIDATION_FAILED'],
        [user.api.delete('/api/auth/tokens/tok_bad'), 400, 'INVALID_ID'],
        [user.api.delete('/api/auth/tokens/tok_00000000000000000000000000'), 404, 'TOKEN_NOT_FOUND'],
        [user.api.get('/api/users/lookup?email=nobody%40example.com'), 404, 'USER_NOT_FOUND'],
        [user.api.get('/api/users/lookup'), 400, 'VALIDATION_FAILED'],
      ];
      for (const [pending, status, code] of cases) {
        const res = await pending;
        assertError(res, status, code);
        assert.equal(ERROR_CATALOG[code as keyof typeof ERROR_CATALOG].status, status, `${code} has status ${status} in the catalog`);
        assert.ok(res.headers['x-request-id'], `${code} has an x-request-id`);
      }
    });
  });

  describe(`errors: request ids [${dialect}]`, () => {
    it('puts an x-request-id on every response, fresh for each request', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const responses = [
        await client(app).get('/healthz'),
        await client(app).get('/readyz'),
        await client(app).get('/api'),
        await user.api.get('/api/auth/me'),
        await client(app).get('/api/auth/me'),
        await client(app).get('/nowhere'),
        await client(app).post('/api/auth/login', '{', { 'content-type': 'application/json' }),
        await client(app).post('/api/auth/login', 'x', { 'content-type': 'text/plain' }),
      ];
      const ids = responses.map((res) => String(res.headers['x-request-id']));
      for (const id of ids) assert.match(id, UUID);
      assert.equal(new Set(ids).size, ids.length, 'every request gets its own id');
    });

    it('echoes a valid incoming x-request-id, on success and on error', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const echoed: [Promise<ApiResponse>, string][] = [
        [client(app).get('/healthz', { 'x-request-id': 'req-123' }), 'req-123'],
        [user.api.get('/api/auth/me', { 'x-request-id': 'trace.abc:DEF_9' }), 'trace.abc:DEF_9'],
        [client(app).get('/api/auth/me', { 'x-request-id': 'unauth-1' }), 'unauth-1'],
        [client(app).get('/api/nope', { 'x-request-id': 'nf-1' }), 'nf-1'],
        [client(app).post('/api/auth/login', '{', { 'content-type': 'application/json', 'x-request-id': 'json-1' }), 'json-1'],
        [client(app).get('/healthz', { 'x-request-id': 'a'.repeat(128) }), 'a'.repeat(128)],
      ];
      for (const [pending, id] of echoed) assert.equal((await pending).headers['x-request-id'], id);
    });

    it('replaces an invalid incoming x-request-id with a generated one', async (t) => {
      const { app } = await build(t, dialect);
      for (const bad of ['has space', 'a'.repeat(129), 'quote"d', '<script>', 'semi;colon']) {
        const res = await client(app).get('/healthz', { 'x-request-id': bad });
        assert.equal(res.status, 200);
        assert.match(String(res.headers['x-request-id']), UUID, `"${bad}" was not replaced`);
      }
    });
  });

  describe(`service routes [${dialect}]`, () => {
    it('GET /api welcomes with the envelope, name Coffre and the docs links', async (t) => {
      const { app } = await build(t, dialect);
      const res = await client(app).get('/api');
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys(res.body).sort(), ['data', 'message', 'status']);
      assert.equal(res.body.status, 200);
      assert.equal(typeof res.body.message, 'string');
      assert.equal(res.body.data.name, 'Coffre');
      assert.equal(res.body.data.version, VERSION);
      assert.equal(res.body.data.docs, '/api/docs');
      assert.equal(res.body.data.openapi, '/api/openapi.json');
    });

    it('GET /healthz is 200 without a token', async (t) => {
      const { app } = await build(t, dialect);
      const res = await client(app).get('/healthz');
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { status: 'ok' });
    });

    it('GET /readyz is 200 and names the dialect', async (t) => {
      const { app } = await build(t, dialect);
      const res = await client(app).get('/readyz');
      assert.equal(res.status, 200);
      assert.equal(res.body.status, 'ready');
      assert.equal(res.body.database, dialect);
      assert.equal(typeof res.body.blobStore, 'string');
    });

    it('GET /readyz is 503 SERVICE_UNAVAILABLE when the database does not answer', async (t) => {
      const { app, database } = await build(t, dialect);
      const ping = database.ping;
      (database as { ping: () => Promise<void> }).ping = async () => {
        throw new Error('connection refused at 10.0.0.1:5432');
      };
      t.after(() => {
        (database as { ping: () => Promise<void> }).ping = ping;
      });
      const res = await client(app).get('/readyz');
      assertError(res, 503, 'SERVICE_UNAVAILABLE');
      assert.ok(!JSON.stringify(res.body).includes('10.0.0.1'), 'the cause is not shown');
    });

    it('the OpenAPI document lists every catalog code in info.description and in the Error schema', async (t) => {
      const { app } = await build(t, dialect);
      const res = await client(app).get('/api/openapi.json');
      assert.equal(res.status, 200);
      const description: string = res.body.info.description;
      assert.equal(typeof description, 'string');
      for (const [code, entry] of Object.entries(ERROR_CATALOG)) {
        const row = description.split('\n').find((line) => line.includes(`\`${code}\``));
        assert.ok(row, `${code} is missing from info.description`);
        assert.ok(row.includes(`| ${entry.status} |`), `${code}'s row does not show status ${entry.status}: ${row}`);
      }
      const errorSchema = res.body.components?.schemas?.Error;
      assert.ok(errorSchema, 'components.schemas.Error exists');
      assert.deepEqual([...errorSchema.properties.code.enum].sort(), Object.keys(ERROR_CATALOG).sort());
      assert.deepEqual([...errorSchema.required].sort(), ERROR_KEYS);
    });
  });
}
