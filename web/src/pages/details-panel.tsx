import { useCallback, useEffect, useState } from 'preact/hooks';
import { useServerAddresses } from '../addresses';
import { useLatest } from '../latest';
import { api } from '../api';
import { formatDate, formatSize } from '../format';
import { errorText, t } from '../i18n';
import { Alert, Confirm, notify } from '../ui';
import type { FolderAccess } from './folder-listing';
import type { Item } from './items';
import { downloadOwnFile } from './widgets';

export const RETENTION_PERIODS = ['30d', '45d', '90d', '120d', '180d', '1Y', '2Y', '3Y', '5Y'];

/** The side panel of the selected item: details, visibility, retention, versions. */
export function DetailsPanel(props: {
  item: Item | null;
  folder: any;
  /** What the person may do in the folder: the panel offers only that. */
  access: FolderAccess;
  onChanged: () => void;
  onClose: () => void;
}) {
  const { item } = props;
  const [detail, setDetail] = useState<any>(null);
  const [versions, setVersions] = useState<any[]>([]);
  const [visibility, setVisibility] = useState('private');
  const [retention, setRetention] = useState('');
  const [error, setError] = useState('');
  const [confirmingPublic, setConfirmingPublic] = useState(false);
  const { publicUrl } = useServerAddresses();
  const loads = useLatest();
  const reload = useCallback(async () => {
    if (!item) return;
    const latest = loads.start();
    setError('');
    try {
      if (item.kind === 'file') {
        const [d, v] = await Promise.all([api.get(`/files/details/${item.id}`), api.get(`/files/versions/${item.id}`)]);
        if (!latest()) return;
        setDetail(d);
        setVersions(Array.isArray(v) ? v : (v.data ?? []));
        setVisibility(d.visibility);
        setRetention(d.retentionPeriod ?? '');
      } else {
        const d = await api.get(`/folders/details/${item.id}`);
        if (!latest()) return;
        setDetail(d);
        setVersions([]);
        setVisibility(d.visibility);
      }
    } catch (e) {
      if (latest()) setError(errorText(e));
    }
  }, [item?.id]);
  useEffect(() => {
    setDetail(null);
    reload();
  }, [reload]);

  if (!item) return <aside class="details empty-details">{t('selectItem')}</aside>;
  const persist = async () => {
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
  // Making an item public hands out an address that needs no key: said, and confirmed, first.
  const save = (e: Event) => {
    e.preventDefault();
    if (visibility === 'public' && detail.visibility !== 'public') setConfirmingPublic(true);
    else persist();
  };
  return (
    <aside
      class="details"
      aria-labelledby="details-title"
      onKeyDown={(e) => {
        // Escape closes the panel (a sheet over the list on a phone), unless a dialog of it has the key.
        if (e.key === 'Escape' && !e.defaultPrevented && !(e.target as Element).closest('dialog')) {
          e.preventDefault();
          props.onClose();
        }
      }}
    >
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
          {props.access.isOwner && (
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
                  <a href={`/api/files/public/${detail.hashName}`}>{`${publicUrl}/api/files/public/${detail.hashName}`}</a>
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
          )}
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
                      {props.access.canDownload && (
                        <button type="button" onClick={() => downloadOwnFile({ id: item.id, name: detail.name, size: v.size }, v.id)}>
                          {t('download')}
                        </button>
                      )}
                      {!v.isCurrent && props.access.canEdit && (
                        <button
                          type="button"
                          onClick={async () => {
                            try {
                              await api.post(`/files/versions/${item.id}/${v.id}/restore`);
                              notify(t('versionRestored', { date: formatDate(v.createdAt) }));
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
      {confirmingPublic && (
        <Confirm
          message={t('confirmPublic')}
          confirmLabel={t('makePublic')}
          onCancel={() => setConfirmingPublic(false)}
          onConfirm={() => {
            setConfirmingPublic(false);
            persist();
          }}
        />
      )}
    </aside>
  );
}
