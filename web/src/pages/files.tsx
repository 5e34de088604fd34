import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api';
import { formatDate, formatSize } from '../format';
import { errorText, t } from '../i18n';
import type { BucketInfo } from '../main';
import { Confirm, Link, Prompt, navigate, notify, useLang, Alert, Icon } from '../ui';
import { ShareDialog } from './share';
import { FolderPicker, downloadOwnFile, onUploadDone, startUploads } from './widgets';

const PAGE = 100;
export const RETENTION_PERIODS = ['30d', '45d', '90d', '120d', '180d', '1Y', '2Y', '3Y', '5Y'];

type SortKey = 'name' | 'size' | 'createdAt';
export interface Item {
  kind: 'folder' | 'file';
  id: string;
  name: string;
  size?: number;
  date: string;
  raw: any;
}

function folderItem(f: any): Item {
  return { kind: 'folder', id: f.id, name: f.name, date: f.updatedAt, raw: f };
}
function fileItem(f: any): Item {
  return { kind: 'file', id: f.id, name: f.name, size: f.size, date: f.updatedAt, raw: f };
}

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

type DialogState =
  | null
  | { type: 'newFolder' }
  | { type: 'rename'; item: Item }
  | { type: 'move' | 'copy'; item: Item }
  | { type: 'hardDelete'; item: Item }
  | { type: 'share'; item: Item };

