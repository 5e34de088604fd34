import { useCallback, useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { errorText } from '../i18n';
import { notify } from '../ui';
import { fileItem, folderItem, type Item } from './items';
import type { Sort } from './items-table';
import { onUploadDone } from './widgets';
import { onRightsChanged } from './refusals';
import { useLatest } from '../latest';

const PAGE = 100;

/** The ancestors of a folder, root first, walking up through the details of each parent. */
const crumbCache = new Map<string, { id: string; name: string; parentId: string; isRoot: boolean }>();
async function crumbsOf(detail: any): Promise<{ id: string; name: string }[]> {
  const chain: { id: string; name: string }[] = [{ id: detail.id, name: detail.isRoot ? '/' : detail.name }];
  crumbCache.set(detail.id, { id: detail.id, name: detail.name, parentId: detail.parentId, isRoot: detail.isRoot });
  let parentId: string = detail.parentId;
  for (let depth = 0; parentId && depth < 64; depth++) {
    let p = crumbCache.get(parentId);
    if (!p) {
      try {
        const d = await api.get(`/folders/details/${parentId}`);
        p = { id: d.id, name: d.name, parentId: d.parentId, isRoot: d.isRoot };
        crumbCache.set(d.id, p);
      } catch {
        break; // a folder shared with us: its owner's ancestors are not ours to see
      }
    }
    chain.unshift({ id: p.id, name: p.isRoot ? '/' : p.name });
    parentId = p.parentId;
  }
  return chain;
}

/**
 * What the file list shows of a folder: its details, its path, and its subfolders then files, a page
 * at a time (folders sorted here, files by the server). Reloads when an upload into it completes.
 */
/** What the signed-in person may do in the folder (GET /folders/{id}/access). */
export interface FolderAccess {
  isOwner: boolean;
  canView: boolean;
  canDownload: boolean;
  canEdit: boolean;
}
const OWNER: FolderAccess = { isOwner: true, canView: true, canDownload: true, canEdit: true };

export function useFolderListing(folderId: string, sort: Sort, onBucketSeen: (bucketId: string) => void) {
  const [detail, setDetail] = useState<any>(null);
  const [crumbs, setCrumbs] = useState<{ id: string; name: string }[]>([]);
  const [folders, setFolders] = useState<any[]>([]);
  const [files, setFiles] = useState<any[]>([]);
  const [folderTotal, setFolderTotal] = useState(0);
  const [fileTotal, setFileTotal] = useState(0);
  const [folderCursor, setFolderCursor] = useState<string | null>(null);
  const [fileCursor, setFileCursor] = useState<string | null>(null);
  const [error, setError] = useState('');
  const [access, setAccess] = useState<FolderAccess>(OWNER);
  const loads = useLatest();

  const load = useCallback(async () => {
    const latest = loads.start();
    setError('');
    try {
      const [d, sub, fl, rights] = await Promise.all([
        api.get(`/folders/details/${folderId}`),
        api.get(`/folders/${folderId}/subfolders`, { limit: PAGE }),
        api.get(`/files/list/${folderId}`, { limit: PAGE, sort: sort.by, order: sort.order }),
        api.get<FolderAccess>(`/folders/${folderId}/access`),
      ]);
      if (!latest()) return;
      setAccess(rights);
      setDetail(d);
      onBucketSeen(d.bucketId);
      setFolders(sub.data);
      setFolderTotal(sub.total);
      setFolderCursor(sub.nextCursor);
      setFiles(fl.data);
      setFileTotal(fl.total);
      setFileCursor(fl.nextCursor);
      crumbsOf(d).then((chain) => latest() && setCrumbs(chain));
    } catch (e) {
      if (latest()) setError(errorText(e));
    }
  }, [folderId, sort.by, sort.order]);

  useEffect(() => {
    load();
  }, [load]);
  useEffect(() => onUploadDone((id) => id === folderId && load()), [folderId, load]);
  useEffect(() => onRightsChanged((id) => id === folderId && load()), [folderId, load]);

  // A next page continues the listing it was asked from: a reload meanwhile (which starts over) drops it.
  const loadMore = async () => {
    const latest = loads.follow();
    try {
      if (folderCursor) {
        const sub = await api.get(`/folders/${folderId}/subfolders`, { limit: PAGE, cursor: folderCursor });
        if (!latest()) return;
        setFolders((f) => [...f, ...sub.data]);
        setFolderCursor(sub.nextCursor);
      } else if (fileCursor) {
        const fl = await api.get(`/files/list/${folderId}`, { limit: PAGE, sort: sort.by, order: sort.order, cursor: fileCursor });
        if (!latest()) return;
        setFiles((f) => [...f, ...fl.data]);
        setFileCursor(fl.nextCursor);
      }
    } catch (e) {
      notify(errorText(e), 'error');
    }
  };

  const sortedFolders = [...folders].sort((a, b) => {
    const dir = sort.order === 'asc' ? 1 : -1;
    if (sort.by === 'createdAt') return dir * a.createdAt.localeCompare(b.createdAt);
    return dir * a.name.localeCompare(b.name);
  });
  const items: Item[] = [...sortedFolders.map(folderItem), ...files.map(fileItem)];
  return { detail, access, crumbs, items, total: folderTotal + fileTotal, more: !!(folderCursor || fileCursor), error, load, loadMore };
}
