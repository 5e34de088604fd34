import { useEffect, useState } from 'preact/hooks';
import { errorText, t } from '../i18n';
import type { BucketInfo } from '../main';
import { Link, navigate, notify, useLang } from '../ui';
import { DetailsPanel } from './details-panel';
import { FolderHeader } from './folder-header';
import { useFolderListing } from './folder-listing';
import { ItemDialogs, type DialogState } from './item-dialogs';
import { restoreItem, trashItem, type Item } from './items';
import { ItemsTable, type Sort } from './items-table';
import type { RowAction } from './row-menu';
import { SelectionBar } from './selection-bar';
import { useSelection } from './selection';
import { downloadOwnFile, downloadOwnZip, startUploads } from './widgets';
import { explainRefusal } from './refusals';
import { previewKind } from '../preview-kinds';
import { loadOwnPreview } from '../previews';
import { Viewer } from './viewer';

// Set when a folder is opened from the list (Enter or a click on a folder, Backspace to the
// parent): once the new folder's rows are there, the focus goes to its first row (or, empty, to the
// page's main region) instead of being left on the page body.
let focusFolderOnLoad = false;

// Set by revealFile (a search result): once the folder's rows are there, that file is selected
// and its row focused. The listeners tell a folder page already open that it has one to reveal.
let revealOnLoad: string | null = null;
const revealListeners = new Set<() => void>();

/** Opens `folderId` with the file `fileId` selected and focused. */
export function revealFile(folderId: string, fileId: string): void {
  revealOnLoad = fileId;
  navigate(`/files/${folderId}`);
  for (const listener of revealListeners) listener();
}

