import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';

// The native engine reads an HTTP request's body chunks in place after the body stream has moved
// on, and frees (detaches) each one once sealed (`sourceOwnsChunks`, src/content/engine.ts). That
// rests on how Node's HTTP parser hands a body over: each chunk in memory of its own, which no
// other chunk, header or later read shares. If a Node release changes that, this test fails
// first, instead of uploads silently storing bytes another request overwrote.
test("Node's HTTP parser gives each request body chunk memory of its own", async (t) => {
  const seen: Buffer[] = [];
  const server = http.createServer((req, res) => {
    req.on('data', (chunk: Buffer) => seen.push(chunk));
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const { port } = server.address() as AddressInfo;

  const body = randomBytes(8 * 1024 * 1024 + 17);
  await new Promise<void>((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method: 'PUT', path: '/', headers: { 'content-length': body.length }, agent: false },
      (res) => {
        res.resume();
        res.on('end', resolve);
      },
    );
    req.on('error', reject);
    // Writes of odd sizes, some small enough to share a socket read with the next.
    for (let at = 0; at < body.length;) {
      const size = Math.min(body.length - at, [1, 777, 65536, 300_000, 3][at % 5]);
      req.write(body.subarray(at, at + size));
      at += size;
    }
    req.end();
  });

  assert.ok(seen.length > 10, `the body came in ${seen.length} chunks`);
  assert.ok(Buffer.concat(seen).equals(body), 'the chunks are the body');
  for (const [i, chunk] of seen.entries()) {
    assert.ok(chunk.buffer instanceof ArrayBuffer, `chunk ${i} is not in shared memory`);
    assert.equal(chunk.byteOffset, 0, `chunk ${i} starts its memory`);
    assert.equal(chunk.byteLength, chunk.buffer.byteLength, `chunk ${i} fills its memory`);
  }
  assert.equal(new Set(seen.map((chunk) => chunk.buffer)).size, seen.length, 'no two chunks share memory');
});
