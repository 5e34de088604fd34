import { useState } from 'preact/hooks';
import { errorText, t, type MessageKey } from '../i18n';
import { notify } from '../ui';
import { moveOrCopyItem, restoreItem, trashItem, type Item } from './items';
import type { Selection } from './selection';
import { FolderPicker, downloadOwnZip } from './widgets';

interface Failure {
  item: Item;
  error: unknown;
}

/** Runs `act` on each item in turn (the single-item API calls); what failed, with why. */
async function eachItem(items: Item[], act: (item: Item) => Promise<unknown>): Promise<{ done: Item[]; failed: Failure[] }> {
  const done: Item[] = [];
  const failed: Failure[] = [];
  for (const item of items) {
    try {
      await act(item);
      done.push(item);
    } catch (error) {
      failed.push({ item, error });
    }
  }
  return { done, failed };
}

/**
 * What can be done with the checked rows: one zip of them, or move, copy and trash item by item.
 * When some items fail, the others are done, the failed ones stay checked, and a message that stays
 * until dismissed names each with its reason.
 */
export function SelectionBar(props: {
  items: Item[];
  selection: Selection;
  /** The folder listed: the zip is named after it. */
  folder: { id: string; name: string };
  /** What the person may do in the folder: only those actions are offered. */
  access: { canDownload: boolean; canEdit: boolean };
  pickerRoot: string;
  onChanged: () => void;
}) {
  const { selection } = props;
  const [picking, setPicking] = useState<'move' | 'copy' | null>(null);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState('');
  const chosen = props.items.filter((i) => selection.has(i.id));
  if (chosen.length === 0 && !failure) return null;

  /** Runs a bulk action and says how it went; throws nothing. */
  const run = async (act: (item: Item) => Promise<unknown>, failedKey: MessageKey) => {
    setBusy(true);
    setFailure('');
    const items = chosen;
    const { done, failed } = await eachItem(items, act);
    setBusy(false);
    selection.keepOnly(failed.map((f) => f.item.id));
    if (failed.length > 0) {
      const details = failed.map((f) => `${f.item.name} (${errorText(f.error)})`).join('; ');
      setFailure(`${t(failedKey, { failed: failed.length, count: items.length, details })} ${t('bulkFailedNote')}`);
    }
    if (done.length > 0) props.onChanged();
    return { done, failed };
  };

  const trashAll = async () => {
    const { done, failed } = await run(trashItem, 'bulkTrashFailed');
    if (done.length === 0 || failed.length > 0) return;
    notify(t('bulkTrashed', { count: done.length }), 'info', {
      label: t('undo'),
      run: async () => {
        const back = await eachItem(done, restoreItem);
        props.onChanged();
        if (back.failed.length > 0) notify(errorText(back.failed[0].error), 'error');
      },
    });
  };

  const zip = () =>
    downloadOwnZip(`${props.folder.name}.zip`, {
      fileIds: chosen.filter((i) => i.kind === 'file').map((i) => i.id),
      folderIds: chosen.filter((i) => i.kind === 'folder').map((i) => i.id),
    });

  return (
    <div class="selection-bar">
      {chosen.length > 0 && (
        <div class="toolbar" role="toolbar" aria-label={t('selectionActions')}>
          <span class="selection-count" aria-live="polite">
            {t('selectedCount', { count: chosen.length })}
          </span>
          {props.access.canDownload && (
            <button type="button" disabled={busy} onClick={zip}>
              {t('downloadZip')}
            </button>
          )}
          {props.access.canEdit && (
            <>
              <button type="button" disabled={busy} onClick={() => setPicking('move')}>
                {t('move')}
              </button>
              <button type="button" disabled={busy} onClick={() => setPicking('copy')}>
                {t('copy')}
              </button>
              <button type="button" disabled={busy} onClick={trashAll}>
                {t('moveToTrash')}
              </button>
            </>
          )}
          <button type="button" disabled={busy} onClick={() => selection.setAll(false)}>
            {t('clearSelection')}
          </button>
        </div>
      )}
      {failure && (
        <div class="bulk-failure">
          <p class="error" role="alert">
            {failure}
          </p>
          <button type="button" class="icon-button" aria-label={t('close')} title={t('close')} onClick={() => setFailure('')}>
            ×
          </button>
        </div>
      )}
      {picking && (
        <FolderPicker
          title={t(picking === 'move' ? 'moveItemsTo' : 'copyItemsTo', { count: chosen.length })}
          rootFolderId={props.pickerRoot}
          exclude={chosen.filter((i) => i.kind === 'folder').map((i) => i.id)}
          onClose={() => setPicking(null)}
          onPick={async (target) => {
            const how = picking;
            setPicking(null);
            const { done, failed } = await run(
              (item) => moveOrCopyItem(how, item, target),
              how === 'move' ? 'bulkMoveFailed' : 'bulkCopyFailed',
            );
            if (done.length > 0 && failed.length === 0) notify(t(how === 'move' ? 'bulkMoved' : 'bulkCopied', { count: done.length }));
          }}
        />
      )}
    </div>
  );
}
