// Uploads in flight count against the quota (issue 29, item 2): their bytes are held in the
// database as they arrive (users.held_bytes, one upload_holds row per upload), on every instance
// over one database, released when the upload fails or is recorded, and cleared by the upkeep
// once a crashed instance's lease is over. With the body idle timeout, no account holds more than
// its quota on disk at any moment.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildApp } from '../../../src/app.js';
import { maintenanceRound } from '../../../src/jobs.js';
import { isoPlus, nowIso } from '../../../src/lib/time.js';
import { UploadHold } from '../../../src/modules/accounts/upload-holds.js';
import { DIALECTS, build, signUp, type TestApp, type TestUser } from '../../helper.js';
import { rootFolderId } from '../../support/files.js';
import { heldNow, upkeepContext } from '../../support/holds.js';
import { connect, listen, tempFiles, type RawAnswer, type RawConnection } from '../../support/raw-http.js';
import { eventually } from '../../support/wait.js';

const MiB = 1024 * 1024;
const QUOTA = 8 * MiB;
const FILE = 8_000_000;
const BOUNDARY = 'holds-boundary-29';
// Stored bytes are the plaintext's plus a 16-byte tag per 64 KiB segment and a header.
const STORED_SLACK = 1.001;

type Framing = 'content-length' | 'chunked' | 'multipart';

