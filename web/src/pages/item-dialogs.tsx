import { api } from '../api';
import { errorText, t } from '../i18n';
import { Confirm, Prompt, notify } from '../ui';
import { deleteItemForever, moveOrCopyItem, type Item } from './items';
import { ShareDialog } from './share';
import { FolderPicker } from './widgets';
import { explainingRefusals } from './refusals';

export type DialogState =
  | null
  | { type: 'newFolder' }
  | { type: 'rename'; item: Item }
  | { type: 'move' | 'copy'; item: Item }
  | { type: 'hardDelete'; item: Item }
  | { type: 'share'; item: Item };

/** The dialogs of the file list's single-item actions (and of a new folder), one at a time. */
export function ItemDialogs(props: {
  dialog: DialogState;
  close: () => void;
  /** The folder listed. */
  folder: { id: string; bucketId: string };
  pickerRoot: string;
  onChanged: () => void;
  onShareChanged: () => void;
  /** An item deleted for good. */
  onGone: (item: Item) => void;
}) {
  const { dialog } = props;
  const rename = async (item: Item, name: string) => {
    if (item.kind === 'folder') await api.put(`/folders/update/${item.id}`, { name });
    else await api.put(`/files/update/${item.id}`, { name, visibility: item.raw.visibility });
    props.onChanged();
  };
  /** Runs an undo from a toast; its failure is a toast too. */
  const undoing = (work: () => Promise<unknown>) => async () => {
    try {
      await work();
      props.onChanged();
    } catch (e) {
      notify(errorText(e), 'error');
    }
  };
  const renamed = async (item: Item, name: string) => {
    await explainingRefusals(props.folder.id, () => rename(item, name));
    notify(t('renamedTo', { name }), 'info', { label: t('undo'), run: undoing(() => rename({ ...item, name }, item.name)) });
  };
  const movedOrCopied = async (how: 'move' | 'copy', item: Item, target: string) => {
    await explainingRefusals(props.folder.id, () => moveOrCopyItem(how, item, target));
    props.onChanged();
    if (how === 'copy') notify(t('copiedItem', { name: item.name }));
    else
      notify(t('movedItem', { name: item.name }), 'info', {
        label: t('undo'),
        run: undoing(() => moveOrCopyItem('move', item, props.folder.id)),
      });
  };

  const hardDelete = async (item: Item) => {
    try {
      await deleteItemForever(item);
      props.onGone(item);
      props.onChanged();
    } catch (e) {
      notify(errorText(e), 'error');
    }
  };

  return (
    <>
      {dialog?.type === 'newFolder' && (
        <Prompt
          title={t('newFolder')}
          label={t('folderName')}
          submitLabel={t('create')}
          onClose={() => props.close()}
          onSubmit={async (name) => {
            await explainingRefusals(props.folder.id, () =>
              api.post(`/folders/create/${props.folder.bucketId}`, { name, parentId: props.folder.id }),
            );
            props.onChanged();
            notify(t('folderCreated', { name }));
          }}
        />
      )}
      {dialog?.type === 'rename' && (
        <Prompt
          title={t('rename')}
          label={t('newName')}
          initial={dialog.item.name}
          submitLabel={t('rename')}
          onClose={() => props.close()}
          onSubmit={(name) => renamed(dialog.item, name)}
        />
      )}
      {(dialog?.type === 'move' || dialog?.type === 'copy') && (
        <FolderPicker
          title={t(dialog.type === 'move' ? 'moveTo' : 'copyTo', { name: dialog.item.name })}
          rootFolderId={props.pickerRoot}
          exclude={dialog.item.kind === 'folder' ? [dialog.item.id] : undefined}
          onClose={() => props.close()}
          onPick={(target) => movedOrCopied(dialog.type, dialog.item, target)}
        />
      )}
      {dialog?.type === 'hardDelete' && (
        <Confirm
          message={t('confirmHardDelete', { name: dialog.item.name })}
          confirmLabel={t('deleteForever')}
          danger
          onCancel={() => props.close()}
          onConfirm={() => {
            hardDelete(dialog.item);
            props.close();
          }}
        />
      )}
      {dialog?.type === 'share' && <ShareDialog item={dialog.item} onClose={() => props.close()} onChanged={props.onShareChanged} />}
    </>
  );
}
