import { loadFileFor, mayActOnFile } from '../../access/access.js';
import type { AppContext, Principal } from '../../context.js';
import type { FileRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { assertName } from '../../lib/names.js';
import { DAY_MS, isoPlus, nowIso } from '../../lib/time.js';
import { assertNameFree } from '../folders/folders.names.js';
import { mutateTrees } from '../folders/folders.tree.js';
import * as repo from './files.repository.js';
import { retentionDays } from './files.retention.js';
import type { UpdateFileBody } from './files.schemas.js';
import { requireLiveFile } from './files.tree.js';

/** Renames a file, sets its visibility and its retention (which may grow, never shrink). */
export async function update(ctx: AppContext, principal: Principal, fileId: string, input: UpdateFileBody): Promise<void> {
  const name = assertName(input.name);
  await mutateTrees(ctx, { files: [fileId] }, async (trx) => {
    const file = await loadFileFor(trx, principal, fileId, 'edit');
    // Making a file public shares it with everyone, and a retention binds its owner for years:
    // both stay with the owner, whatever an editor may otherwise change.
    const ownersOnly = input.visibility !== file.visibility || input.retentionPeriod !== undefined;
    if (ownersOnly && !(await mayActOnFile(trx, principal, file, 'manage'))) {
      throw new AppError('FILE_NOT_FOUND', 'Only the owner changes the visibility or retention of a file');
    }
    requireLiveFile(file);
    if (name !== file.name) await assertNameFree(trx, file.folder_id, name);
    const now = nowIso();
    await repo.updateFile(trx, file.id, {
      name,
      visibility: input.visibility,
      ...retentionChange(file, input.retentionPeriod, now),
      updated_at: now,
    });
  });
}

/** The columns a new retention period sets, refused when it would end before the one in force. */
function retentionChange(
  file: FileRow,
  period: UpdateFileBody['retentionPeriod'],
  now: string,
): Partial<Pick<FileRow, 'retention_period' | 'retain_until'>> {
  if (!period) return {};
  const retainUntil = isoPlus(now, retentionDays(period) * DAY_MS);
  if (file.retain_until && file.retain_until > retainUntil) {
    throw new AppError('RETENTION_SHORTENING', `The file is retained until ${file.retain_until}; ${period} from now ends earlier`);
  }
  return { retention_period: period, retain_until: retainUntil };
}
