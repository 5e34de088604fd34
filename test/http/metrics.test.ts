// Service routes of docs/api.md that watch the server: GET /metrics (Prometheus text format) and the
// request id on every response and every log line of its request, on every dialect.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Writable, PassThrough } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { DIALECTS, build, client, signUp } from '../helper.js';
import { putFile, rootFolderId, unknownId } from '../support/files.js';
import { eventually } from '../support/wait.js';

/** The value of one sample of the exposition (labels in any order), or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[3]);
  }
  return undefined;
}

async function scrape(app: FastifyInstance): Promise<string> {
  const res = await app.inject({ method: 'GET', url: '/metrics' });
  assert.equal(res.statusCode, 200, res.body);
  return res.body;
}

const DETAILS_ROUTE = '/api/folders/details/:folderId';

for (const dialect of DIALECTS) {
  describe(`metrics [${dialect}]`, () => {
    it('GET /metrics answers the Prometheus text format without a token', async (t) => {
      const { app } = await build(t, dialect);
      const res = await app.inject({ method: 'GET', url: '/metrics' });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
      assert.ok(res.headers['x-request-id'], 'the metrics response has a request id too');
      for (const [name, type] of [
        ['coffre_http_requests_total', 'counter'],
        ['coffre_http_request_duration_seconds', 'histogram'],
        ['coffre_uploaded_bytes_total', 'counter'],
        ['coffre_downloaded_bytes_total', 'counter'],
        ['coffre_active_uploads', 'gauge'],
        ['coffre_process_cpu_user_seconds_total', 'counter'],
      ]) {
        assert.ok(res.body.includes(`# TYPE ${name} ${type}\n`), `${name} is exposed as a ${type}`);
        assert.ok(res.body.includes(`# HELP ${name} `), `${name} has help`);
      }
      assert.equal(sample(res.body, 'coffre_uploaded_bytes_total'), 0);
      assert.equal(sample(res.body, 'coffre_active_uploads'), 0);
      // Every non-comment line is a sample: name, optional labels, a number.
      for (const line of res.body.split('\n').filter((l) => l && !l.startsWith('#'))) {
        // prom-client writes NaN as "Nan"; Prometheus parses special values case-insensitively.
        assert.match(line, /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})? (-?[0-9.e+-]+|nan|[+-]inf)$/i, line);
      }
    });

    it('counts requests by route pattern and status, with a latency histogram', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const root = await rootFolderId(user);
      for (let i = 0; i < 3; i++) assert.equal((await user.api.get(`/api/folders/details/${root}`)).status, 200);
      assert.equal((await user.api.get(`/api/folders/details/${unknownId('fld')}`)).status, 404);
      assert.equal((await client(app).get(`/api/folders/details/${root}`)).status, 401);
      assert.equal((await client(app).get('/api/no/such/route/abc123')).status, 404);

      const text = await scrape(app);
      const requests = (status: string, route = DETAILS_ROUTE) =>
        sample(text, 'coffre_http_requests_total', { method: 'GET', route, status });
      assert.equal(requests('200'), 3);
      assert.equal(requests('404'), 1);
      assert.equal(requests('401'), 1);
      assert.equal(sample(text, 'coffre_http_requests_total', { method: 'POST', route: '/api/auth/register', status: '201' }), 1);
      // Unmatched URLs share one label value: the raw path never becomes a label.
      assert.equal(requests('404', 'unmatched'), 1);
      assert.ok(!text.includes('abc123'));

      const count = sample(text, 'coffre_http_request_duration_seconds_count', { method: 'GET', route: DETAILS_ROUTE });
      assert.equal(count, 5);
      assert.equal(sample(text, 'coffre_http_request_duration_seconds_bucket', { method: 'GET', route: DETAILS_ROUTE, le: '+Inf' }), 5);
      const sum = sample(text, 'coffre_http_request_duration_seconds_sum', { method: 'GET', route: DETAILS_ROUTE });
      assert.ok(sum !== undefined && sum > 0 && sum < 60, `latency sum ${sum}`);
      const small = sample(text, 'coffre_http_request_duration_seconds_bucket', { method: 'GET', route: DETAILS_ROUTE, le: '0.005' });
      assert.ok(small !== undefined && small <= 5, 'buckets are cumulative');
    });

    it('each app instance has its own registry', async (t) => {
      const one = await build(t, dialect);
      const two = await build(t, dialect);
      for (let i = 0; i < 4; i++) await client(one.app).get('/healthz');
      assert.equal(sample(await scrape(one.app), 'coffre_http_requests_total', { method: 'GET', route: '/healthz', status: '200' }), 4);
      assert.equal(
        sample(await scrape(two.app), 'coffre_http_requests_total', { method: 'GET', route: '/healthz', status: '200' }),
        undefined,
      );
    });

    it('counts bytes uploaded and downloaded, and uploads in progress', async (t) => {
      const { app } = await build(t, dialect, { config: { defaultQuotaBytes: 100_000 } });
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const file = await putFile(app, user, root, 'a.bin', Buffer.alloc(1000, 7));
      // Multipart, two parts.
      const boundary = 'metricsboundary';
      const part = (name: string, size: number) =>
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n${'x'.repeat(size)}\r\n`;
      const multipart = await app.inject({
        method: 'POST',
        url: `/api/files/upload/${root}`,
        headers: { authorization: `Bearer ${user.token}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
        payload: `${part('b.bin', 300)}${part('c.bin', 700)}--${boundary}--\r\n`,
      });
      assert.equal(multipart.statusCode, 201, multipart.body);
      // A refused upload (over the quota) stores nothing and counts nothing.
      const refused = await app.inject({
        method: 'PUT',
        url: `/api/files/upload/${root}?name=big.bin`,
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/octet-stream' },
        payload: Buffer.alloc(200_000),
      });
      assert.equal(refused.statusCode, 507);

      const auth = { authorization: `Bearer ${user.token}` };
      const whole = await app.inject({ method: 'GET', url: `/api/files/download/${file.id}`, headers: auth });
      assert.equal(whole.rawPayload.length, 1000);
      const ranged = await app.inject({ method: 'GET', url: `/api/files/download/${file.id}`, headers: { ...auth, range: 'bytes=0-99' } });
      assert.equal(ranged.statusCode, 206);
      const notModified = await app.inject({
        method: 'GET',
        url: `/api/files/download/${file.id}`,
        headers: { ...auth, 'if-none-match': String(whole.headers.etag) },
      });
      assert.equal(notModified.statusCode, 304);

      const text = await scrape(app);
      assert.equal(sample(text, 'coffre_uploaded_bytes_total'), 2000);
      assert.equal(sample(text, 'coffre_downloaded_bytes_total'), 1100);
      assert.equal(sample(text, 'coffre_active_uploads'), 0);
    });

    it('coffre_active_uploads shows an upload while its body is still arriving', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const body = new PassThrough();
      const pending = app.inject({
        method: 'PUT',
        url: `/api/files/upload/${root}?name=slow.bin`,
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/octet-stream' },
        payload: body,
      });
      body.write(Buffer.alloc(10_000, 1));
      await eventually(async () => assert.equal(sample(await scrape(app), 'coffre_active_uploads'), 1, 'the upload shows while it runs'));
      body.end(Buffer.alloc(5000, 2));
      assert.equal((await pending).statusCode, 201);
      const text = await scrape(app);
      assert.equal(sample(text, 'coffre_active_uploads'), 0);
      assert.equal(sample(text, 'coffre_uploaded_bytes_total'), 15_000);
    });
  });

  describe(`request ids in logs [${dialect}]`, () => {
    /** Builds an app that logs at info level into an array of parsed lines. */
    async function logged(t: TestContext) {
      const lines: Record<string, any>[] = [];
      const logStream = new Writable({
        write(chunk, _encoding, done) {
          for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
          done();
        },
      });
      const test = await build(t, dialect, { config: { logLevel: 'info' }, logStream });
      return { ...test, lines };
    }

    it('every log line of a request carries the id sent back in X-Request-Id', async (t) => {
      const { app, lines } = await logged(t);
      const user = await signUp(app);
      const before = lines.length;
      const [mine, theirs, generated] = await Promise.all([
        user.api.get(`/api/folders/details/${unknownId('fld')}`, { 'x-request-id': 'trace-mine-1' }),
        user.api.get('/api/storage/status', { 'x-request-id': 'trace-theirs-2' }),
        client(app).get('/api/auth/me'),
      ]);
      assert.equal(mine.headers['x-request-id'], 'trace-mine-1');
      assert.equal(theirs.headers['x-request-id'], 'trace-theirs-2');
      const generatedId = String(generated.headers['x-request-id']);
      assert.match(generatedId, /^[0-9a-f-]{36}$/);

      const requestLines = lines.slice(before);
      for (const [id, url, status] of [
        ['trace-mine-1', '/api/folders/details/', 404],
        ['trace-theirs-2', '/api/storage/status', 200],
        [generatedId, '/api/auth/me', 401],
      ] as const) {
        const own = requestLines.filter((l) => l.reqId === id);
        const incoming = own.find((l) => l.msg === 'incoming request');
        const completed = own.find((l) => l.msg === 'request completed');
        assert.ok(incoming, `${id}: an incoming-request line`);
        assert.ok(String(incoming.req.url).startsWith(url), `${id}: the line is about ${url}, not ${incoming.req.url}`);
        assert.ok(completed, `${id}: a request-completed line`);
        assert.equal(completed.res.statusCode, status);
      }
      // No line about a request lacks its id.
      for (const line of requestLines.filter((l) => l.req || l.res || l.err))
        assert.ok(typeof line.reqId === 'string' && line.reqId.length > 0, JSON.stringify(line));
    });

    it('an error logged while serving a request names that request', async (t) => {
      const { app, database, lines } = await logged(t);
      const user = await signUp(app);
      await database.close();
      const res = await user.api.get('/api/storage/status', { 'x-request-id': 'trace-broken-3' });
      assert.equal(res.status, 500);
      const failure = lines.find((l) => l.msg === 'request failed');
      assert.ok(failure, 'the 500 was logged');
      assert.equal(failure.reqId, 'trace-broken-3');
      assert.equal(failure.level, 50);
    });
  });
}