/** The head of an upload of FILE bytes, and how each piece of its body goes on the wire. */
function uploadWire(framing: Framing, folderId: string, user: TestUser, name: string) {
  const auth = `Host: 127.0.0.1\r\nAuthorization: Bearer ${user.token}\r\n`;
  if (framing === 'multipart') {
    const partHead = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`;
    const length = partHead.length + FILE + `\r\n--${BOUNDARY}--\r\n`.length;
    return {
      head: `POST /api/files/upload/${folderId} HTTP/1.1\r\n${auth}Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${length}\r\n\r\n${partHead}`,
      piece: (b: Buffer) => b,
    };
  }
  const framingHeader = framing === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${FILE}`;
  const head = `PUT /api/files/upload/${folderId}?name=${name} HTTP/1.1\r\n${auth}Content-Type: application/octet-stream\r\n${framingHeader}\r\n\r\n`;
  const piece =
    framing === 'chunked'
      ? (b: Buffer) => Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')])
      : (b: Buffer) => b;
  return { head, piece };
}

/**
 * Sends FILE − 1 bytes in 1 MB pieces, then stalls; stops once the server has answered (which
 * stops reading a body it refused: a write waiting for it would wait for the connection's end).
 */
async function sendAllButLast(connection: RawConnection, wire: ReturnType<typeof uploadWire>, answered: Promise<unknown>): Promise<void> {
  let done = false;
  const stop = answered.then(() => (done = true));
  await connection.send(wire.head);
  const data = randomBytes(FILE - 1);
  for (let at = 0; at < data.length && !done; at += 1_000_000) {
    const sent = connection.send(wire.piece(data.subarray(at, Math.min(at + 1_000_000, data.length)))).then(
      () => true,
      () => false,
    );
    if (!(await Promise.race([sent, stop.then(() => false)]))) return;
  }
}

/** A second instance of the app over the same database (and data folder), closed by the caller. */
async function secondInstance(test: TestApp) {
  const other = await buildApp({ config: test.config, database: test.database, logStream: false, webRoot: null });
  await other.ready();
  return other;
}

for (const dialect of DIALECTS) {
  describe(`uploads in flight count against the quota [${dialect}]`, () => {
    for (const framing of ['content-length', 'chunked', 'multipart'] as const) {
      it(`four concurrent ${framing} uploads of 8 MB stalled before their last byte never hold more than an 8 MiB quota, over two instances`, async (t) => {
        const test = await build(t, dialect, { config: { defaultQuotaBytes: QUOTA, bodyIdleSeconds: 2, collectIntervalSeconds: 0 } });
        const { app, database, config } = test;
        const other = await secondInstance(test);
        const user = await signUp(app);
        const folder = await rootFolderId(user);
        const ports = [await listen(app), await listen(other)];
        const connections = await Promise.all([0, 1, 2, 3].map((i) => connect(ports[i % 2])));
        let maxOnDisk = 0;
        let maxCounted = 0;
        let status: any;
        const answers: (RawAnswer | undefined)[] = [];
        try {
          const answering = connections.map((c, i) => c.answer(20_000).then((a) => (answers[i] = a)));
          let sampling = true;
          const sampler = (async () => {
            while (sampling) {
              maxOnDisk = Math.max(maxOnDisk, tempFiles(config).bytes);
              const now = await heldNow(database, user.id).catch(() => ({ used: 0, held: 0 }));
              maxCounted = Math.max(maxCounted, now.used + now.held);
              await sleep(20);
            }
          })();
          await Promise.all(connections.map((c, i) => sendAllButLast(c, uploadWire(framing, folder, user, `f${i}.bin`), answering[i])));
          // All stalled: what is still in flight shows in the storage status.
          status = (await user.api.get('/api/storage/status')).body.data;
          await Promise.all(answering);
          sampling = false;
          await sampler;
        } finally {
          for (const c of connections) c.close();
          // A body refused mid-way is no longer read, so its connection would only end with Node's
          // keep-alive timeout (72 s): the test does not wait for it.
          for (const instance of [app, other]) instance.server.closeAllConnections();
          await other.close();
        }
        assert.ok(maxOnDisk <= QUOTA * STORED_SLACK, `${maxOnDisk} bytes sat in blobs/tmp at once, over the ${QUOTA}-byte quota`);
        assert.ok(maxCounted <= QUOTA, `used + held reached ${maxCounted}`);
        const codes = answers.map((a) => a?.status).sort();
        assert.ok(
          codes.every((code) => code === 507 || code === 408),
          `answers: ${codes.join(', ')}`,
        );
        assert.ok(codes.filter((code) => code === 507).length >= 3, `at most one upload can be in flight at a time: ${codes.join(', ')}`);
        for (const answer of answers)
          assert.equal(JSON.parse(answer!.body).code, answer!.status === 507 ? 'QUOTA_EXCEEDED' : 'REQUEST_TIMEOUT');
        // The one that stalled (if any was not refused) was still held then.
        assert.ok(
          status.in_progress_bytes <= QUOTA && (status.in_progress_bytes > 0 || !codes.includes(408)),
          `in progress: ${status.in_progress_bytes}`,
        );
        assert.equal(status.remaining_bytes, Math.max(0, status.capacity_bytes - status.used_bytes - status.in_progress_bytes));
        assert.equal(typeof status.readable.in_progress, 'string');
        await eventually(async () => {
          assert.deepEqual(await heldNow(database, user.id), { used: 0, held: 0, rows: [] });
          assert.deepEqual(tempFiles(config).files, []);
        });
      });
    }

    it('a hold grows in steps, not a round trip per chunk; an announced length (raw or multipart) is held at once; recording releases it', async (t) => {
      let holdStatements = 0;
      const test = await build(t, dialect, { onQuery: (event) => void (/upload_holds/.test(event.query.sql) && holdStatements++) });
      const user = await signUp(test.app);
      const folder = await rootFolderId(user);
      const data = randomBytes(20 * MiB);
      const upload = (name: string, payload: Buffer | Readable) =>
        test.app.inject({
          method: 'PUT',
          url: `/api/files/upload/${folder}?name=${name}`,
          headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/octet-stream' },
          payload,
        });

      // A stream of unknown length: 20 MiB in 64 KiB chunks, 320 of them.
      const chunks = Array.from({ length: data.length / (64 * 1024) }, (_, i) => data.subarray(i * 64 * 1024, (i + 1) * 64 * 1024));
      const streamed = await upload('streamed.bin', Readable.from(chunks));
      assert.equal(streamed.statusCode, 201, streamed.body);
      assert.ok(holdStatements >= 2 && holdStatements <= 16, `${holdStatements} statements on upload_holds for 320 chunks`);
      assert.deepEqual(await heldNow(test.database, user.id), { used: data.length, held: 0, rows: [] });

      // Content-Length: one step up front, one release with the record.
      holdStatements = 0;
      const whole = await upload('whole.bin', data);
      assert.equal(whole.statusCode, 201, whole.body);
      assert.equal(holdStatements, 2);
      assert.deepEqual(await heldNow(test.database, user.id), { used: 2 * data.length, held: 0, rows: [] });

      // Multipart: the part is held at once, bound by its request's Content-Length.
      holdStatements = 0;
      const partHead = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="part.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
      const multipart = await test.app.inject({
        method: 'POST',
        url: `/api/files/upload/${folder}`,
        headers: { authorization: `Bearer ${user.token}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
        payload: Buffer.concat([Buffer.from(partHead), data, Buffer.from(`\r\n--${BOUNDARY}--\r\n`)]),
      });
      assert.equal(multipart.statusCode, 201, multipart.body);
      assert.equal(holdStatements, 2);
      assert.deepEqual(await heldNow(test.database, user.id), { used: 3 * data.length, held: 0, rows: [] });

      // A small body kept in the database is never on disk before its record: no hold at all.
      holdStatements = 0;
      assert.equal((await upload('small.bin', randomBytes(1000))).statusCode, 201);
      assert.equal(holdStatements, 0);
    });

    it('an announced length over what the quota leaves is refused 507 before any byte is stored', async (t) => {
      const test = await build(t, dialect, { config: { defaultQuotaBytes: QUOTA } });
      const user = await signUp(test.app);
      const folder = await rootFolderId(user);
      const port = await listen(test.app);
      const connection = await connect(port);
      try {
        await connection.send(
          uploadWire('content-length', folder, user, 'big.bin').head.replace(`Content-Length: ${FILE}`, `Content-Length: ${QUOTA + 1}`),
        );
        const answer = await connection.answer(3000);
        assert.equal(answer.status, 507);
        assert.equal(JSON.parse(answer.body).code, 'QUOTA_EXCEEDED');
      } finally {
        connection.close();
      }
      assert.deepEqual(await heldNow(test.database, user.id), { used: 0, held: 0, rows: [] });
    });

    it('a hold left by a crashed instance is cleared by the upkeep once its lease is over, a live one is not', async (t) => {
      const test = await build(t, dialect, { config: { defaultQuotaBytes: QUOTA, collectIntervalSeconds: 0 } });
      const user = await signUp(test.app);
      const folder = await rootFolderId(user);
      const db = test.database.db;
      // What a crash leaves: a row whose lease has run out, and its bytes in the counter.
      const past = isoPlus(nowIso(), -1000);
      const future = isoPlus(nowIso(), 600_000);
      await db
        .insertInto('upload_holds')
        .values([
          { id: randomUUID(), user_id: user.id, bytes: 5 * MiB, expires_at: past },
          { id: randomUUID(), user_id: user.id, bytes: 1 * MiB, expires_at: future },
        ])
        .execute();
      await db
        .updateTable('users')
        .set({ held_bytes: 6 * MiB })
        .where('id', '=', user.id)
        .execute();
      assert.equal((await user.api.get('/api/storage/status')).body.data.in_progress_bytes, 6 * MiB);
      const put = (name: string) =>
        test.app.inject({
          method: 'PUT',
          url: `/api/files/upload/${folder}?name=${name}`,
          headers: { authorization: `Bearer ${user.token}` },
          payload: randomBytes(3 * MiB),
        });
      assert.equal((await put('refused.bin')).statusCode, 507);

      await maintenanceRound(upkeepContext(t, test));
      assert.deepEqual(await heldNow(test.database, user.id), { used: 0, held: 1 * MiB, rows: [1 * MiB] });
      assert.equal((await put('fits.bin')).statusCode, 201);
    });

    it('a hold cleared while its upload still runs is taken again whole at its next step', async (t) => {
      const test = await build(t, dialect, { config: { defaultQuotaBytes: QUOTA, collectIntervalSeconds: 0 } });
      const user = await signUp(test.app);
      const hold = new UploadHold(test.database.db, user.id, test.config);
      await hold.cover(3 * MiB);
      const taken = await heldNow(test.database, user.id);
      assert.equal(taken.rows.length, 1);
      assert.equal(taken.held, taken.rows[0]);
      assert.ok(taken.held >= 3 * MiB);
      // The instance stalled past its lease: the upkeep takes the hold back.
      await test.database.db
        .updateTable('upload_holds')
        .set({ expires_at: isoPlus(nowIso(), -1000) })
        .execute();
      await maintenanceRound(upkeepContext(t, test));
      assert.deepEqual(await heldNow(test.database, user.id), { used: 0, held: 0, rows: [] });
      await hold.cover(hold.bytes + 1);
      const again = await heldNow(test.database, user.id);
      assert.equal(again.rows.length, 1);
      assert.equal(again.held, again.rows[0]);
      assert.ok(again.held > 3 * MiB, 'the whole upload is held again, not only its last step');
      await hold.release();
      assert.deepEqual(await heldNow(test.database, user.id), { used: 0, held: 0, rows: [] });
    });
  });
}
