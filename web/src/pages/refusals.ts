import { ApiError, api } from '../api';
import { t } from '../i18n';
import type { FolderAccess } from './folder-listing';

// The API answers a change someone may not make in a folder of someone else's as "not found"
// (it does not tell what exists to who may not see it). The screens offer only what the person's
// rights allow, but those rights can change while a page is open: a refusal then asks what the
// person may still do there, says what is missing, and has the folder's screen catch up.

const rightsListeners = new Set<(folderId: string) => void>();

/** Calls `listener` with a folder's id when a refusal showed the person's rights there changed. */
export function onRightsChanged(listener: (folderId: string) => void): () => void {
  rightsListeners.add(listener);
  return () => rightsListeners.delete(listener);
}

/** What a refused change in `folderId` lacked, in words; `error` itself when it was no refusal of rights. */
export async function explainRefusal(error: unknown, folderId: string): Promise<unknown> {
  const status = error instanceof ApiError ? error.status : 0;
  if (status !== 403 && status !== 404) return error;
  let access: FolderAccess;
  try {
    access = await api.get<FolderAccess>(`/folders/${folderId}/access`);
  } catch {
    for (const listener of rightsListeners) listener(folderId);
    return new Error(t('folderNotSharedAnyMore'));
  }
  // Allowed to change the folder: the refusal was about the item itself (gone meanwhile, say).
  if (access.canEdit) return error;
  for (const listener of rightsListeners) listener(folderId);
  return new Error(access.canDownload ? t('canViewAndDownloadNotChange') : t('canViewNotChange'));
}

/** Runs a change in `folderId`; a refusal is rethrown as what it lacked (explainRefusal). */
export async function explainingRefusals<T>(folderId: string, change: () => Promise<T>): Promise<T> {
  try {
    return await change();
  } catch (error) {
    throw await explainRefusal(error, folderId);
  }
}
