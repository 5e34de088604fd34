import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Db, DbOrTrx } from '../../db/database.js';
import type { LinkPassRow } from '../../db/schema.js';
import { DAY_MS, isoPlus } from '../../lib/time.js';

/**
 * Resume passes of file-link downloads (issue 29, "fair link counting"). A counted download
 * reserves one access and hands out a pass (`X-Coffre-Pass`); the access is spent when a transfer
 * on the pass delivers its last byte, and given back when every transfer on it broke off first.
 * For PASS_WINDOW_MS after its last transfer ended, the pass resumes the same version: free once
 * spent, re-reserving once released. Parallel transfers on one pass (ranges) share its access.
 */
export const PASS_WINDOW_MS = 15 * 60 * 1000;
/** A pass still `held` this long after its last start belonged to an instance that died: its access stays spent. */
export const DEAD_PASS_KEPT_MS = 2 * DAY_MS;

/** A pass a transfer runs on: the token the client holds, and until when it resumes. */
export interface Pass {
  token: string;
  tokenHash: string;
  expiresAt: string;
}

/**
 * One counted transfer, made by the route before the service runs: the service calls `hold` once
 * the transfer holds an access (reserved, or joined on the pass the client sent back), and the
 * route calls `end` when the response ends, which settles the pass.
 */
export class LinkTransfer {
  private pass: Pass | null = null;
  private ended: boolean | undefined;

  constructor(private readonly settle: (pass: Pass, delivered: boolean) => void) {}

  /** The pass this transfer holds an access on; settled at once when the response already ended. */
  hold(pass: Pass): void {
    this.pass = pass;
    if (this.ended !== undefined) this.settle(pass, false);
  }

  get held(): Pass | null {
    return this.pass;
  }

  /** The response ended: `delivered` when its last byte went out with a 200 or 206. Only the first call counts. */
  end(delivered: boolean): void {
    if (this.ended !== undefined) return;
    this.ended = delivered;
    if (this.pass) this.settle(this.pass, delivered);
  }
}

export function hashPassToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export async function findPass(db: DbOrTrx, token: string): Promise<LinkPassRow | undefined> {
  if (!/^[A-Za-z0-9_-]{16,64}$/.test(token)) return undefined;
  return db.selectFrom('link_passes').selectAll().where('token_hash', '=', hashPassToken(token)).executeTakeFirst();
}

/** Whether a pass lets its holder past an exhausted limit: transfers in flight on it, or spent and still in its window. */
export function passOpens(row: LinkPassRow, now: string): boolean {
  return row.state === 'held' || (row.state === 'spent' && row.expires_at > now);
}

/**
 * Starts a transfer on a pass the client presented, for `linkId`'s `versionId`: joins it while
 * transfers are in flight, resumes it free once spent, re-reserves (`reserve`, which throws 410
 * when the link is closed) once released. Null when the pass does not cover this transfer.
 */
export async function resumePass(
  db: Db,
  token: string,
  linkId: string,
  versionId: string,
  now: string,
  reserve: (trx: DbOrTrx) => Promise<void>,
): Promise<Pass | null> {
  const tokenHash = hashPassToken(token);
  const expiresAt = isoPlus(now, PASS_WINDOW_MS);
  // A state can change between the read and the conditional update; a few rounds settle it.
  for (let round = 0; round < 4; round++) {
    const row = await findPass(db, token);
    if (!row || row.link_id !== linkId || row.version_id !== versionId) return null;
    const join = (state: 'held' | 'spent') => {
      const update = db
        .updateTable('link_passes')
        .set((eb) => ({ in_flight: eb('in_flight', '+', 1), expires_at: expiresAt }))
        .where('token_hash', '=', tokenHash)
        .where('state', '=', state);
      return (state === 'spent' ? update.where('expires_at', '>', now) : update).executeTakeFirst();
    };
    if (row.state === 'held' || row.state === 'spent') {
      if (row.state === 'spent' && row.expires_at <= now) return null;
      if (Number((await join(row.state)).numUpdatedRows) === 1) return { token, tokenHash, expiresAt };
      continue;
    }
    if (row.expires_at <= now) return null;
    // Released: claim it and reserve an access in one transaction, so a transfer joining it
    // meanwhile waits for the reservation (or sees it released again when the link is closed).
    const claimed = await db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('link_passes')
        .set((eb) => ({ state: 'held', in_flight: eb('in_flight', '+', 1), expires_at: expiresAt }))
        .where('token_hash', '=', tokenHash)
        .where('state', '=', 'released')
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return false;
      await reserve(trx);
      return true;
    });
    if (claimed) return { token, tokenHash, expiresAt };
  }
  return null;
}