/** The file manager on one folder. */
export function FolderPage(props: {
  folderId: string;
  buckets: BucketInfo[];
  onBucketSeen: (bucketId: string) => void;
  /** Whether the folder is someone else's, shared with the signed-in person. */
  onSharedSeen: (shared: boolean) => void;
  onChanged: () => void;
}) {
  useLang();
  const { folderId } = props;
  const [sort, setSort] = useState<Sort>({ by: 'name', order: 'asc' });
  const [selected, setSelected] = useState<string | null>(null);
  const [dialog, setDialog] = useState<DialogState>(null);
  const [dragging, setDragging] = useState(false);
  const [grid, setGrid] = useGridView();
  // The file shown in the viewer, by id; the viewer goes through the folder's previewable files.
  const [viewing, setViewing] = useState<string | null>(null);

  const { detail, access, crumbs, items, total, more, error, load, loadMore } = useFolderListing(folderId, sort, props.onBucketSeen);
  useEffect(() => {
    if (detail) props.onSharedSeen(!access.isOwner);
  }, [detail, access.isOwner]);
  const selectedItem = items.find((i) => i.id === selected) ?? null;
  useEffect(() => {
    if (!focusFolderOnLoad || !detail) return;
    focusFolderOnLoad = false;
    (document.querySelector<HTMLElement>('.items tbody .item-name') ?? document.getElementById('main'))?.focus();
  }, [detail, items.length]);
  const [revealTick, setRevealTick] = useState(0);
  useEffect(() => {
    const listener = () => setRevealTick((n) => n + 1);
    revealListeners.add(listener);
    return () => void revealListeners.delete(listener);
  }, []);
  useEffect(() => {
    const id = revealOnLoad;
    if (!id || !items.some((i) => i.id === id)) return;
    revealOnLoad = null;
    setSelected(id);
    document.querySelector<HTMLElement>(`.items tbody tr[data-id="${id}"] .item-name`)?.focus();
  }, [items, revealTick]);
  const selection = useSelection(
    items.map((i) => i.id),
    folderId,
  );

  const changed = () => {
    load();
    props.onChanged();
  };
  // The files listed so far: an upload of one of these names becomes its new version.
  const fileNames = () => new Set(items.filter((i) => i.kind === 'file').map((i) => i.name));

  const openFolder = (id: string) => {
    focusFolderOnLoad = true;
    navigate(`/files/${id}`);
  };
  const previewable = items.filter((i) => i.kind === 'file' && previewKind(i.name));
  // Enter or a double-click: a folder opens, a file downloads; without the download right a
  // file is previewed (a "can view" share), or its details shown when it cannot be.
  const open = (item: Item) => {
    if (item.kind === 'folder') openFolder(item.id);
    else if (access.canDownload) downloadOwnFile(item.raw);
    else if (previewKind(item.name)) setViewing(item.id);
    else setSelected(item.id);
  };

  // The focus goes back from the closed panel to the item's row, not to the top of the page. The
  // row is focused first: focusing it makes it current again, and the null set after that wins.
  const closeDetails = () => {
    document.querySelector<HTMLElement>(`.items tbody tr[data-id="${selected}"] .item-name`)?.focus();
    setSelected(null);
  };

  const trash = async (item: Item) => {
    try {
      await trashItem(item);
      if (selected === item.id) setSelected(null);
      changed();
      notify(t('trashed', { name: item.name }), 'info', {
        label: t('undo'),
        run: async () => {
          try {
            await restoreItem(item);
            changed();
          } catch (e) {
            notify(errorText(e), 'error');
          }
        },
      });
    } catch (e) {
      notify(errorText(await explainRefusal(e, folderId)), 'error');
    }
  };

  // Only what will work: downloads with the download right, changes with the edit right, sharing
  // and deleting for good for the owner.
  const actionsFor = (item: Item): RowAction[] => {
    const folder = item.kind === 'folder';
    return [
      ...(folder ? [{ label: t('open'), run: () => open(item) }] : []),
      ...(!folder && previewKind(item.name) ? [{ label: t('preview'), run: () => setViewing(item.id) }] : []),
      ...(access.canDownload
        ? [{ label: t('download'), run: () => (folder ? downloadOwnZip(`${item.name}.zip`, { folderId: item.id }) : open(item)) }]
        : []),
      { label: t('details'), run: () => setSelected(item.id) },
      ...(access.canEdit
        ? [
            { label: t('rename'), run: () => setDialog({ type: 'rename', item }) },
            { label: t('move'), run: () => setDialog({ type: 'move', item }) },
            { label: t('copy'), run: () => setDialog({ type: 'copy', item }) },
          ]
        : []),
      ...(access.isOwner ? [{ label: t('share'), run: () => setDialog({ type: 'share', item }) }] : []),
      ...(access.canEdit ? [{ label: t('moveToTrash'), run: () => trash(item) }] : []),
      ...(access.isOwner ? [{ label: t('deleteForever'), run: () => setDialog({ type: 'hardDelete', item }), danger: true }] : []),
    ];
  };

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    const list = Array.from(e.dataTransfer?.files ?? []);
    if (list.length > 0 && access.canEdit) startUploads(folderId, list, fileNames());
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
  const rootLabel = props.buckets.length > 1 && bucket ? bucket.name : t('files');
  document.title = `${detail.isRoot ? rootLabel : detail.name} · ${t('appName')}`;

  return (
    <div
      class={dragging ? 'folder-page dragging' : 'folder-page'}
      onDragOver={(e) => {
        if (access.canEdit && e.dataTransfer?.types.includes('Files')) {
          e.preventDefault();
          setDragging(true);
        }
      }}
      onDragLeave={(e) => {
        if (e.currentTarget === e.target) setDragging(false);
      }}
      onDrop={onDrop}
    >
      <FolderHeader
        folder={detail}
        crumbs={crumbs}
        rootLabel={rootLabel}
        showPath={props.buckets.length > 1}
        fileNames={fileNames}
        access={access}
        onNewFolder={() => setDialog({ type: 'newFolder' })}
        onShare={() =>
          setDialog({ type: 'share', item: { kind: 'folder', id: detail.id, name: detail.name, date: detail.updatedAt, raw: detail } })
        }
      />
      <div class="view-options">
        <button type="button" class="view-toggle" aria-pressed={grid} onClick={() => setGrid(!grid)}>
          {t('gridView')}
        </button>
      </div>
      <details class="keyboard-help">
        <summary>{t('keyboardShortcuts')}</summary>
        <p class="hint" id="keyboard-help">
          {t('keyboardHelp')}
        </p>
      </details>
      <SelectionBar items={items} selection={selection} folder={detail} access={access} pickerRoot={pickerRoot} onChanged={changed} />
      {/* With an item chosen, a phone shows its details as a sheet over the list (phone.css). */}
      <div class={selectedItem ? 'list-and-details has-details' : 'list-and-details'}>
        <div class="list">
          {items.length === 0 ? (
            <p class="empty">{t('emptyFolder')}</p>
          ) : (
            <ItemsTable
              items={items}
              current={selected}
              setCurrent={setSelected}
              selection={selection}
              sort={sort}
              setSort={setSort}
              open={open}
              actionsFor={actionsFor}
              onRename={(item) => access.canEdit && setDialog({ type: 'rename', item })}
              onTrash={(item) => access.canEdit && trash(item)}
              onUp={!detail.isRoot && detail.parentId ? () => openFolder(detail.parentId) : undefined}
              grid={grid}
            />
          )}
          <p class="paging">
            {items.length < total
              ? t('showing', { shown: items.length, total })
              : t(total === 1 ? 'oneItem' : 'itemCount', { count: total })}
            {more && (
              <button type="button" onClick={loadMore}>
                {t('loadMore')}
              </button>
            )}
          </p>
          {access.canEdit && <p class="hint drop-hint">{t('dropHere')}</p>}
        </div>
        <DetailsPanel item={selectedItem} folder={detail} access={access} onChanged={changed} onClose={closeDetails} />
      </div>
      {dragging && (
        <div class="drop-overlay" aria-hidden="true">
          {t('dropHere')}
        </div>
      )}
      {viewing && previewable.some((i) => i.id === viewing) && (
        <Viewer
          files={previewable.map((i) => ({ key: i.id, name: i.name }))}
          start={previewable.findIndex((i) => i.id === viewing)}
          load={loadOwnPreview}
          onDownload={access.canDownload ? (file) => downloadOwnFile(items.find((i) => i.id === file.key)!.raw) : undefined}
          onClose={() => setViewing(null)}
        />
      )}
      <ItemDialogs
        dialog={dialog}
        close={() => setDialog(null)}
        folder={detail}
        pickerRoot={pickerRoot}
        onChanged={changed}
        onShareChanged={load}
        onGone={(item) => selected === item.id && setSelected(null)}
      />
    </div>
  );
}

const VIEW_KEY = 'coffre.view';

/** Whether folders show as a grid of tiles (else a list), remembered on this browser. */
function useGridView(): [boolean, (grid: boolean) => void] {
  const [grid, setGrid] = useState(() => {
    try {
      return localStorage.getItem(VIEW_KEY) === 'grid';
    } catch {
      return false;
    }
  });
  const choose = (next: boolean) => {
    setGrid(next);
    try {
      localStorage.setItem(VIEW_KEY, next ? 'grid' : 'list');
    } catch {
      // Not remembered (storage refused): the choice holds for this page.
    }
  };
  return [grid, choose];
}
