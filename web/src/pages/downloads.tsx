import { useEffect, useState } from 'preact/hooks';
import { formatSize } from '../format';
import { t } from '../i18n';
import { useLang } from '../ui';

// ---- owner downloads: each with its progress and its cancel button, until it is saved ----

export interface Download {
  id: number;
  name: string;
  /** 0 when not known beforehand (a zip). */
  size: number;
  received: number;
  state: 'running' | 'done' | 'failed' | 'cancelled';
  error?: string;
  cancel: () => void;
}

let downloads: Download[] = [];
let sequence = 0;
const listeners = new Set<(list: Download[]) => void>();

function publish() {
  downloads = [...downloads];
  for (const listener of listeners) listener(downloads);
}

/** Saved and cancelled downloads leave the panel after a while; failures stay until closed. */
function forgetLater(download: Download) {
  setTimeout(() => {
    downloads = downloads.filter((d) => d !== download);
    publish();
  }, 6000);
}

/** What the code that fetches and saves a download tells the panel. */
export interface DownloadTracker {
  /** Aborted by the panel's cancel button. */
  signal: AbortSignal;
  received(bytes: number): void;
  saved(): void;
  /** Whether a failure is the person's own cancel (then nothing more is said). */
  cancelled(): boolean;
  failed(message: string): void;
}

/** Shows a download in the panel from now on; `size` 0 when unknown. */
export function trackDownload(name: string, size: number): DownloadTracker {
  const controller = new AbortController();
  const download: Download = { id: ++sequence, name, size, received: 0, state: 'running', cancel: () => controller.abort() };
  downloads.push(download);
  publish();
  // Progress is published at most every 100 ms: a chunk can be a few KB.
  let publishedAt = 0;
  const end = (state: Download['state'], error?: string) => {
    Object.assign(download, { state, error });
    publish();
    if (state !== 'failed') forgetLater(download);
  };
  return {
    signal: controller.signal,
    received(bytes) {
      download.received += bytes;
      if (Date.now() - publishedAt >= 100) {
        publishedAt = Date.now();
        publish();
      }
    },
    saved: () => end('done'),
    cancelled() {
      if (!controller.signal.aborted) return false;
      end('cancelled');
      return true;
    },
    failed: (message) => end('failed', message),
  };
}

/** The running and recent downloads, with their progress; nothing when there are none. */
export function DownloadPanel() {
  useLang();
  const [list, setList] = useState<Download[]>(downloads);
  useEffect(() => {
    listeners.add(setList);
    return () => void listeners.delete(setList);
  }, []);
  if (list.length === 0) return null;
  return (
    <section class="downloads" aria-labelledby="downloads-title">
      <header>
        <h2 id="downloads-title">{t('downloads')}</h2>
        {list.every((d) => d.state !== 'running') && (
          <button
            type="button"
            class="icon-button"
            aria-label={t('closeDownloads')}
            title={t('closeDownloads')}
            onClick={() => {
              downloads = [];
              publish();
            }}
          >
            ×
          </button>
        )}
      </header>
      <ul>
        {list.map((d) => (
          <DownloadRow key={d.id} download={d} />
        ))}
      </ul>
    </section>
  );
}

function DownloadRow({ download: d }: { download: Download }) {
  const known = d.size > 0;
  return (
    <li class={`download ${d.state}`} data-name={d.name}>
      <span class="download-name">{d.name}</span>
      {known || d.state === 'done' ? (
        <progress max={known ? d.size : 1} value={d.state === 'done' ? (known ? d.size : 1) : d.received} aria-label={d.name} />
      ) : (
        <progress aria-label={d.name} />
      )}
      <span class="download-state">
        {d.state === 'running' &&
          (known ? t('downloadedOf', { done: formatSize(d.received), size: formatSize(d.size) }) : formatSize(d.received))}
        {d.state === 'done' && t('downloadSaved')}
        {d.state === 'failed' && t('downloadFailed', { message: d.error ?? '' })}
        {d.state === 'cancelled' && t('downloadCancelled')}
      </span>
      {d.state === 'running' && (
        <button type="button" class="icon-button" aria-label={t('cancelDownload', { name: d.name })} title={t('cancel')} onClick={d.cancel}>
          ×
        </button>
      )}
    </li>
  );
}
