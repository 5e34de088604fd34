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

/** What the user's quota still allows them to store. */
export function quotaLeft(user: Pick<UserRow, 'quota_bytes' | 'used_bytes'>, config: QuotaConfig): number {
  return Math.max(0, quotaOf(user, config) - Number(user.used_bytes));
}

/**
 * Reserves `bytes` of the owner's quota inside a mutation, or refuses with 507 QUOTA_EXCEEDED. The
 * conditional update of the owner's row takes its row lock, the lock `lockTrees` would take: a
 * mutation that reserves first holds the owner's trees from there on.
 */
export async function reserveQuota(trx: DbOrTrx, ownerId: string, bytes: number, config: QuotaConfig): Promise<void> {
  if (!(await reserveBytes(trx, ownerId, bytes, config.defaultQuotaBytes))) throw new AppError('QUOTA_EXCEEDED');
}