/** A pass for `token` (a new one when none is given) whose window runs from `now`. */
function passFrom(now: string, token = randomBytes(24).toString('base64url')): Pass {
  return { token, tokenHash: hashPassToken(token), expiresAt: isoPlus(now, PASS_WINDOW_MS) };
}

/** Stores a new pass: `held` by its first transfer, or `spent` at once. */
async function insertPass(db: DbOrTrx, pass: Pass, linkId: string, versionId: string, state: 'held' | 'spent', now: string) {
  await db
    .insertInto('link_passes')
    .values({
      token_hash: pass.tokenHash,
      link_id: linkId,
      version_id: versionId,
      state,
      in_flight: state === 'held' ? 1 : 0,
      expires_at: pass.expiresAt,
      created_at: now,
    })
    .execute();
}

/** A new pass on an access `reserve` takes (throwing 410 when it cannot). */
export async function newPass(
  db: Db,
  linkId: string,
  versionId: string,
  now: string,
  reserve: (trx: DbOrTrx) => Promise<void>,
): Promise<Pass> {
  await reserve(db);
  const pass = passFrom(now);
  try {
    await insertPass(db, pass, linkId, versionId, 'held', now);
  } catch (error) {
    await giveBack(db, linkId);
    throw error;
  }
  return pass;
}

/**
 * The pass of a folder link's open, on the access `reserve` takes: spent at once (the open is the
 * access), it lets its holder list the folder's further pages and download its files, past an
 * exhausted limit, for PASS_WINDOW_MS after its last use. `folderId` stands where a file link's
 * pass has its version.
 */
export async function openingPass(
  db: Db,
  linkId: string,
  folderId: string,
  now: string,
  reserve: (trx: DbOrTrx) => Promise<void>,
): Promise<Pass> {
  const pass = passFrom(now);
  await db.transaction().execute(async (trx) => {
    await reserve(trx);
    await insertPass(trx, pass, linkId, folderId, 'spent', now);
  });
  return pass;
}

/** Moves a folder link's pass's window on from `now`, on each use; the pass as the client keeps it. */
export async function renewPass(db: DbOrTrx, token: string, now: string): Promise<Pass> {
  const pass = passFrom(now, token);
  await db.updateTable('link_passes').set({ expires_at: pass.expiresAt }).where('token_hash', '=', pass.tokenHash).execute();
  return pass;
}

/**
 * Ends one transfer on a pass: `delivered` (its last byte went out) spends the access; else,
 * when it was the last transfer in flight on a pass not yet spent, the access is given back.
 */
export async function endTransfer(db: Db, pass: Pass, delivered: boolean, now: string): Promise<void> {
  const expiresAt = isoPlus(now, PASS_WINDOW_MS);
  await db
    .updateTable('link_passes')
    .set({
      in_flight: sql`case when in_flight > 0 then in_flight - 1 else 0 end`,
      expires_at: expiresAt,
      ...(delivered ? { state: 'spent' as const } : {}),
    })
    .where('token_hash', '=', pass.tokenHash)
    .execute();
  if (delivered) return;
  await db.transaction().execute(async (trx) => {
    const released = await trx
      .updateTable('link_passes')
      .set({ state: 'released' })
      .where('token_hash', '=', pass.tokenHash)
      .where('state', '=', 'held')
      .where('in_flight', '=', 0)
      .returning('link_id')
      .executeTakeFirst();
    if (released) await giveBack(trx, released.link_id);
  });
}

async function giveBack(db: DbOrTrx, linkId: string): Promise<void> {
  await db
    .updateTable('share_links')
    .set((eb) => ({ access_count: eb('access_count', '-', 1) }))
    .where('id', '=', linkId)
    .where('access_count', '>', 0)
    .execute();
}

/**
 * Deletes passes past their window, and passes still `held` DEAD_PASS_KEPT_MS after their last
 * start (their instance died mid-transfer; the access they reserved stays spent).
 */
export async function deleteOldPasses(db: DbOrTrx, now: string): Promise<number> {
  const result = await db
    .deleteFrom('link_passes')
    .where((eb) =>
      eb.or([eb.and([eb('state', '!=', 'held'), eb('expires_at', '<', now)]), eb('expires_at', '<', isoPlus(now, -DEAD_PASS_KEPT_MS))]),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
