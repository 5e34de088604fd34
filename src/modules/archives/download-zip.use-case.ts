import { downloadableIn, mayActOnFile, mayActOnFolder, loadFolderFor } from '../../access/access.js';
import type { AppContext, Principal } from '../../context.js';
import type { DbOrTrx } from '../../db/database.js';
import type { FolderRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { assertId } from '../../lib/ids.js';
import type { Sendable } from '../../lib/sendable.js';
import { folderKey } from '../folders/folders.keys.js';
import { archiveOf, type ArchiveTree } from './archive-plan.js';
import {
  filesByIds,
  foldersByIds,
  liveFilePages,
  liveSubtrees,
  liveTree,
  type ArchiveFileRow,
  type ArchiveFolderRow,
} from './archives.repository.js';

/** The most ids a selection may hold (SELECTION_TOO_LARGE names it too); a whole folder has no limit. */
export const ZIP_SELECTION_LIMIT = 1000;

export interface ZipSelection {
  fileIds?: string[];
  folderIds?: string[];
}

/** A folder's live subtree as `<name>.zip`, its own folder at the top: what the principal may download of it. */
export async function folderZip(ctx: AppContext, principal: Principal, folderId: string): Promise<Sendable> {
  const folder = await loadFolderFor(ctx.db, principal, folderId, 'view');
  return archiveOf(ctx, folder.name, async (trx) => {
    const { folders, filePages } = await liveTree(trx, folder.id);
    return grantedTree(ctx, trx, principal, { base: folder, basePath: [folder.name], folders, filePages });
  });
}

/** Files and folders of one folder, chosen by id, as `<folder name>.zip` with the items at its top. */
export async function selectionZip(ctx: AppContext, principal: Principal, selection: ZipSelection): Promise<Sendable> {
  const { fileIds, folderIds } = checkedSelection(selection);
  const parent = await selectionParent(ctx, principal, fileIds, folderIds);
  return archiveOf(ctx, parent.name, async (trx) => {
    const subtrees = await liveSubtrees(trx, folderIds);
    const filePages = liveFilePages(trx, { fileIds, folderIds: subtrees.map((f) => f.id) });
    return grantedTree(ctx, trx, principal, { base: parent, basePath: [], folders: [parent, ...subtrees], filePages });
  });
}

function checkedSelection(selection: ZipSelection): { fileIds: string[]; folderIds: string[] } {
  const fileIds = [...new Set(selection.fileIds ?? [])];
  const folderIds = [...new Set(selection.folderIds ?? [])];
  const count = fileIds.length + folderIds.length;
  if (count === 0) throw new AppError('EMPTY_SELECTION');
  if (count > ZIP_SELECTION_LIMIT)
    throw new AppError('SELECTION_TOO_LARGE', undefined, [{ field: 'body', problem: `${count} ids, at most ${ZIP_SELECTION_LIMIT}` }]);
  fileIds.forEach((id) => assertId('fil', id, 'fileIds'));
  folderIds.forEach((id) => assertId('fld', id, 'folderIds'));
  return { fileIds, folderIds };
}

/**
 * The one folder holding every selected item. An id unknown, trashed, or of an item the principal
 * may not see is INVALID_SELECTION (which of them is not said, so others' ids are not confirmed).
 */
async function selectionParent(ctx: AppContext, principal: Principal, fileIds: string[], folderIds: string[]): Promise<FolderRow> {
  const { db } = ctx;
  const [files, folders] = [await filesByIds(db, fileIds), await foldersByIds(db, folderIds)];
  if (files.length !== fileIds.length || folders.length !== folderIds.length) throw new AppError('INVALID_SELECTION');
  for (const file of files)
    if (file.trash_batch !== '' || !(await mayActOnFile(db, principal, file, 'view'))) throw new AppError('INVALID_SELECTION');
  for (const folder of folders)
    if (folder.parent_id === null || !(await mayActOnFolder(db, principal, folder, 'view'))) throw new AppError('INVALID_SELECTION');
  if (folders.some((f) => f.trash_batch !== '')) throw new AppError('INVALID_SELECTION');
  const parents = new Set([...files.map((f) => f.folder_id), ...folders.map((f) => f.parent_id!)]);
  if (parents.size > 1) throw new AppError('SELECTION_SPANS_FOLDERS');
  const [parent] = await foldersByIds(db, [...parents]);
  return parent;
}

interface ReadTree {
  base: FolderRow;
  basePath: string[];
  folders: ArchiveFolderRow[];
  filePages: AsyncIterable<ArchiveFileRow[]>;
}

/**
 * The tree an archive of `base` holds for the principal: only the files they may download, and
 * the folders under a download grant or on the way to such a file. Nothing at all: 403, once
 * every page was read.
 */
async function grantedTree(ctx: AppContext, trx: DbOrTrx, principal: Principal, tree: ReadTree): Promise<ArchiveTree> {
  const { base, folders, filePages } = tree;
  const may = await downloadableIn(trx, principal, base, folders);
  const parents = new Map(folders.map((f) => [f.id, f.parent_id]));
  const shown = new Set(folders.filter((f) => may.folder(f.id)).map((f) => f.id));
  async function* keptPages(): AsyncGenerator<ArchiveFileRow[]> {
    let keptAny = false;
    for await (const page of filePages) {
      const kept = await may.files(page);
      for (const file of kept)
        for (let id: string | null | undefined = file.folder_id; id && !shown.has(id) && parents.has(id); id = parents.get(id))
          shown.add(id);
      keptAny ||= kept.length > 0;
      yield kept;
    }
    if (shown.size === 0 && !keptAny) throw new AppError('DOWNLOAD_FORBIDDEN');
  }
  return {
    base: { id: base.id, key: () => folderKey(ctx.db, ctx.keyring, base.id) },
    basePath: tree.basePath,
    folders,
    filePages: keptPages(),
    includeFolder: (id) => shown.has(id),
  };
}
