import type { Config } from '../../config.js';
import type { DbOrTrx } from '../../db/database.js';
import type { UserRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { reserveBytes } from './accounts.repository.js';

type QuotaConfig = Pick<Config, 'defaultQuotaBytes'>;

/** A user's quota in bytes: their own, or the instance's default (COFFRE_DEFAULT_QUOTA_BYTES). */
export function quotaOf(user: Pick<UserRow, 'quota_bytes'>, config: QuotaConfig): number {
  return Number(user.quota_bytes ?? config.defaultQuotaBytes);
}

/** What the user's quota still allows them to store: neither their files nor their uploads in flight take it. */
export function quotaLeft(user: Pick<UserRow, 'quota_bytes' | 'used_bytes' | 'held_bytes'>, config: QuotaConfig): number {
  return Math.max(0, quotaOf(user, config) - Number(user.used_bytes) - Number(user.held_bytes));
}

/**
 * Reserves `bytes` of the owner's quota inside a mutation, or refuses with 507 QUOTA_EXCEEDED;
 * `released` bytes of the owner's uploads in flight (their holds' rows deleted) become used. The
 * conditional update of the owner's row takes its row lock, the lock `lockTrees` would take: a
 * mutation that reserves first holds the owner's trees from there on.
 */
export async function reserveQuota(trx: DbOrTrx, ownerId: string, bytes: number, config: QuotaConfig, released = 0): Promise<void> {
  if (!(await reserveBytes(trx, ownerId, bytes, config.defaultQuotaBytes, released))) throw new AppError('QUOTA_EXCEEDED');
}
