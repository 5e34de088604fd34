import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import {
  DamagedContentError,
  WrongKeyError,
  chainFromHeaders,
  decryptResumable,
  decryptStream,
  linkKeyProof,
  unwrapChain,
} from '../../web/src/crypto/sealed.js';
import { keyProofOf } from '../../src/modules/links/links.key-proof.js';
import { DIALECTS, build, signUp } from '../helper.js';
import { putFile, rootFolderId } from '../support/files.js';
import { splitLink } from '../support/links.js';

// The browser's decryptor (web/src/crypto/sealed.ts), run here on Node's WebCrypto, against the
// ciphertext and key chain the server's sealed route sends: the two must agree byte for byte.

async function sealedDownload(app: FastifyInstance, sharedHash: string, linkKey: string, body: object = {}) {
  const payload = { ...body, keyProof: keyProofOf(Buffer.from(linkKey, 'base64url')) };
  const res = await app.inject({ method: 'POST', url: `/api/files/download/public/${sharedHash}/sealed`, payload });
  assert.equal(res.statusCode, 200, res.body);
  return { headers: new Headers(res.headers as Record<string, string>), bytes: new Uint8Array(res.rawPayload) };
}

/** Decrypts `bytes` fed in chunks of `chunk` bytes, as a network stream would deliver them. */
async function decryptSealed(linkKey: string, headers: Headers, bytes: Uint8Array, chunk = 7000): Promise<Buffer> {
  const { chain, ids } = chainFromHeaders(headers);
  const key = await unwrapChain(linkKey, chain, ids);
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < bytes.length; at += chunk) controller.enqueue(bytes.slice(at, at + chunk));
      controller.close();
    },
  });
  const parts: Uint8Array[] = [];
  await decryptStream(stream, key, (p) => {
    parts.push(p);
  });
  return Buffer.concat(parts);
}

/** The stored bytes from `from` on, in chunks, failing like a dropped connection once `breakAt` bytes of them went out. */
function flaky(bytes: Uint8Array, from: number, breakAt?: number): ReadableStream<Uint8Array> {
  const end = breakAt === undefined ? bytes.length : from + breakAt;
  let at = from;
  // Pulled one chunk at a time: an error raised while chunks wait in the queue would drop them.
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (at < end) {
          controller.enqueue(bytes.slice(at, Math.min(at + 5000, end)));
          at += 5000;
        } else if (breakAt === undefined) controller.close();
        else controller.error(new TypeError('network error'));
      },
    },
    { highWaterMark: 0 },
  );
}

