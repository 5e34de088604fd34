import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, authHeaders, errorOf, url } from '../api';
import { formatSize } from '../format';
import { errorText, t } from '../i18n';
import { openSink } from '../save';
import { Alert, Dialog, Icon, notify, useLang } from '../ui';
import { uploadFile } from '../upload';
import { trackDownload } from './downloads';
import { explainRefusal } from './refusals';

/** The account's storage from `/storage/status`, with the low-space warning. */
export function StorageBar(props: { tick: number }) {
  useLang();
  const [status, setStatus] = useState<any>(null);
  useEffect(() => {
    api.get('/storage/status').then(setStatus, () => {});
  }, [props.tick]);
  if (!status) return null;
  const low = status.warning?.is_low;
  return (
    <section class={low ? 'storage low' : 'storage'} aria-labelledby="storage-title">
      <h2 id="storage-title">{t('storage')}</h2>
      <progress
        max={status.capacity_bytes || 1}
        value={Math.min(status.used_bytes, status.capacity_bytes || 1)}
        aria-labelledby="storage-text"
      />
      <p id="storage-text">{t('storageUsed', { used: status.readable.used, capacity: status.readable.capacity })}</p>
      {low && (
        <p class="warning" role="alert">
          {t('storageLow', { remaining: status.readable.remaining })}
        </p>
      )}
    </section>
  );
}

// ---- uploads: one tus upload per file, each with its progress and its cancel button ----

export interface Upload {
  id: number;
  name: string;
  size: number;
  loaded: number;
  folderId: string;
  state: 'uploading' | 'done' | 'failed' | 'cancelled';
  /** Waiting for the network (or the server) to come back; the upload goes on by itself. */
  retrying?: boolean;
  /** The folder has a file of this name already: the upload becomes its new version. */
  newVersion: boolean;
  error?: string;
  abort: () => void;
}
let uploads: Upload[] = [];
let uploadSeq = 0;
const uploadListeners = new Set<(u: Upload[]) => void>();
const doneListeners = new Set<(folderId: string) => void>();
function publishUploads() {
  uploads = [...uploads];
  for (const l of uploadListeners) l(uploads);
}

/** Finished and cancelled uploads leave the panel after a while; failures stay until cleared. */
function forgetLater(upload: Upload) {
  setTimeout(() => {
    uploads = uploads.filter((u) => u !== upload);
    publishUploads();
  }, 8000);
}

/** Starts uploading `files` into a folder, all at once. */
export function startUploads(folderId: string, files: File[], existingNames: ReadonlySet<string> = new Set()): void {
  for (const file of files) {
    const upload: Upload = {
      id: ++uploadSeq,
      name: file.name,
      size: file.size,
      loaded: 0,
      folderId,
      state: 'uploading',
      newVersion: existingNames.has(file.name),
      abort: () => {},
    };
    const handle = uploadFile(folderId, file, {
      onProgress: (loaded) => {
        upload.loaded = loaded;
        publishUploads();
      },
      onResume: (offset, total) => {
        upload.loaded = offset;
        publishUploads();
        notify(t('uploadResumed', { name: file.name, percent: Math.floor((offset * 100) / (total || 1)) }));
      },
      onRetrying: (waiting) => {
        upload.retrying = waiting;
        publishUploads();
      },
    });
    upload.abort = handle.abort;
    uploads.push(upload);
    handle.promise.then(
      () => {
        upload.state = 'done';
        upload.loaded = upload.size;
        publishUploads();
        if (upload.newVersion) notify(t('savedAsVersion', { name: upload.name }));
        forgetLater(upload);
        for (const l of doneListeners) l(folderId);
      },
      (error: ApiError) => {
        upload.state = error.code === 'ABORTED' ? 'cancelled' : 'failed';
        upload.error = errorText(error);
        publishUploads();
        if (upload.state === 'cancelled') forgetLater(upload);
        // Said more precisely once known: the right to add files here may have been taken back.
        else
          void explainRefusal(error, folderId).then((explained) => {
            upload.error = errorText(explained);
            publishUploads();
          });
      },
    );
  }
  publishUploads();
}

/** Calls `listener` with the folder id whenever an upload into it completes. */
export function onUploadDone(listener: (folderId: string) => void): () => void {
  doneListeners.add(listener);
  return () => doneListeners.delete(listener);
}

