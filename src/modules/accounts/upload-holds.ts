import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Config } from '../../config.js';
import type { Db, DbOrTrx } from '../../db/database.js';
import { mutation } from '../../db/transaction.js';
import { AppError } from '../../errors.js';
import { isoPlus, nowIso } from '../../lib/time.js';

const MiB = 1024 * 1024;
/** A growing hold's first step; each next one is as large as what it holds, up to MAX_STEP. */
const MIN_STEP = 1 * MiB;
const MAX_STEP = 64 * MiB;
/** A hold's lease, renewed at half while its bytes flow: the upkeep clears one that ran out (its instance crashed). */
const HOLD_LEASE_MS = 10 * 60 * 1000;

type HoldConfig = Pick<Config, 'defaultQuotaBytes' | 'maxUploadBytes'>;

/** The quota cannot take a step: the transaction is rolled back. */
class Refused extends Error {}

/**
 * One upload's hold on its owner's quota while its bytes arrive (migration 011): the counter
 * `users.held_bytes` is checked with `used_bytes` in one conditional update, so the holds of every
 * instance over the database never pass the quota together; the hold's row says what to give back
 * when the upload fails, is recorded (then the version's bytes count instead) or its instance dies.
 *
 * A step is a transaction, so a hold grows in steps, not per chunk: doubling from 1 MiB to 64 MiB
 * (a 1 GiB upload of unknown length takes about 20, and holds at most 64 MiB more than arrived),
 * or an announced length at once (one step: a raw upload's Content-Length, or a multipart part's
 * bound by its request's). Near the quota a step that does not fit falls back to all the quota
 * leaves, so a step never refuses what the quota can take.
 */
export class UploadHold {
  readonly id: string;
  private held: number;
  /** A row of this hold may exist. */
  private written: boolean;
  private renewAt = 0;
  private readonly leaseMs: number;

  /**
   * `resume` continues the hold of an upload that spans requests (a resumable upload, whose row
   * shares the hold's id and whose hold lasts as long as the upload may: `leaseMs`).
   */
  constructor(
    private readonly db: Db,
    private readonly ownerId: string,
    private readonly config: HoldConfig,
    resume?: { id: string; held: number; leaseMs: number },
  ) {
    this.id = resume?.id ?? randomUUID();
    this.held = resume?.held ?? 0;
    this.written = resume !== undefined;
    this.leaseMs = resume?.leaseMs ?? HOLD_LEASE_MS;
  }

  get bytes(): number {
    return this.held;
  }

  /** The row to release with the upload's recording, if this hold took anything. */
  get recordId(): string | undefined {
    return this.written ? this.id : undefined;
  }

  /** For the content store, with the running byte count: nothing while they are held (the hot path), else a step. */
  readonly cover = (bytes: number): void | Promise<void> => {
    if (bytes <= this.held) return this.renewIfDue();
    const step = Math.min(Math.max(this.held, MIN_STEP), MAX_STEP);
    return this.grow(bytes, Math.max(bytes, Math.min(bytes + step, this.config.maxUploadBytes)));
  };

  /** Holds exactly `bytes` (a length announced up front), or refuses with 507 QUOTA_EXCEEDED. */
  take(bytes: number): Promise<void> {
    return this.grow(bytes, bytes);
  }

  /** Holds up to `bytes` (what a body may hold at most), as much as the quota leaves: the bytes themselves are checked as they come. */
  expect(bytes: number): Promise<void> {
    return this.grow(0, bytes);
  }

  /** The recording's transaction released the row (deleteHolds): nothing left to give back. */
  recorded(): void {
    this.held = 0;
    this.written = false;
  }

  /** Gives the hold back (a failed upload); a hold that never took anything costs nothing. */
  async release(): Promise<void> {
    if (!this.written) return;
    this.recorded();
    await releaseHold(this.db, this.id);
  }

  private async grow(needed: number, wanted: number): Promise<void> {
    if (wanted <= this.held) return;
    if (await this.hold(wanted)) return;
    // Near the quota a whole step may not fit where the bytes do: then all the quota leaves, so
    // the chunks up to it need no step each.
    const most = wanted > needed ? await this.most() : 0;
    if (most > 0 && most >= needed && (await this.hold(most))) return;
    // expect(): nothing more held for now, the bytes are checked as they come.
    if (needed === 0) return;
    throw new AppError('QUOTA_EXCEEDED');
  }

  /** The most this hold could hold now: what the owner's quota leaves, and what its row holds already. */
  private async most(): Promise<number> {
    const owner = await this.db
      .selectFrom('users')
      .select(['quota_bytes', 'used_bytes', 'held_bytes'])
      .where('id', '=', this.ownerId)
      .executeTakeFirst();
    if (!owner) return 0;
    const row = this.written
      ? await this.db.selectFrom('upload_holds').select('bytes').where('id', '=', this.id).executeTakeFirst()
      : undefined;
    const left = Number(owner.quota_bytes ?? this.config.defaultQuotaBytes) - Number(owner.used_bytes) - Number(owner.held_bytes);
    return Math.max(0, left) + Number(row?.bytes ?? 0);
  }

