import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { useLatest } from '../latest';
import { formatDate, formatSize } from '../format';
import { useNarrow } from '../drawer';
import { errorText, t } from '../i18n';
import type { BucketInfo } from '../main';
import { Confirm, Icon, TableHead, notify, useLang } from '../ui';

/** The trash of the current bucket: restore, delete forever, empty. */
export function TrashPage(props: { bucket: BucketInfo; onChanged: () => void }) {
  useLang();
  const narrow = useNarrow();
  const [content, setContent] = useState<{ folders: any[]; files: any[] } | null>(null);
  const [confirm, setConfirm] = useState<null | { kind: 'all' } | { kind: 'folder' | 'file'; item: any }>(null);
  const loads = useLatest();
  const load = async () => {
    const latest = loads.start();
    try {
      const listed = await api.get('/trash/list', { bucketId: props.bucket.id });
      if (latest()) setContent(listed);
    } catch (e) {
      if (latest()) notify(errorText(e), 'error');
    }
  };
  useEffect(() => {
    load();
  }, [props.bucket.id]);
  /** Runs a change and says it was made (`done`), or what went wrong; the trash is read again either way. */
  const act = async (run: () => Promise<unknown>, done: string) => {
    try {
      await run();
      notify(done);
    } catch (e) {
      notify(errorText(e), 'error');
    }
    await load();
    props.onChanged();
  };
  const rows = content
    ? [
        ...content.folders.map((f) => ({ kind: 'folder' as const, item: f })),
        ...content.files.map((f) => ({ kind: 'file' as const, item: f })),
      ]
    : [];
  return (
    <div class="trash-page">
      <div class="page-head">
        <h1>
          {t('trash')} · {props.bucket.name}
        </h1>
        <button type="button" class="danger" disabled={rows.length === 0} onClick={() => setConfirm({ kind: 'all' })}>
          {t('emptyTrash')}
        </button>
      </div>
      {!content ? (
        <p>{t('loading')}</p>
      ) : rows.length === 0 ? (
        <p class="empty">{t('trashEmpty')}</p>
      ) : (
        <table class="items">
          <TableHead
            columns={[
              { label: t('colName') },
              { label: t('colSize'), class: 'col-size' },
              { label: t('deletedOn'), class: 'col-createdAt' },
              { label: t('colActions'), hidden: true },
            ]}
          />
          <tbody>
            {rows.map(({ kind, item }) => (
              <tr key={item.id} data-name={item.name}>
                <td>
                  <Icon name={kind} /> {item.name}
                  {/* On a phone the size and date columns make way for the buttons: they are shown under the name. */}
                  {narrow && (
                    <span class="item-meta">
                      {kind === 'file' && `${formatSize(item.size)} · `}
                      {formatDate(item.deletedAt)}
                    </span>
                  )}
                </td>
                <td class="col-size">{kind === 'file' ? formatSize(item.size) : '—'}</td>
                <td class="col-createdAt">{formatDate(item.deletedAt)}</td>
                <td class="row-buttons">
                  <button
                    type="button"
                    onClick={() =>
                      act(
                        () => api.post(`/${kind === 'folder' ? 'folders' : 'files'}/restore/${item.id}`),
                        t('restoredItem', { name: item.name }),
                      )
                    }
                  >
                    {t('restore')}
                  </button>
                  <button type="button" class="danger-text" onClick={() => setConfirm({ kind, item })}>
                    {t('deleteForever')}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {confirm && (
        <Confirm
          message={confirm.kind === 'all' ? t('confirmEmptyTrash') : t('confirmHardDelete', { name: confirm.item.name })}
          confirmLabel={confirm.kind === 'all' ? t('emptyTrash') : t('deleteForever')}
          danger
          onCancel={() => setConfirm(null)}
          onConfirm={() => {
            const c = confirm;
            setConfirm(null);
            if (c.kind === 'all') act(() => api.del('/trash/empty', { bucketId: props.bucket.id }), t('trashEmptied'));
            else
              act(
                () => api.del(`/${c.kind === 'folder' ? 'folders' : 'files'}/delete/${c.item.id}`, { trash: 'hard' }),
                t('deletedForeverItem', { name: c.item.name }),
              );
          }}
        />
      )}
    </div>
  );
}
