import { useEffect, useState } from 'preact/hooks';
import { ApiError, authHeaders, call } from '../api';
import { DamagedContentError, WrongKeyError, isLinkKeyForm, linkKeyProof, unwrapChain } from '../crypto/sealed';
import { formatDate, formatSize } from '../format';
import { t, type MessageKey } from '../i18n';
import { FileChangedError, downloadThroughLink, keepPass, storedPass } from '../link-download';
import { downloadLinkZip, type SharedFile } from '../link-zip';
import { openSink } from '../save';
import { Icon, Link, TableHead, useLang } from '../ui';
import { previewKind } from '../preview-kinds';
import { LinkViewer, folderViewing, type LinkViewing } from './link-viewer';

type Closed = 'linkNotFound' | 'linkRevoked' | 'linkExpired' | 'linkExhausted' | 'linkWrongKey' | 'linkSignIn';

const CLOSED_BY_CODE: Record<string, Closed> = {
  LINK_NOT_FOUND: 'linkNotFound',
  LINK_REVOKED: 'linkRevoked',
  LINK_EXPIRED: 'linkExpired',
  LINK_EXHAUSTED: 'linkExhausted',
  INVALID_ENCRYPTION_KEY: 'linkWrongKey',
  UNAUTHENTICATED: 'linkSignIn',
};

type State =
  | { step: 'loading' }
  | { step: 'password'; wrong: boolean; kind?: 'file' | 'folder' }
  | { step: 'closed'; reason: Closed }
  | { step: 'file'; info: any }
  | { step: 'folder'; content: any }
  | { step: 'error'; message: string };

/**
 * The page of a share link, `/s/{sharedHash}#{linkKey}`. The key is read from the fragment and used
 * only here, by WebCrypto: it is never sent anywhere (downloads go through the sealed route, which
 * returns ciphertext and wrapped keys).
 */