  private async hold(total: number): Promise<boolean> {
    const expiresAt = isoPlus(nowIso(), this.leaseMs);
    try {
      await mutation(this.db, async (trx) => {
        const gained = await this.writeRow(trx, total, expiresAt);
        if (!(await addHeld(trx, this.ownerId, gained, this.config.defaultQuotaBytes))) throw new Refused();
      });
    } catch (error) {
      if (error instanceof Refused) return false;
      throw error;
    }
    this.held = total;
    this.written = true;
    this.renewAt = Date.now() + this.leaseMs / 2;
    return true;
  }

  /**
   * Sets the row to `total`, first (rows before owners, as every writer of both); returns what the
   * counter gains: all of it when the row is new, or was cleared by the upkeep meanwhile (which
   * took its bytes off the counter then).
   */
  private async writeRow(trx: DbOrTrx, total: number, expiresAt: string): Promise<number> {
    if (this.written) {
      const updated = await trx
        .updateTable('upload_holds')
        .set({ bytes: total, expires_at: expiresAt })
        .where('id', '=', this.id)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 1) return total - this.held;
    }
    await trx.insertInto('upload_holds').values({ id: this.id, user_id: this.ownerId, bytes: total, expires_at: expiresAt }).execute();
    return total;
  }

  private renewIfDue(): void {
    if (!this.written || Date.now() < this.renewAt) return;
    this.renewAt = Date.now() + this.leaseMs / 2;
    // A renewal lost is harmless: a hold cleared meanwhile is taken again whole at its next step.
    this.db
      .updateTable('upload_holds')
      .set({ expires_at: isoPlus(nowIso(), this.leaseMs) })
      .where('id', '=', this.id)
      .execute()
      .catch(() => {});
  }
}

/** Adds `bytes` to what the user's uploads in flight hold, if the quota allows it (used + held ≤ quota). */
async function addHeld(db: DbOrTrx, userId: string, bytes: number, defaultQuota: number): Promise<boolean> {
  const result = await sql`
    update users set held_bytes = held_bytes + ${bytes}
    where id = ${userId} and used_bytes + held_bytes + ${bytes} <= coalesce(quota_bytes, ${defaultQuota})
  `.execute(db);
  return Number(result.numAffectedRows ?? 0) === 1;
}

/** Deletes holds' rows; returns what each held, for the caller to take off the counter (reserveQuota does, with the recording). */
export async function deleteHolds(db: DbOrTrx, ids: string[]): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const rows = await db.deleteFrom('upload_holds').where('id', 'in', ids).returning(['id', 'bytes']).execute();
  return new Map(rows.map((row) => [row.id, Number(row.bytes)]));
}

/** Gives back the hold of an upload that spans requests (a resumable upload's, by its id), if it has one. */
export async function releaseHold(db: DbOrTrx, id: string): Promise<void> {
  await mutation(db, (trx) => releaseHolds(trx, [id]));
}

/** Deletes holds and takes their bytes off their owners' counters. */
async function releaseHolds(db: DbOrTrx, ids: string[]): Promise<void> {
  const rows = await db.deleteFrom('upload_holds').where('id', 'in', ids).returning(['user_id', 'bytes']).execute();
  await takeOffCounters(db, rows);
}

/** Holds taken back by a recording that then left their uploads out (recordNewFiles): their rows and bytes again. */
export async function restoreHolds(db: DbOrTrx, ownerId: string, holds: Map<string, number>): Promise<void> {
  if (holds.size === 0) return;
  const expiresAt = isoPlus(nowIso(), HOLD_LEASE_MS);
  await db
    .insertInto('upload_holds')
    .values([...holds].map(([id, bytes]) => ({ id, user_id: ownerId, bytes, expires_at: expiresAt })))
    .execute();
  const bytes = [...holds.values()].reduce((sum, held) => sum + held, 0);
  await sql`update users set held_bytes = held_bytes + ${bytes} where id = ${ownerId}`.execute(db);
}

/** The upkeep's step: clears the holds whose lease ran out before `now` (a crashed or stalled instance's). */
export async function clearStaleHolds(db: Db, now: string): Promise<number> {
  return mutation(db, async (trx) => {
    const rows = await trx.deleteFrom('upload_holds').where('expires_at', '<', now).returning(['user_id', 'bytes']).execute();
    await takeOffCounters(trx, rows);
    return rows.length;
  });
}

async function takeOffCounters(db: DbOrTrx, rows: { user_id: string; bytes: number | string }[]): Promise<void> {
  const byOwner = new Map<string, number>();
  for (const row of rows) byOwner.set(row.user_id, (byOwner.get(row.user_id) ?? 0) + Number(row.bytes));
  // In id order: two clearings at once lock the owners' rows in the same order.
  for (const [userId, bytes] of [...byOwner].sort(([a], [b]) => (a < b ? -1 : 1))) {
    await sql`update users set held_bytes = held_bytes - ${bytes} where id = ${userId}`.execute(db);
  }
}
