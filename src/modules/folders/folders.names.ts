import type { DbOrTrx } from '../../db/database.js';
import { AppError } from '../../errors.js';
import { nameVariants } from '../../lib/names.js';
import { liveNameTaken } from './folders.repository.js';

/** `base` if it is free in the folder, else its first free variant (`base (copy)`, `report (1).pdf`, …). */
export async function freeItemName(trx: DbOrTrx, parentId: string, base: string, suffix: string, keepExtension: boolean): Promise<string> {
  if (!(await liveNameTaken(trx, parentId, base))) return base;
  for (const candidate of nameVariants(base, suffix, keepExtension)) {
    if (!(await liveNameTaken(trx, parentId, candidate))) return candidate;
  }
  throw new AppError('NAME_CONFLICT');
}

/** Throws 409 NAME_CONFLICT when a live folder or file of the folder has this name. */
export async function assertNameFree(trx: DbOrTrx, parentId: string, name: string): Promise<void> {
  if (await liveNameTaken(trx, parentId, name)) {
    throw new AppError('NAME_CONFLICT', `An item named "${name}" already exists in this folder`);
  }
}