for (const dialect of DIALECTS) {
  describe(`web decryptor against the sealed route [${dialect}]`, () => {
    it('decrypts file links of every segment shape, in any chunking', async (t) => {
      const { app } = await build(t, dialect);
      const ada = await signUp(app);
      const root = await rootFolderId(ada);
      const SEG = 64 * 1024;
      for (const size of [0, 1, SEG - 1, SEG, SEG + 1, 2 * SEG, 2 * SEG + 12345]) {
        const data = randomBytes(size);
        const file = await putFile(app, ada, root, `f-${size}.bin`, data);
        const link = await ada.api.post(`/api/files/share/${file.id}`, {});
        assert.equal(link.status, 201);
        const { hash, key } = splitLink(link.body.data.shareLink);
        if (size === 0) {
          // File info hands out the first wrap, so a page tells a wrong key before it spends an access.
          const info = (await app.inject({ method: 'POST', url: `/api/files/shared/${hash}`, payload: {} })).json().data;
          await unwrapChain(key, [info.keyCheck.wrapped], [info.keyCheck.id]);
          await assert.rejects(
            unwrapChain(randomBytes(32).toString('base64url'), [info.keyCheck.wrapped], [info.keyCheck.id]),
            WrongKeyError,
          );
        }
        const { headers, bytes } = await sealedDownload(app, hash, key);
        for (const chunk of [1, 16, 7000, SEG + 16, 1 << 20]) {
          if (chunk === 1 && size >= SEG) continue; // byte by byte on big files is just slow
          const plain = await decryptSealed(key, headers, bytes, chunk);
          assert.ok(plain.equals(data), `size ${size}, chunks of ${chunk}`);
        }
      }
    });

    it('decryptResumable carries on where two network breaks stopped it, and gives up when told to', async (t) => {
      const { app } = await build(t, dialect);
      const ada = await signUp(app);
      const data = randomBytes(5 * 65536 + 777);
      const file = await putFile(app, ada, await rootFolderId(ada), 'flaky.bin', data);
      const { hash, key } = splitLink((await ada.api.post(`/api/files/share/${file.id}`, {})).body.data.shareLink);
      const { headers, bytes } = await sealedDownload(app, hash, key);
      const { chain, ids } = chainFromHeaders(headers);
      const dataKey = await unwrapChain(key, chain, ids);

      // Breaks inside a segment and inside the next response: each resume asks from the exact byte.
      const offsets: number[] = [];
      const breaks: (number | undefined)[] = [70_001, undefined];
      const parts: Uint8Array[] = [];
      let progress = 0;
      await decryptResumable(
        dataKey,
        flaky(bytes, 0, 100_003),
        async (offset, error) => {
          assert.ok(error instanceof TypeError);
          offsets.push(offset);
          return flaky(bytes, offset, breaks.shift());
        },
        (p) => void parts.push(p),
        (read) => (progress = read),
      );
      assert.deepEqual(offsets, [100_003, 170_004]);
      assert.equal(progress, bytes.length);
      assert.ok(Buffer.concat(parts).equals(data));

      // Given up: the network error surfaces; a damaged byte in a resumed part is never taken.
      await assert.rejects(
        decryptResumable(
          dataKey,
          flaky(bytes, 0, 1000),
          async () => null,
          () => {},
        ),
        TypeError,
      );
      const damaged = bytes.slice();
      damaged[200_000] ^= 1;
      await assert.rejects(
        decryptResumable(
          dataKey,
          flaky(bytes, 0, 100_000),
          async (offset) => flaky(damaged, offset),
          () => {},
        ),
        DamagedContentError,
      );
    });

    it("the page's WebCrypto key proof is the one the server checks", async (t) => {
      const { app } = await build(t, dialect);
      const ada = await signUp(app);
      const file = await putFile(app, ada, await rootFolderId(ada), 'p.txt', 'proof');
      const { hash, key } = splitLink((await ada.api.post(`/api/files/share/${file.id}`, {})).body.data.shareLink);
      const proof = await linkKeyProof(key);
      assert.equal(proof, keyProofOf(Buffer.from(key, 'base64url')));
      const ok = await app.inject({ method: 'POST', url: `/api/files/download/public/${hash}/sealed`, payload: { keyProof: proof } });
      assert.equal(ok.statusCode, 200);
      const other = await linkKeyProof(randomBytes(32).toString('base64url'));
      const refused = await app.inject({ method: 'POST', url: `/api/files/download/public/${hash}/sealed`, payload: { keyProof: other } });
      assert.equal(refused.statusCode, 403);
    });

    it('decrypts a file of a subfolder through a folder link, and refuses wrong keys and damage', async (t) => {
      const { app } = await build(t, dialect);
      const ada = await signUp(app);
      const parent = (await ada.api.post(`/api/folders/create/${ada.defaultBucketId}`, { name: 'Shared' })).body.data.id;
      const child = (await ada.api.post(`/api/folders/create/${ada.defaultBucketId}`, { name: 'Inner', parentId: parent })).body.data.id;
      const data = randomBytes(150_000);
      const file = await putFile(app, ada, child, 'deep.bin', data);
      const link = await ada.api.post(`/api/folders/share/${parent}`, {});
      assert.equal(link.status, 201);
      const { hash, key } = splitLink(link.body.data.shareLink);
      const { headers, bytes } = await sealedDownload(app, hash, key, { hashName: file.hashName });
      assert.equal(chainFromHeaders(headers).chain.length, 4, 'link → folder, subfolder, file, data key');
      assert.ok((await decryptSealed(key, headers, bytes)).equals(data));

      const otherKey = randomBytes(32).toString('base64url');
      // The folder's page checks the key with the first wrap before any download.
      const opened = await app.inject({ method: 'POST', url: `/api/folders/shared/${hash}`, payload: {} });
      const check = opened.json().data.keyCheck;
      assert.deepEqual([check.wrapped, check.id], [chainFromHeaders(headers).chain[0], chainFromHeaders(headers).ids[0]]);
      await unwrapChain(key, [check.wrapped], [check.id]);
      await assert.rejects(unwrapChain(otherKey, [check.wrapped], [check.id]), WrongKeyError);
      await assert.rejects(decryptSealed(otherKey, headers, bytes), WrongKeyError);
      await assert.rejects(decryptSealed('short', headers, bytes), WrongKeyError);

      const flipped = bytes.slice();
      flipped[100] ^= 1;
      await assert.rejects(decryptSealed(key, headers, flipped), DamagedContentError);
      await assert.rejects(decryptSealed(key, headers, bytes.slice(0, bytes.length - 1)), DamagedContentError);
      // Cut at a segment edge: the last whole segment was not sealed as the final one.
      await assert.rejects(decryptSealed(key, headers, bytes.slice(0, 16 + 2 * (65536 + 16))), DamagedContentError);
      const header = bytes.slice();
      header[12] ^= 1;
      await assert.rejects(decryptSealed(key, headers, header), DamagedContentError);
    });
  });
}