export function UploadPanel(props: { onUploaded: () => void }) {
  useLang();
  const [list, setList] = useState<Upload[]>(uploads);
  useEffect(() => {
    uploadListeners.add(setList);
    const off = onUploadDone(() => props.onUploaded());
    return () => {
      uploadListeners.delete(setList);
      off();
    };
  }, []);
  const [collapsed, setCollapsed] = useState(false);
  if (list.length === 0) return null;
  const inFlight = list.some((u) => u.state === 'uploading');
  return (
    <section class={collapsed ? 'uploads collapsed' : 'uploads'} aria-labelledby="uploads-title">
      <header>
        <h2 id="uploads-title">{t('uploads')}</h2>
        <button
          type="button"
          onClick={() => {
            uploads = uploads.filter((u) => u.state === 'uploading');
            publishUploads();
          }}
        >
          {t('clearFinished')}
        </button>
        <button
          type="button"
          class="icon-button"
          aria-expanded={!collapsed}
          aria-controls="upload-list"
          aria-label={collapsed ? t('showUploads') : t('hideUploads')}
          title={collapsed ? t('showUploads') : t('hideUploads')}
          onClick={() => setCollapsed(!collapsed)}
        >
          {collapsed ? '▴' : '▾'}
        </button>
        {!inFlight && (
          <button
            type="button"
            class="icon-button"
            aria-label={t('closeUploads')}
            title={t('closeUploads')}
            onClick={() => {
              uploads = [];
              publishUploads();
            }}
          >
            ×
          </button>
        )}
      </header>
      <ul id="upload-list" hidden={collapsed}>
        {list.map((u) => (
          <li key={u.id} class={`upload ${u.state}`} data-name={u.name}>
            <span class="upload-name">
              {u.name}
              {u.newVersion && <span class="badge">{t('newVersionOf')}</span>}
            </span>
            <progress max={u.size || 1} value={u.state === 'done' ? u.size || 1 : u.loaded} aria-label={u.name} />
            <span class="upload-state">
              {u.state === 'uploading' && !u.retrying && `${formatSize(u.loaded)} / ${formatSize(u.size)}`}
              {u.state === 'uploading' && u.retrying && t('uploadRetrying')}
              {u.state === 'done' && t('uploadDone')}
              {u.state === 'failed' && t('uploadFailed', { message: u.error ?? '' })}
              {u.state === 'cancelled' && t('uploadCancelled')}
            </span>
            {u.state === 'uploading' && (
              <button
                type="button"
                class="icon-button"
                aria-label={t('cancelUpload', { name: u.name })}
                title={t('cancel')}
                onClick={() => u.abort()}
              >
                ×
              </button>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

/**
 * Saves what `request` answers as `name`, streamed to disk where possible, its progress in the
 * downloads panel (where it can be cancelled); a failure is notified.
 */
async function saveAnswer(name: string, size: number, toDisk: boolean, request: (signal: AbortSignal) => Promise<Response>): Promise<void> {
  const sink = await openSink(name, size, toDisk);
  if (!sink) return;
  const download = trackDownload(name, size);
  try {
    const res = await request(download.signal);
    if (!res.ok || !res.body) throw await errorOf(res);
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      await sink.write(value);
      download.received(value.length);
    }
    await sink.close();
    download.saved();
  } catch (error) {
    await sink.abort();
    if (download.cancelled()) return;
    download.failed(errorText(error));
    notify(t('error', { message: errorText(error) }), 'error');
  }
}

/** Downloads a file of the account (or shared with it, with canDownload), streamed to disk where possible. */
export function downloadOwnFile(file: { id: string; name: string; size: number }, versionId?: string): Promise<void> {
  return saveAnswer(file.name, file.size, false, (signal) =>
    fetch(url(`/files/download/${file.id}`, { versionId }), { headers: authHeaders(), cache: 'no-store', signal }),
  );
}

/**
 * Downloads a zip made by the server: a folder's subtree, or items of one folder. It is fetched
 * with the bearer token (a plain link would not carry it) and streamed to disk where the browser
 * lets the page write a file; the save dialog is asked for first, its size being unknown.
 */
export function downloadOwnZip(name: string, what: { folderId: string } | { fileIds: string[]; folderIds: string[] }): Promise<void> {
  notify(t('zipDownloading', { name }));
  return saveAnswer(name, 0, true, (signal) =>
    'folderId' in what
      ? fetch(url(`/folders/download/${what.folderId}`), { headers: authHeaders(), cache: 'no-store', signal })
      : fetch(url('/files/download-zip'), {
          method: 'POST',
          headers: { ...authHeaders(), 'content-type': 'application/json' },
          body: JSON.stringify(what),
          cache: 'no-store',
          signal,
        }),
  );
}

/** Picks a folder of a bucket, browsing from its root. */
export function FolderPicker(props: {
  title: string;
  rootFolderId: string;
  /** Folders not offered (those being moved: a folder cannot go into itself). */
  exclude?: string[];
  onPick: (folderId: string) => Promise<void>;
  onClose: () => void;
}) {
  const [folderId, setFolderId] = useState(props.rootFolderId);
  const [detail, setDetail] = useState<any>(null);
  const [children, setChildren] = useState<any[]>([]);
  const [error, setError] = useState('');
  useEffect(() => {
    setError('');
    Promise.all([api.get(`/folders/details/${folderId}`), api.get(`/folders/${folderId}/subfolders`, { limit: 1000 })]).then(
      ([d, page]) => {
        setDetail(d);
        setChildren(page.data.filter((f: any) => !props.exclude?.includes(f.id)));
      },
      (e) => setError(errorText(e)),
    );
  }, [folderId]);
  const pick = async () => {
    try {
      await props.onPick(folderId);
      props.onClose();
    } catch (e) {
      setError(errorText(e));
    }
  };
  return (
    <Dialog title={props.title} onClose={props.onClose} id="picker">
      <p class="picker-path">
        <strong>{detail?.displayPath ?? '/'}</strong>
      </p>
      <ul class="picker-list" aria-label={t('folder')}>
        {detail && !detail.isRoot && detail.parentId && (
          <li>
            <button type="button" onClick={() => setFolderId(detail.parentId)}>
              <Icon name="up" /> {t('up')}
            </button>
          </li>
        )}
        {children.map((f) => (
          <li key={f.id}>
            <button type="button" onClick={() => setFolderId(f.id)}>
              <Icon name="folder" /> {f.name}
            </button>
          </li>
        ))}
      </ul>
      <Alert text={error} />
      <div class="actions">
        <button type="button" onClick={props.onClose}>
          {t('cancel')}
        </button>
        <button type="button" class="primary" onClick={pick}>
          {t('chooseHere')}
        </button>
      </div>
    </Dialog>
  );
}