/** The file manager on one folder. */
export function FolderPage(props: {
  folderId: string;
  buckets: BucketInfo[];
  onBucketSeen: (bucketId: string) => void;
  onChanged: () => void;
}) {
  useLang();
  const { folderId } = props;
  const [detail, setDetail] = useState<any>(null);
  const [crumbs, setCrumbs] = useState<{ id: string; name: string }[]>([]);
  const [folders, setFolders] = useState<any[]>([]);
  const [files, setFiles] = useState<any[]>([]);
  const [folderTotal, setFolderTotal] = useState(0);
  const [fileTotal, setFileTotal] = useState(0);
  const [folderCursor, setFolderCursor] = useState<string | null>(null);
  const [fileCursor, setFileCursor] = useState<string | null>(null);
  const [sort, setSort] = useState<{ by: SortKey; order: 'asc' | 'desc' }>({ by: 'name', order: 'asc' });
  const [selected, setSelected] = useState<string | null>(null);
  const [dialog, setDialog] = useState<DialogState>(null);
  const [menuFor, setMenuFor] = useState<string | null>(null);
  const [dragging, setDragging] = useState(false);
  const [error, setError] = useState('');
  const fileInput = useRef<HTMLInputElement>(null);
  const tableRef = useRef<HTMLTableElement>(null);

  const load = useCallback(async () => {
    setError('');
    try {
      const [d, sub, fl] = await Promise.all([
        api.get(`/folders/details/${folderId}`),
        api.get(`/folders/${folderId}/subfolders`, { limit: PAGE }),
        api.get(`/files/list/${folderId}`, { limit: PAGE, sort: sort.by, order: sort.order }),
      ]);
      setDetail(d);
      props.onBucketSeen(d.bucketId);
      setFolders(sub.data);
      setFolderTotal(sub.total);
      setFolderCursor(sub.nextCursor);
      setFiles(fl.data);
      setFileTotal(fl.total);
      setFileCursor(fl.nextCursor);
      crumbsOf(d).then(setCrumbs);
    } catch (e) {
      setError(errorText(e));
    }
  }, [folderId, sort.by, sort.order]);

  useEffect(() => {
    load();
  }, [load]);
  useEffect(() => onUploadDone((id) => id === folderId && load()), [folderId, load]);

  const loadMore = async () => {
    try {
      if (folderCursor) {
        const sub = await api.get(`/folders/${folderId}/subfolders`, { limit: PAGE, cursor: folderCursor });
        setFolders((f) => [...f, ...sub.data]);
        setFolderCursor(sub.nextCursor);
      } else if (fileCursor) {
        const fl = await api.get(`/files/list/${folderId}`, { limit: PAGE, sort: sort.by, order: sort.order, cursor: fileCursor });
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
  const selectedItem = items.find((i) => i.id === selected) ?? null;

  const changed = () => {
    load();
    props.onChanged();
  };

  const open = (item: Item) => {
    if (item.kind === 'folder') navigate(`/files/${item.id}`);
    else downloadOwnFile(item.raw);
  };

  const trash = async (item: Item) => {
    try {
      await api.del(item.kind === 'folder' ? `/folders/delete/${item.id}` : `/files/delete/${item.id}`, { trash: 'soft' });
      if (selected === item.id) setSelected(null);
      changed();
      notify(t('trashed', { name: item.name }), 'info', {
        label: t('undo'),
        run: async () => {
          try {
            await api.post(item.kind === 'folder' ? `/folders/restore/${item.id}` : `/files/restore/${item.id}`);
            changed();
          } catch (e) {
            notify(errorText(e), 'error');
          }
        },
      });
    } catch (e) {
      notify(errorText(e), 'error');
    }
  };

  const rename = async (item: Item, name: string) => {
    if (item.kind === 'folder') await api.put(`/folders/update/${item.id}`, { name });
    else await api.put(`/files/update/${item.id}`, { name, visibility: item.raw.visibility });
    changed();
  };

  const hardDelete = async (item: Item) => {
    try {
      await api.del(item.kind === 'folder' ? `/folders/delete/${item.id}` : `/files/delete/${item.id}`, { trash: 'hard' });
      if (selected === item.id) setSelected(null);
      changed();
    } catch (e) {
      notify(errorText(e), 'error');
    }
  };

  const onKeyDown = (e: KeyboardEvent) => {
    const target = e.target as HTMLElement;
    const index = Number(target.closest('tr')?.dataset.index ?? -1);
    const focusRow = (i: number) => {
      const rows = tableRef.current?.querySelectorAll<HTMLElement>('tbody .item-name');
      if (!rows || rows.length === 0) return;
      const next = rows[Math.max(0, Math.min(rows.length - 1, i))];
      next.focus();
      setSelected(next.closest('tr')!.dataset.id!);
    };
    if (e.key === 'ArrowDown') {
      e.preventDefault();
      focusRow(index + 1);
    } else if (e.key === 'ArrowUp') {
      e.preventDefault();
      focusRow(index - 1);
    } else if (e.key === 'Home') {
      e.preventDefault();
      focusRow(0);
    } else if (e.key === 'End') {
      e.preventDefault();
      focusRow(items.length - 1);
    } else if (e.key === 'Backspace' && detail && !detail.isRoot && detail.parentId && target.tagName !== 'INPUT') {
      e.preventDefault();
      navigate(`/files/${detail.parentId}`);
    } else if (index >= 0 && e.key === 'F2') {
      e.preventDefault();
      setDialog({ type: 'rename', item: items[index] });
    } else if (index >= 0 && e.key === 'Delete') {
      e.preventDefault();
      trash(items[index]);
    }
  };

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    const list = Array.from(e.dataTransfer?.files ?? []);
    if (list.length > 0) startUploads(folderId, list);
  };

  const sortHeader = (key: SortKey, label: string) => {
    const active = sort.by === key;
    return (
      <th scope="col" aria-sort={active ? (sort.order === 'asc' ? 'ascending' : 'descending') : 'none'} class={`col-${key}`}>
        <button
          type="button"
          class="sort"
          onClick={() => setSort({ by: key, order: active && sort.order === 'asc' ? 'desc' : 'asc' })}
          aria-label={t('sortBy', { column: label })}
        >
          {label} {active ? (sort.order === 'asc' ? '▲' : '▼') : ''}
        </button>
      </th>
    );
  };

  if (error && !detail) {
    return (
      <div class="empty">
        <p class="error" role="alert">
          {error}
        </p>
        <Link href="/files">{t('goHome')}</Link>
      </div>
    );
  }
  if (!detail) return <p class="loading">{t('loading')}</p>;
  const bucket = props.buckets.find((b) => b.id === detail.bucketId);
  const pickerRoot = bucket?.rootFolderId ?? crumbs[0]?.id ?? folderId;
  const shown = items.length;
  const total = folderTotal + fileTotal;

  return (
    <div
      class={dragging ? 'folder-page dragging' : 'folder-page'}
      onDragOver={(e) => {
        if (e.dataTransfer?.types.includes('Files')) {
          e.preventDefault();
          setDragging(true);
        }
      }}
      onDragLeave={(e) => {
        if (e.currentTarget === e.target) setDragging(false);
      }}
      onDrop={onDrop}
    >
      <nav aria-label={t('breadcrumbs')} class="breadcrumbs">
        <ol>
          {crumbs.map((c, i) => (
            <li key={c.id}>
              {i === crumbs.length - 1 ? (
                <span aria-current="page">{c.name === '/' ? (bucket?.name ?? '/') : c.name}</span>
              ) : (
                <Link href={`/files/${c.id}`}>{c.name === '/' ? (bucket?.name ?? '/') : c.name}</Link>
              )}
            </li>
          ))}
        </ol>
        <span class="display-path" title={detail.locationLabel}>
          {detail.displayPath}
        </span>
      </nav>
      {detail.ownerFolder && <p class="shared-note">{t('sharedBy', { name: detail.ownerFolder.name })}</p>}
      <div class="toolbar" role="toolbar" aria-label={t('colActions')}>
        <button type="button" class="primary" onClick={() => setDialog({ type: 'newFolder' })}>
          + {t('newFolder')}
        </button>
        <button type="button" onClick={() => fileInput.current?.click()}>
          ⇪ {t('upload')}
        </button>
        <input
          ref={fileInput}
          type="file"
          multiple
          class="visually-hidden"
          aria-label={t('upload')}
          tabIndex={-1}
          onChange={(e) => {
            const list = Array.from(e.currentTarget.files ?? []);
            e.currentTarget.value = '';
            if (list.length) startUploads(folderId, list);
          }}
        />
        {!detail.isRoot && !detail.ownerFolder && (
          <button
            type="button"
            onClick={() =>
              setDialog({ type: 'share', item: { kind: 'folder', id: detail.id, name: detail.name, date: detail.updatedAt, raw: detail } })
            }
          >
            {t('share')}
          </button>
        )}
      </div>
      <p class="hint" id="keyboard-help">
        {t('keyboardHelp')}
      </p>
      <div class="list-and-details">
        <div class="list">
          {items.length === 0 ? (
            <p class="empty">{t('emptyFolder')}</p>
          ) : (
            <table ref={tableRef} class="items" onKeyDown={onKeyDown} aria-describedby="keyboard-help">
              <thead>
                <tr>
                  {sortHeader('name', t('colName'))}
                  {sortHeader('size', t('colSize'))}
                  {sortHeader('createdAt', t('colDate'))}
                  <th scope="col" class="col-actions">
                    <span class="visually-hidden">{t('colActions')}</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {items.map((item, index) => (
                  <tr
                    key={item.id}
                    data-index={index}
                    data-id={item.id}
                    data-name={item.name}
                    class={selected === item.id ? 'selected' : undefined}
                    onClick={() => setSelected(item.id)}
                  >
                    <td class="col-name">
                      <button
                        type="button"
                        class="item-name"
                        tabIndex={
                          index ===
                          Math.max(
                            0,
                            items.findIndex((i) => i.id === selected),
                          )
                            ? 0
                            : -1
                        }
                        onFocus={() => setSelected(item.id)}
                        onDblClick={() => open(item)}
                        onClick={(e) => {
                          // A folder opens on click, as links do; a file is selected (Enter or double-click downloads).
                          if (item.kind === 'folder') open(item);
                          else if ((e as MouseEvent).detail === 0) open(item);
                        }}
                      >
                        <Icon name={item.kind} />
                        <span class="visually-hidden">{item.kind === 'folder' ? t('folder') : ''} </span>
                        {item.name}
                      </button>
                    </td>
                    <td class="col-size">{item.kind === 'file' ? formatSize(item.size ?? 0) : '—'}</td>
                    <td class="col-createdAt">{formatDate(item.date)}</td>
                    <td class="col-actions">
                      <RowMenu
                        item={item}
                        open={menuFor === item.id}
                        setOpen={(o) => setMenuFor(o ? item.id : null)}
                        actions={[
                          { label: item.kind === 'folder' ? t('open') : t('download'), run: () => open(item) },
                          { label: t('details'), run: () => setSelected(item.id) },
                          { label: t('rename'), run: () => setDialog({ type: 'rename', item }) },
                          { label: t('move'), run: () => setDialog({ type: 'move', item }) },
                          { label: t('copy'), run: () => setDialog({ type: 'copy', item }) },
                          ...(detail.ownerFolder ? [] : [{ label: t('share'), run: () => setDialog({ type: 'share', item }) }]),
                          { label: t('moveToTrash'), run: () => trash(item) },
                          ...(detail.ownerFolder
                            ? []
                            : [{ label: t('deleteForever'), run: () => setDialog({ type: 'hardDelete', item }), danger: true }]),
                        ]}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <p class="paging">
            {t('showing', { shown, total })}
            {(folderCursor || fileCursor) && (
              <button type="button" onClick={loadMore}>
                {t('loadMore')}
              </button>
            )}
          </p>
          <p class="hint drop-hint">{t('dropHere')}</p>
        </div>
        <DetailsPanel item={selectedItem} folder={detail} onChanged={changed} onClose={() => setSelected(null)} />
      </div>
      {dragging && (
        <div class="drop-overlay" aria-hidden="true">
          {t('dropHere')}
        </div>
      )}
      {dialog?.type === 'newFolder' && (
        <Prompt
          title={t('newFolder')}
          label={t('folderName')}
          submitLabel={t('create')}
          onClose={() => setDialog(null)}
          onSubmit={async (name) => {
            await api.post(`/folders/create/${detail.bucketId}`, { name, parentId: folderId });
            changed();
          }}
        />
      )}
      {dialog?.type === 'rename' && (
        <Prompt
          title={t('rename')}
          label={t('newName')}
          initial={dialog.item.name}
          submitLabel={t('rename')}
          onClose={() => setDialog(null)}
          onSubmit={(name) => rename(dialog.item, name)}
        />
      )}
      {(dialog?.type === 'move' || dialog?.type === 'copy') && (
        <FolderPicker
          title={t(dialog.type === 'move' ? 'moveTo' : 'copyTo', { name: dialog.item.name })}
          rootFolderId={pickerRoot}
          exclude={dialog.item.kind === 'folder' ? dialog.item.id : undefined}
          onClose={() => setDialog(null)}
          onPick={async (target) => {
            const { item } = dialog;
            if (item.kind === 'folder') await api.post(`/folders/${dialog.type}/${item.id}`, { targetParentId: target });
            else await api.post(`/files/${dialog.type}/${item.id}`, { targetFolderId: target });
            changed();
          }}
        />
      )}
      {dialog?.type === 'hardDelete' && (
        <Confirm
          message={t('confirmHardDelete', { name: dialog.item.name })}
          confirmLabel={t('deleteForever')}
          danger
          onCancel={() => setDialog(null)}
          onConfirm={() => {
            hardDelete(dialog.item);
            setDialog(null);
          }}
        />
      )}
      {dialog?.type === 'share' && <ShareDialog item={dialog.item} onClose={() => setDialog(null)} onChanged={load} />}
    </div>
  );
}

/** The "⋯" menu of a row: a button that opens a list of actions; Escape closes it. */
function RowMenu(props: {
  item: Item;
  open: boolean;
  setOpen: (o: boolean) => void;
  actions: { label: string; run: () => void; danger?: boolean }[];
}) {
  const menu = useRef<HTMLUListElement>(null);
  useEffect(() => {
    if (!props.open) return;
    menu.current?.querySelector<HTMLElement>('button')?.focus();
    const close = (e: MouseEvent) => {
      if (!menu.current?.parentElement?.contains(e.target as Node)) props.setOpen(false);
    };
    document.addEventListener('mousedown', close);
    return () => document.removeEventListener('mousedown', close);
  }, [props.open]);
  const onKeyDown = (e: KeyboardEvent) => {
    e.stopPropagation();
    const buttons = Array.from(menu.current?.querySelectorAll<HTMLElement>('button') ?? []);
    const at = buttons.indexOf(document.activeElement as HTMLElement);
    if (e.key === 'Escape') {
      e.preventDefault();
      props.setOpen(false);
      (menu.current?.previousElementSibling as HTMLElement | null)?.focus();
    } else if (e.key === 'ArrowDown') {
      e.preventDefault();
      buttons[(at + 1) % buttons.length]?.focus();
    } else if (e.key === 'ArrowUp') {
      e.preventDefault();
      buttons[(at - 1 + buttons.length) % buttons.length]?.focus();
    }
  };
  return (
    <div class="row-menu">
      <button
        type="button"
        class="icon-button"
        aria-haspopup="menu"
        aria-expanded={props.open}
        aria-label={t('actionsFor', { name: props.item.name })}
        title={t('actionsFor', { name: props.item.name })}
        onClick={(e) => {
          e.stopPropagation();
          props.setOpen(!props.open);
        }}
      >
        ⋯
      </button>
      {props.open && (
        <ul ref={menu} role="menu" class="menu" onKeyDown={onKeyDown}>
          {props.actions.map((a) => (
            <li role="none" key={a.label}>
              <button
                type="button"
                role="menuitem"
                class={a.danger ? 'danger-text' : undefined}
                onClick={(e) => {
                  e.stopPropagation();
                  props.setOpen(false);
                  a.run();
                }}
              >
                {a.label}
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** The side panel of the selected item: details, visibility, retention, versions. */
function DetailsPanel(props: { item: Item | null; folder: any; onChanged: () => void; onClose: () => void }) {
  const { item } = props;
  const [detail, setDetail] = useState<any>(null);
  const [versions, setVersions] = useState<any[]>([]);
  const [visibility, setVisibility] = useState('private');
  const [retention, setRetention] = useState('');
  const [error, setError] = useState('');
  const reload = useCallback(async () => {
    if (!item) return;
    setError('');
    try {
      if (item.kind === 'file') {
        const [d, v] = await Promise.all([api.get(`/files/details/${item.id}`), api.get(`/files/versions/${item.id}`)]);
        setDetail(d);
        setVersions(Array.isArray(v) ? v : (v.data ?? []));
        setVisibility(d.visibility);
        setRetention(d.retentionPeriod ?? '');
      } else {
        const d = await api.get(`/folders/details/${item.id}`);
        setDetail(d);
        setVersions([]);
        setVisibility(d.visibility);
      }
    } catch (e) {
      setError(errorText(e));
    }
  }, [item?.id]);
  useEffect(() => {
    setDetail(null);
    reload();
  }, [reload]);

  if (!item) return <aside class="details empty-details">{t('selectItem')}</aside>;
  const save = async (e: Event) => {
    e.preventDefault();
    setError('');
    try {
      if (item.kind === 'file')
        await api.put(`/files/update/${item.id}`, { name: detail.name, visibility, ...(retention ? { retentionPeriod: retention } : {}) });
      else await api.put(`/folders/update/${item.id}`, { visibility });
      notify(t('saved'));
      await reload();
      props.onChanged();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <aside class="details" aria-labelledby="details-title">
      <header>
        <h2 id="details-title">{item.name}</h2>
        <button type="button" class="icon-button" aria-label={t('close')} onClick={props.onClose}>
          ×
        </button>
      </header>
      {!detail ? (
        <p>{error || t('loading')}</p>
      ) : (
        <>
          <dl>
            {item.kind === 'file' ? (
              <>
                <dt>{t('size')}</dt>
                <dd>{formatSize(detail.size)}</dd>
                <dt>{t('type')}</dt>
                <dd>{detail.contentType}</dd>
                <dt>{t('created')}</dt>
                <dd>{formatDate(detail.createdAt)}</dd>
                <dt>{t('colDate')}</dt>
                <dd>{formatDate(detail.updatedAt)}</dd>
                <dt>{t('checksum')}</dt>
                <dd class="mono">{detail.checksum}</dd>
                {detail.retainUntil && (
                  <>
                    <dt>{t('retention')}</dt>
                    <dd>{t('retainUntil', { date: formatDate(detail.retainUntil) })}</dd>
                  </>
                )}
              </>
            ) : (
              <>
                <dt>{t('path')}</dt>
                <dd>{detail.displayPath}</dd>
                <dt>{t('location')}</dt>
                <dd>{detail.locationLabel}</dd>
                <dt>{t('totalFiles')}</dt>
                <dd>
                  {detail.totalFiles} · {formatSize(detail.totalSizeByte)}
                </dd>
                <dt>{t('people')}</dt>
                <dd>{detail.sharedUsersCount}</dd>
              </>
            )}
          </dl>
          <form onSubmit={save} class="settings">
            <label class="field">
              <span>{t('visibility')}</span>
              <select name="visibility" value={visibility} onChange={(e) => setVisibility(e.currentTarget.value)}>
                <option value="private">{t('private')}</option>
                <option value="public">{t('public')}</option>
              </select>
            </label>
            {item.kind === 'file' && detail.visibility === 'public' && (
              <p class="small">
                {t('publicAddress')}:{' '}
                <a href={`/api/files/public/${detail.hashName}`}>{`${location.origin}/api/files/public/${detail.hashName}`}</a>
              </p>
            )}
            {item.kind === 'file' && (
              <label class="field">
                <span>{t('retention')}</span>
                <select
                  name="retention"
                  value={retention}
                  onChange={(e) => setRetention(e.currentTarget.value)}
                  aria-describedby="retention-note"
                >
                  <option value="">{t('retentionNone')}</option>
                  {RETENTION_PERIODS.map((p) => (
                    <option key={p} value={p}>
                      {p}
                    </option>
                  ))}
                </select>
                <small id="retention-note" class="hint">
                  {t('retentionNote')}
                </small>
              </label>
            )}
            <Alert text={error} />
            <button type="submit">{t('save')}</button>
          </form>
          {item.kind === 'file' && (
            <section aria-labelledby="versions-title">
              <h3 id="versions-title">{t('versions')}</h3>
              <ol class="versions">
                {versions.map((v) => (
                  <li key={v.id}>
                    <span>
                      {formatDate(v.createdAt)} · {formatSize(v.size)} {v.isCurrent && <strong>({t('current')})</strong>}
                    </span>
                    <span class="version-actions">
                      <button type="button" onClick={() => downloadOwnFile({ id: item.id, name: detail.name, size: v.size }, v.id)}>
                        {t('download')}
                      </button>
                      {!v.isCurrent && (
                        <button
                          type="button"
                          onClick={async () => {
                            try {
                              await api.post(`/files/versions/${item.id}/${v.id}/restore`);
                              await reload();
                              props.onChanged();
                            } catch (e) {
                              notify(errorText(e), 'error');
                            }
                          }}
                        >
                          {t('restoreVersion')}
                        </button>
                      )}
                    </span>
                  </li>
                ))}
              </ol>
              <p class="hint">{t('newVersionNote')}</p>
            </section>
          )}
        </>
      )}
    </aside>
  );
}
