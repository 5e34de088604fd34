/**
 * The thumbnail row (issue 35): 16 clients keep uploading while the server's job makes the
 * thumbnails of 1,000 photos of 4,000 × 3,000 pixels; their upload rate against the same load on
 * the same server with the job off, for as long, and the server's peak RSS meanwhile.
 *
 * Knobs: BENCH_THUMB_PHOTOS (1000), BENCH_THUMB_WIDTH (4000) and BENCH_THUMB_HEIGHT (3000),
 * BENCH_THUMB_BODY_BYTES (the uploads of the load, 256 KiB: in the blob store, as photos are).
 */
import { execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import sharp from 'sharp';
import { Client } from 'undici';
import type { DatabaseHandle } from '../src/db/database.js';
import { putMany } from './api-rows.js';
import { peakRss, resetPeakRss, type Row } from './lib.js';

const PHOTOS = Number(process.env.BENCH_THUMB_PHOTOS ?? 1000);
const WIDTH = Number(process.env.BENCH_THUMB_WIDTH ?? 4000);
const HEIGHT = Number(process.env.BENCH_THUMB_HEIGHT ?? 3000);
const BODY = Number(process.env.BENCH_THUMB_BODY_BYTES ?? 256 * 1024);
const CLIENTS = 16;
const RSS_BAR = 300e6;

export interface ThumbnailSubject {
  base: string;
  auth: { authorization: string };
  root: string;
  /** Restarts the server with these settings added; its pid. */
  restart: (env: Record<string, string>) => Promise<number>;
  /** The server's database, opened while it runs (to count the thumbnails made). */
  openDatabase: () => Promise<DatabaseHandle>;
}

/** Photo-like JPEGs (a gradient with texture: some MB each, as a camera's), a few to upload in turn. */
async function photos(): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for (let k = 0; k < 4; k++) {
    const raw = Buffer.alloc(160 * 120 * 3);
    for (let i = 0; i < raw.length; i++) raw[i] = (i * (37 + k) + (i >> 7) * 11) % 251;
    out.push(
      await sharp(raw, { raw: { width: 160, height: 120, channels: 3 } })
        .resize(WIDTH, HEIGHT)
        .jpeg({ quality: 90 })
        .toBuffer(),
    );
  }
  return out;
}

/** Uploads for `seconds` from 16 clients; uploads per second. */
async function uploadFor(subject: ThumbnailSubject, seconds: number, prefix: string): Promise<number> {
  const origin = new URL(subject.base).origin;
  const path = new URL(subject.base).pathname;
  const body = Buffer.alloc(BODY, 7);
  const clients = Array.from({ length: CLIENTS }, () => new Client(origin));
  const until = Date.now() + seconds * 1000;
  let done = 0;
  const started = process.hrtime.bigint();
  try {
    await Promise.all(
      clients.map(async (client, c) => {
        for (let i = 0; Date.now() < until; i++) {
          const res = await client.request({
            method: 'PUT',
            path: `${path}/files/upload/${subject.root}?name=${prefix}-${c}-${i}.bin`,
            headers: { ...subject.auth, 'content-type': 'application/octet-stream' },
            body,
          });
          const text = await res.body.text();
          if (res.statusCode >= 300) throw new Error(`upload answered ${res.statusCode}: ${text}`);
          done++;
        }
      }),
    );
  } finally {
    await Promise.all(clients.map((client) => client.close()));
  }
  return done / (Number(process.hrtime.bigint() - started) / 1e9);
}

async function countDone(database: DatabaseHandle): Promise<number> {
  const row = await database.db
    .selectFrom('thumbnails')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('state', '!=', 'pending')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function thumbnailRows(subject: ThumbnailSubject, label: string): Promise<Row[]> {
  // The photos go up with the job off, so that all 1,000 wait when the measured phase starts.
  await subject.restart({ COFFRE_THUMBNAIL_INTERVAL_SECONDS: '0' });
  const images = await photos();
  const origin = new URL(subject.base).origin;
  const apiPath = new URL(subject.base).pathname;
  for (let k = 0; k < images.length; k++) {
    const n = Math.floor(PHOTOS / images.length) + (k < PHOTOS % images.length ? 1 : 0);
    const headers = { ...subject.auth, 'content-type': 'image/jpeg' };
    await putMany(origin, (i) => `${apiPath}/files/upload/${subject.root}?name=photo-${k}-${i}.jpg`, headers, images[k], n, CLIENTS);
  }
  process.stderr.write(`${label}: ${PHOTOS} photos of ${(images[0].length / 1e6).toFixed(1)} MB uploaded\n`);

  // The photos' gigabytes written back first, so that the measured phase does not pay for them.
  execFileSync('sync');
  await sleep(5000);
  // With the job: the load runs until every thumbnail is made.
  const pid = await subject.restart({ COFFRE_THUMBNAIL_INTERVAL_SECONDS: '1' });
  resetPeakRss(pid);
  const database = await subject.openDatabase();
  let withJob: number;
  const started = Date.now();
  try {
    const load = { stop: false };
    const rates: number[] = [];
    // Slices of 10 s, until the job has made them all.
    while (!load.stop) {
      rates.push(await uploadFor(subject, 10, `with-${rates.length}`));
      if ((await countDone(database)) >= PHOTOS) load.stop = true;
    }
    withJob = rates.reduce((a, b) => a + b, 0) / rates.length;
  } finally {
    await database.close();
  }
  const seconds = (Date.now() - started) / 1000;
  const rss = peakRss(pid);
  // Without: the same load, as long, on the same server with the job off.
  const plainPid = await subject.restart({ COFFRE_THUMBNAIL_INTERVAL_SECONDS: '0' });
  resetPeakRss(plainPid);
  const without = await uploadFor(subject, seconds, 'without');
  // For comparison: what the same load alone peaks at.
  const plainRss = peakRss(plainPid);
  process.stderr.write(
    `${label}: thumbnails in ${seconds.toFixed(0)} s; uploads ${withJob.toFixed(0)}/s with, ${without.toFixed(0)}/s without; peak RSS ${(rss / 1e6).toFixed(0)} MB with, ${(plainRss / 1e6).toFixed(0)} MB without\n`,
  );
  const what = `${PHOTOS} thumbnails of ${WIDTH} × ${HEIGHT} photos made (${seconds.toFixed(0)} s) while ${CLIENTS} clients upload ${BODY / 1024} KiB files`;
  return [
    {
      name: `${label} · Upload rate while ${what}`,
      figure: `${withJob.toFixed(0)} uploads/s`,
      ceiling: `${without.toFixed(0)} uploads/s without thumbnails`,
      ratio: `${((withJob / without) * 100).toFixed(0)} %`,
      bar: '≥ 80 %',
      pass: withJob / without >= 0.8,
    },
    {
      name: `${label} · Peak server RSS while ${what}`,
      figure: `${(rss / 1e6).toFixed(0)} MB`,
      ceiling: `300 MB (${(plainRss / 1e6).toFixed(0)} MB without thumbnails)`,
      ratio: `${((rss / RSS_BAR) * 100).toFixed(0)} %`,
      bar: '< 300 MB',
      pass: rss < RSS_BAR,
    },
  ];
}
