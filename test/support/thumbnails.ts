import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import sharp from 'sharp';
import { openBlobStore } from '../../src/blobs/open-blob-store.js';
import { chooseEngine, createContentStore } from '../../src/content/index.js';
import type { AppContext } from '../../src/context.js';
import { Keyring } from '../../src/crypto/keyring.js';
import { loadMasterKey } from '../../src/crypto/master-key.js';
import type { TestApp, TestUser } from '../helper.js';

/**
 * A context over a test app's database and data folder, as the app builds its own (app.ts), for
 * running the thumbnail job in the test's own time (the apps of these tests run none).
 */
export async function contextOf(test: TestApp): Promise<AppContext> {
  const engine = chooseEngine(test.config.cryptoEngine);
  const blobs = await openBlobStore(test.config, engine.durableFiles);
  const keyring = new Keyring(loadMasterKey(test.config.masterKey, test.config.dataDir));
  const content = createContentStore(test.database.db, blobs, engine);
  return { config: test.config, database: test.database, db: test.database.db, keyring, blobs, content } as unknown as AppContext;
}

/** A photo-like JPEG: a gradient with noise, so it does not compress to nothing. */
export async function photo(width = 4000, height = 3000): Promise<Buffer> {
  const raw = Buffer.alloc(64 * 48 * 3);
  for (let i = 0; i < raw.length; i++) raw[i] = (i * 37) % 251;
  return sharp(raw, { raw: { width: 64, height: 48, channels: 3 } })
    .resize(width, height, { kernel: 'nearest' })
    .jpeg({ quality: 80 })
    .toBuffer();
}

/** Uploads `data` with a content type through the raw PUT route; returns the file detail. */
export async function putTyped(app: FastifyInstance, user: TestUser, folderId: string, name: string, type: string, data: Buffer) {
  const res = await app.inject({
    method: 'PUT',
    url: `/api/files/upload/${folderId}?name=${encodeURIComponent(name)}`,
    headers: { authorization: `Bearer ${user.token}`, 'content-type': type },
    payload: data,
  });
  assert.equal(res.statusCode, 201, res.body);
  const file = res.json().data;
  const versions = await user.api.get(`/api/files/versions/${file.id}`);
  return { ...file, currentVersionId: versions.body.data.find((v: { isCurrent: boolean }) => v.isCurrent).id as string };
}

/**
 * A decompression bomb: a valid PNG of a few hundred bytes whose header declares 50,000 × 50,000
 * pixels (2.5 gigapixels, 7.5 GB decoded), its pixel data a deflate stream of zeros.
 */
export function pngBomb(): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(50_000, 0);
  ihdr.writeUInt32BE(50_000, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB, deflate, no filter, no interlace
  const idat = zlib.deflateSync(Buffer.alloc(1024 * 1024), { level: 9 });
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', idat),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

function crc32(data: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of data) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}