export function PublicLinkPage(props: { sharedHash: string }) {
  useLang();
  const sharedHash = props.sharedHash;
  const [linkKey] = useState(() => decodeURIComponent(location.hash.slice(1)));
  const [state, setState] = useState<State>({ step: 'loading' });
  const [password, setPassword] = useState('');
  const [progress, setProgress] = useState<{ name: string; percent: number } | null>(null);
  const [retryIn, setRetryIn] = useState<number | null>(null);
  const [message, setMessage] = useState<{ text: string; kind: 'ok' | 'error' } | null>(null);
  // The viewer: the link's previewable files (one for a file link) and where it opened.
  const [viewing, setViewing] = useState<LinkViewing | null>(null);

  const fail = (error: unknown, kind?: 'file' | 'folder') => {
    const e = error as ApiError;
    if (e.code === 'PASSWORD_REQUIRED') return setState({ step: 'password', wrong: false, kind });
    if (e.code === 'INVALID_PASSWORD') return setState({ step: 'password', wrong: true, kind });
    if (e instanceof WrongKeyError) return setState({ step: 'closed', reason: 'linkWrongKey' });
    const closed = CLOSED_BY_CODE[e.code];
    if (closed) return setState({ step: 'closed', reason: closed });
    if (e.code === 'RATE_LIMITED' || e.status === 429)
      return setState({ step: 'error', message: t('tooManyTries', { seconds: e.retryAfter ?? 60 }) });
    setState({ step: 'error', message: e.message });
  };

  /** A wrong key shows before a download spends an access: the first wrap of the chain must open. */
  const checkKey = async (check: { id: string; wrapped: string } | undefined) => {
    if (check) await unwrapChain(linkKey, [check.wrapped], [check.id]);
  };

  /**
   * A page of the folder link's listing. The first open counts an access and hands out a pass; with
   * it, this tab's further pages, a reload and the files' downloads count none, even past the limit.
   */
  const folderPage = async (pw: string, cursor?: string) => {
    const pass = storedPass(sharedHash);
    // The key proof lets the server refuse a wrong key before it counts the open.
    return call('POST', `/folders/shared/${encodeURIComponent(sharedHash)}`, {
      body: { ...(pw ? { password: pw } : {}), keyProof: await linkKeyProof(linkKey) },
      query: { cursor },
      anonymous: true,
      headers: { ...authHeaders(), ...(pass ? { 'x-coffre-pass': pass } : {}) },
      onHeaders: (headers) => keepPass(sharedHash, headers.get('x-coffre-pass')),
    });
  };

  /** "More files": the next page of the listing, added to the table. */
  const showMore = async (content: { files: SharedFile[]; nextCursor: string | null }) => {
    try {
      const page = await folderPage(password, content.nextCursor ?? undefined);
      setState({ step: 'folder', content: { ...content, files: [...content.files, ...page.files], nextCursor: page.nextCursor } });
    } catch (error) {
      fail(error, 'folder');
    }
  };

  /** Every file of the shared tree: those listed, then the pages not listed yet. */
  const allFiles = async (content: { files: SharedFile[]; nextCursor: string | null }): Promise<SharedFile[]> => {
    const files = [...content.files];
    for (let cursor = content.nextCursor; cursor;) {
      const page = await folderPage(password, cursor);
      files.push(...page.files);
      cursor = page.nextCursor;
    }
    return files;
  };

  const open = async (pw: string, kind?: 'file' | 'folder') => {
    const body = pw ? { password: pw } : {};
    if (kind !== 'folder') {
      try {
        // A pass of an earlier download in this tab gets past a limit that download used up.
        const pass = storedPass(sharedHash);
        const headers = { ...authHeaders(), ...(pass ? { 'x-coffre-pass': pass } : {}) };
        const info = await call('POST', `/files/shared/${encodeURIComponent(sharedHash)}`, { body, anonymous: true, headers });
        await checkKey(info.keyCheck);
        return setState({ step: 'file', info });
      } catch (error) {
        // A folder's link is not a file link (404): try it as a folder.
        if ((error as ApiError).code !== 'LINK_NOT_FOUND') return fail(error, 'file');
      }
    }
    try {
      const content = await folderPage(pw);
      await checkKey(content.keyCheck);
      setState({ step: 'folder', content });
    } catch (error) {
      fail(error, 'folder');
    }
  };

  useEffect(() => {
    document.title = `${t('linkPageTitle')} · Coffre`;
    // Without a well-formed key nothing can be decrypted: say so before anything is counted.
    if (!isLinkKeyForm(linkKey)) setState({ step: 'closed', reason: 'linkWrongKey' });
    else open('');
  }, []);

  /** Fetches the ciphertext and its key chain, decrypts each segment with WebCrypto, saves; resumes after network breaks. */
  const download = async (file: { name: string; size: number; hashName?: string }) => {
    setMessage(null);
    const sink = await openSink(file.name, file.size);
    if (!sink) return;
    setProgress({ name: file.name, percent: 0 });
    const hadPass = !file.hashName && storedPass(sharedHash) !== null;
    try {
      await downloadThroughLink({
        sharedHash,
        linkKey,
        password: password || undefined,
        hashName: file.hashName,
        write: (chunk) => sink.write(chunk),
        onProgress: (percent) => setProgress({ name: file.name, percent }),
        onRetry: setRetryIn,
      });
      await sink.close();
      setMessage({ text: t('downloaded'), kind: 'ok' });
      if (!hadPass && state.step === 'file' && state.info.remainingAccess !== null) {
        setState({ step: 'file', info: { ...state.info, remainingAccess: Math.max(0, state.info.remainingAccess - 1) } });
      }
    } catch (error) {
      await sink.abort();
      downloadFailed(error);
    } finally {
      setProgress(null);
      setRetryIn(null);
    }
  };

  /** What a failed download (one file or the zip) shows: a message, or the link's closed state. */
  const downloadFailed = (error: unknown) => {
    if (error instanceof DamagedContentError) setMessage({ text: t('error', { message: error.message }), kind: 'error' });
    else if (error instanceof FileChangedError) setMessage({ text: t('linkFileChanged'), kind: 'error' });
    else if (error instanceof TypeError) setMessage({ text: t('error', { message: error.message }), kind: 'error' });
    else if ((error as ApiError).code === 'DOWNLOAD_NOT_ALLOWED') setMessage({ text: t('linkNoDownload'), kind: 'error' });
    else fail(error);
  };

  /** "Download all": the folder's files as one zip made in this page (src/link-zip.ts). */
  const downloadAll = async (content: { folder: { name: string }; files: SharedFile[]; nextCursor: string | null }) => {
    setMessage(null);
    const name = `${content.folder.name}.zip`;
    const sink = await openSink(name, 0, true);
    if (!sink) return;
    setProgress({ name, percent: 0 });
    try {
      const files = await allFiles(content);
      await downloadLinkZip({
        sharedHash,
        linkKey,
        password: password || undefined,
        folderName: content.folder.name,
        files,
        write: (chunk) => sink.write(chunk),
        onProgress: (percent) => setProgress({ name, percent }),
        onRetry: setRetryIn,
      });
      await sink.close();
      setMessage({ text: t('downloadedAll', { count: files.length }), kind: 'ok' });
    } catch (error) {
      await sink.abort();
      downloadFailed(error);
    } finally {
      setProgress(null);
      setRetryIn(null);
    }
  };

  let body;
  if (state.step === 'loading') body = <p>{t('loading')}</p>;
  else if (state.step === 'closed') {
    body = (
      <div class="closed" data-reason={state.reason}>
        <p class="big" role="alert">
          {t(state.reason as MessageKey)}
        </p>
        {state.reason === 'linkSignIn' && <Link href={`/login?next=${encodeURIComponent(location.pathname)}`}>{t('signIn')}</Link>}
      </div>
    );
  } else if (state.step === 'error') {
    body = (
      <p class="error" role="alert">
        {state.message}
      </p>
    );
  } else if (state.step === 'password') {
    body = (
      <form
        class="password-form"
        onSubmit={(e) => {
          e.preventDefault();
          setState({ step: 'loading' });
          open(password, state.kind);
        }}
      >
        <p>{t('linkNeedsPassword')}</p>
        <label class="field">
          <span>{t('password')}</span>
          <input
            name="password"
            type="password"
            autoComplete="off"
            required
            autoFocus
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
            aria-invalid={state.wrong}
          />
        </label>
        {state.wrong && (
          <p class="error" role="alert">
            {t('wrongPassword')}
          </p>
        )}
        <button type="submit" class="primary">
          {t('unlock')}
        </button>
      </form>
    );
  } else if (state.step === 'file') {
    const { info } = state;
    // A pass of this tab's earlier download still gets the file (a reload after a break).
    const usedUp = info.remainingAccess === 0 && storedPass(sharedHash) === null;
    body = (
      <div class="shared-file">
        <h2 class="file-name">
          <Icon name="file" /> {info.name}
        </h2>
        <dl>
          <dt>{t('size')}</dt>
          <dd>{formatSize(info.size)}</dd>
          <dt>{t('expiresOn')}</dt>
          <dd>{info.expiresAt ? formatDate(info.expiresAt) : t('never')}</dd>
          <dt>{t('remaining')}</dt>
          <dd data-testid="remaining">{info.remainingAccess === null ? t('unlimited') : info.remainingAccess}</dd>
        </dl>
        {info.canDownload ? (
          <div class="actions">
            {previewKind(info.name) && (
              <button
                type="button"
                class="big-button"
                disabled={!!progress || usedUp}
                onClick={() => setViewing({ files: [{ key: info.name, name: info.name, size: info.size }], start: 0 })}
              >
                {t('preview')}
              </button>
            )}
            <button
              type="button"
              class="primary big-button"
              disabled={!!progress || usedUp}
              onClick={() => download({ name: info.name, size: info.size })}
            >
              {t('download')}
            </button>
          </div>
        ) : (
          <p class="warning">{t('linkNoDownload')}</p>
        )}
      </div>
    );
  } else {
    const { content } = state;
    body = (
      <div class="shared-folder">
        <h2>
          <Icon name="folder" /> {content.folder.name}
        </h2>
        <p>
          {t('folderContents', { count: content.totalFiles, size: content.totalSizeReadable })}
          {' · '}
          {content.expiresAt ? `${t('expiresOn')} ${formatDate(content.expiresAt)}` : t('never')}
        </p>
        {content.canDownload && content.files.length > 0 && (
          <div class="download-all">
            <button type="button" class="primary" disabled={!!progress} onClick={() => downloadAll(content)}>
              {t('downloadAll')}
            </button>
          </div>
        )}
        <table class="items">
          <TableHead
            columns={[{ label: t('colName') }, { label: t('colSize'), class: 'col-size' }, { label: t('colActions'), hidden: true }]}
          />
          <tbody>
            {content.files.map((f: any) => (
              <tr key={f.hashName}>
                <td>
                  {f.path !== '/' && <span class="muted">{f.path.slice(1)}/</span>}
                  {f.name}
                </td>
                <td class="col-size">{formatSize(f.size)}</td>
                <td>
                  {content.canDownload && previewKind(f.name) && (
                    <button
                      type="button"
                      disabled={!!progress}
                      onClick={() => setViewing(folderViewing(content.files, f))}
                      aria-label={`${t('preview')} ${f.name}`}
                    >
                      {t('preview')}
                    </button>
                  )}{' '}
                  {content.canDownload && (
                    <button type="button" disabled={!!progress} onClick={() => download(f)} aria-label={`${t('download')} ${f.name}`}>
                      {t('download')}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {content.nextCursor && (
          <p class="more">
            <span class="muted">{t('listedOf', { listed: content.files.length, total: content.totalFiles })}</span>{' '}
            <button type="button" onClick={() => showMore(content)}>
              {t('moreFiles')}
            </button>
          </p>
        )}
      </div>
    );
  }

  return (
    <main id="main" class="public-page">
      <div class="public-card">
        <h1 class="brand-title">
          <img src="/favicon.svg" alt="" width={28} height={28} /> {t('linkPageTitle')}
        </h1>
        {body}
        {progress && (
          <div class="download-progress" role="status">
            <progress max={100} value={progress.percent} aria-label={progress.name} />
            <span>{retryIn === null ? t('downloading', { percent: progress.percent }) : t('linkRetrying', { seconds: retryIn })}</span>
          </div>
        )}
        {message && (
          <p class={message.kind === 'ok' ? 'success' : 'error'} role={message.kind === 'ok' ? 'status' : 'alert'}>
            {message.text}
          </p>
        )}
        <p class="hint">{t('e2eNote')}</p>
        {viewing && (
          <LinkViewer
            viewing={viewing}
            link={{ sharedHash, linkKey, password: password || undefined }}
            onSpent={() => {
              if (state.step === 'file' && state.info.remainingAccess !== null) {
                setState({ step: 'file', info: { ...state.info, remainingAccess: Math.max(0, state.info.remainingAccess - 1) } });
              }
            }}
            onDownload={(file) => {
              setViewing(null);
              void download(file);
            }}
            onClose={() => setViewing(null)}
          />
        )}
      </div>
    </main>
  );
}
