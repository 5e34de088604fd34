import { useEffect, useState } from 'preact/hooks';
import { errorText, t } from '../i18n';
import { previewKind, TEXT_PREVIEW_BYTES } from '../preview-kinds';
import { Dialog } from '../ui';

/** A file the viewer can show; `key` tells files apart (an id, or a link's hash name). */
export interface ViewerFile {
  key: string;
  name: string;
}

/**
 * A file's content, fetched (with the token) or decrypted (on a link page) by the page; or, for
 * audio and video, an address of the server's to stream it from (a preview address).
 */
export type Loaded = { blob: Blob; truncated: boolean } | { address: string; truncated: false };

type Shown =
  { state: 'loading' } | { state: 'error'; message: string } | { state: 'ready'; url: string; text?: string; truncated: boolean };

/**
 * The preview of one file of a list, with previous / next (buttons, ← and →). Content is shown
 * only from blob: URLs the page made: images (SVG too) in an `<img>`, where no script runs; PDF in
 * the browser's viewer in a frame; audio and video with native controls (from a blob: URL, or
 * streamed from the preview route's inert answer); text, code and HTML as
 * text in a `<pre>`, never as markup. Download is offered only when `onDownload` is given.
 */
export function Viewer(props: {
  files: ViewerFile[];
  start: number;
  load: (file: ViewerFile, signal: AbortSignal) => Promise<Loaded>;
  onDownload?: (file: ViewerFile) => void;
  onClose: () => void;
}) {
  const { files } = props;
  const [at, setAt] = useState(props.start);
  // What is shown, and for which file: right after a move it is still the previous file's.
  const [loaded, setShown] = useState<Shown & { key?: string }>({ state: 'loading' });
  const file = files[at];
  const shown: Shown = loaded.key === file.key ? loaded : { state: 'loading' };
  const kind = previewKind(file.name);

  useEffect(() => {
    const abort = new AbortController();
    let url: string | null = null;
    const show = (next: Shown) => setShown({ ...next, key: file.key });
    (async () => {
      try {
        const content = await props.load(file, abort.signal);
        if (abort.signal.aborted) return;
        if ('address' in content) return show({ state: 'ready', url: content.address, truncated: false });
        url = URL.createObjectURL(content.blob);
        if (kind !== 'text') return show({ state: 'ready', url, truncated: false });
        const bytes = new Uint8Array(await content.blob.slice(0, TEXT_PREVIEW_BYTES).arrayBuffer());
        const text = new TextDecoder('utf-8').decode(bytes);
        if (!abort.signal.aborted)
          show({ state: 'ready', url, text, truncated: content.truncated || content.blob.size > TEXT_PREVIEW_BYTES });
      } catch (error) {
        if (!abort.signal.aborted) show({ state: 'error', message: t('previewFailed', { message: errorText(error) }) });
      }
    })();
    return () => {
      abort.abort();
      if (url) URL.revokeObjectURL(url);
    };
  }, [file.key]);

  const go = (step: number) => setAt((i) => (i + step + files.length) % files.length);
  // On the document: the focus may be anywhere in the modal dialog (its close button first).
  useEffect(() => {
    const onKeyDown = (e: KeyboardEvent) => {
      // Media controls and text fields use the arrows themselves (to seek, or move the caret).
      const target = e.target as HTMLElement;
      if (files.length < 2 || ['AUDIO', 'VIDEO', 'INPUT', 'TEXTAREA'].includes(target.tagName)) return;
      if (e.key === 'ArrowLeft' || e.key === 'ArrowRight') {
        e.preventDefault();
        go(e.key === 'ArrowLeft' ? -1 : 1);
      }
    };
    document.addEventListener('keydown', onKeyDown);
    return () => document.removeEventListener('keydown', onKeyDown);
  }, [files.length]);

  return (
    <Dialog title={file.name} onClose={props.onClose} id="viewer" wide>
      <div class="viewer" data-kind={kind ?? ''}>
        <div class="viewer-content" aria-live="polite" aria-busy={shown.state === 'loading'}>
          <Content kind={kind} name={file.name} shown={shown} />
        </div>
        <div class="viewer-bar">
          {files.length > 1 && (
            <>
              <button type="button" onClick={() => go(-1)} aria-label={t('previousFile')} title={t('previousFile')}>
                ←
              </button>
              <span class="muted">{t('previewPosition', { at: at + 1, count: files.length })}</span>
              <button type="button" onClick={() => go(1)} aria-label={t('nextFile')} title={t('nextFile')}>
                →
              </button>
            </>
          )}
          {props.onDownload && (
            <button type="button" class="primary viewer-download" onClick={() => props.onDownload!(file)}>
              {t('download')}
            </button>
          )}
        </div>
        {files.length > 1 && <p class="hint">{t('previewKeys')}</p>}
      </div>
    </Dialog>
  );
}

function Content(props: { kind: ReturnType<typeof previewKind>; name: string; shown: Shown }) {
  const { shown, name } = props;
  if (shown.state === 'loading') return <p class="loading">{t('previewLoading')}</p>;
  if (shown.state === 'error')
    return (
      <p class="error" role="alert">
        {shown.message}
      </p>
    );
  switch (props.kind) {
    case 'image':
      return <img class="viewer-image" src={shown.url} alt={name} />;
    case 'pdf':
      return <iframe class="viewer-pdf" src={shown.url} title={name} />;
    case 'audio':
      return <audio class="viewer-media" src={shown.url} controls aria-label={name} />;
    case 'video':
      return <video class="viewer-media" src={shown.url} controls aria-label={name} />;
    default:
      return (
        <>
          {shown.truncated && <p class="warning">{t('previewTruncated')}</p>}
          <pre class="viewer-text" tabIndex={0} aria-label={name}>
            {shown.text}
          </pre>
        </>
      );
  }
}
