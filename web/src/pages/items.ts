/** A row of the file list: a folder or a file, as the list and its actions see it. */

import { api } from '../api';

export type SortKey = 'name' | 'size' | 'createdAt';
export interface Item {
  kind: 'folder' | 'file';
  id: string;
  name: string;
  size?: number;
  date: string;
  raw: any;
}

export function folderItem(f: any): Item {
  return { kind: 'folder', id: f.id, name: f.name, date: f.updatedAt, raw: f };
}
export function fileItem(f: any): Item {
  return { kind: 'file', id: f.id, name: f.name, size: f.size, date: f.updatedAt, raw: f };
}

// ---- the API calls on one item, used by its row menu and, item by item, by a selection's actions ----

const route = (item: Item) => (item.kind === 'folder' ? 'folders' : 'files');

export const trashItem = (item: Item): Promise<unknown> => api.del(`/${route(item)}/delete/${item.id}`, { trash: 'soft' });
export const restoreItem = (item: Item): Promise<unknown> => api.post(`/${route(item)}/restore/${item.id}`);
export const deleteItemForever = (item: Item): Promise<unknown> => api.del(`/${route(item)}/delete/${item.id}`, { trash: 'hard' });

export function moveOrCopyItem(how: 'move' | 'copy', item: Item, targetFolderId: string): Promise<unknown> {
  return item.kind === 'folder'
    ? api.post(`/folders/${how}/${item.id}`, { targetParentId: targetFolderId })
    : api.post(`/files/${how}/${item.id}`, { targetFolderId });
}
