import type { AppContext, Principal } from '../../context.js';
import { AppError } from '../../errors.js';
import { formatSize } from '../../lib/size-format.js';
import { findUserById } from '../accounts/accounts.repository.js';
import { quotaLeft, quotaOf } from '../accounts/quota.js';

/** Under this share of the capacity left, `warning.is_low` is set. */
export const LOW_STORAGE_PERCENT = 10;

/** The `data` of `GET /storage/status`, field names as the API contract has them. */
export interface StorageStatus {
  capacity_bytes: number;
  used_bytes: number;
  remaining_bytes: number;
  in_progress_bytes: number;
  warning: { is_low: boolean };
  readable: { capacity: string; used: string; remaining: string; in_progress: string };
}

/** Capacity and use of the caller's account (docs/api.md). */
export function storageService(ctx: AppContext) {
  const { db, config } = ctx;

  /**
   * `capacity_bytes` is the account's quota (the server default unless set with
   * `coffre user quota`); `used_bytes` is the account's maintained counter: every version of every
   * file not deleted for good, the trash included; `in_progress_bytes` what its uploads in flight
   * hold (upload-holds.ts). Uploads are checked against both, and `remaining_bytes` leaves both out.
   */
  async function status(principal: Principal): Promise<StorageStatus> {
    const user = await findUserById(db, principal.userId);
    if (!user) throw new AppError('UNAUTHENTICATED');
    const capacity = quotaOf(user, config);
    const used = Number(user.used_bytes);
    const inProgress = Number(user.held_bytes);
    const remaining = quotaLeft(user, config);
    return {
      capacity_bytes: capacity,
      used_bytes: used,
      remaining_bytes: remaining,
      in_progress_bytes: inProgress,
      // In integers, so the boundary is exact; nothing left is low even when the capacity is 0.
      warning: { is_low: remaining * 100 < capacity * LOW_STORAGE_PERCENT || remaining === 0 },
      readable: {
        capacity: formatSize(capacity),
        used: formatSize(used),
        remaining: formatSize(remaining),
        in_progress: formatSize(inProgress),
      },
    };
  }

  return { status };
}
