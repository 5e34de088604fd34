import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { formatSize } from '../format';
import { useNarrow } from '../drawer';
import { errorText, t } from '../i18n';
import { Alert, Icon, Link, TableHead, useLang } from '../ui';
import { downloadOwnFile } from './widgets';
import { previewKind } from '../preview-kinds';
import { loadOwnPreview } from '../previews';
import { Viewer } from './viewer';

/** What a share allows, in words. */
function permissionsOf(s: any): string {
  return [s.permission.canView && t('allowView'), s.permission.canDownload && t('allowDownload'), s.permission.canEdit && t('allowEdit')]
    .filter(Boolean)
    .join(', ');
}

/** What other users shared with the signed-in user, with the permission each one gives. */
export function SharedWithMePage() {
  useLang();
  const [items, setItems] = useState<any[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState('');
  const narrow = useNarrow();
  // The file shared on its own that the viewer shows (any grant lets one see, so preview).
  const [viewing, setViewing] = useState<any | null>(null);
  const load = async (after?: string) => {
    try {
      const page = await api.get('/shared-with-me', { limit: 100, cursor: after });
      setItems((list) => [...(after ? (list ?? []) : []), ...page.data]);
      setCursor(page.nextCursor);
    } catch (e) {
      setError(errorText(e));
    }
  };
  useEffect(() => {
    load();
  }, []);
  return (
    <div class="shared-page">
      <h1>{t('sharedWithMe')}</h1>
      <Alert text={error} />
      {items === null ? (
        <p>{t('loading')}</p>
      ) : items.length === 0 ? (
        <p class="empty">{t('nothingShared')}</p>
      ) : (
        <table class="items">
          <TableHead
            columns={[
              { label: t('colName') },
              { label: t('owner'), class: 'col-wide' },
              { label: t('permissions'), class: 'col-wide' },
              { label: t('colSize'), class: 'col-size' },
              { label: t('colActions'), hidden: true },
            ]}
          />
          <tbody>
            {items.map((s) => (
              <tr key={`${s.itemType}:${s.itemId}`} data-name={s.name}>
                <td>
                  {s.itemType === 'folder' ? (
                    <Link href={`/files/${s.itemId}`}>
                      <Icon name="folder" /> {s.name}
                    </Link>
                  ) : (
                    <span>
                      <Icon name="file" /> {s.name}
                    </span>
                  )}
                  {/* On a phone the owner and permission columns make way for the name: they are shown under it. */}
                  {narrow && (
                    <span class="item-meta">
                      {s.owner.name} · {permissionsOf(s)}
                    </span>
                  )}
                </td>
                <td class="col-wide">
                  {s.owner.name} <span class="muted">&lt;{s.owner.email}&gt;</span>
                </td>
                <td class="perms-cell col-wide">{permissionsOf(s)}</td>
                <td class="col-size">{s.file ? formatSize(s.file.size) : ''}</td>
                <td>
                  {s.itemType === 'file' && previewKind(s.name) && (
                    <button type="button" onClick={() => setViewing(s)} aria-label={`${t('preview')} ${s.name}`}>
                      {t('preview')}
                    </button>
                  )}{' '}
                  {s.itemType === 'file' &&
                    (s.permission.canDownload ? (
                      <button type="button" onClick={() => downloadOwnFile({ id: s.itemId, name: s.name, size: s.file?.size ?? 0 })}>
                        {t('download')}
                      </button>
                    ) : (
                      // No button that would fail: what the grant lacks, said instead.
                      <small class="hint">{t('downloadNotAllowed')}</small>
                    ))}
                  {s.itemType === 'folder' && <Link href={`/files/${s.itemId}`}>{t('open')}</Link>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {viewing && (
        <Viewer
          files={[{ key: viewing.itemId, name: viewing.name }]}
          start={0}
          load={loadOwnPreview}
          onDownload={
            viewing.permission.canDownload
              ? () => downloadOwnFile({ id: viewing.itemId, name: viewing.name, size: viewing.file?.size ?? 0 })
              : undefined
          }
          onClose={() => setViewing(null)}
        />
      )}
      {cursor && (
        <button type="button" onClick={() => load(cursor)}>
          {t('loadMore')}
        </button>
      )}
    </div>
  );
}
