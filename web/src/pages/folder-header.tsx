import { useRef } from 'preact/hooks';
import { t } from '../i18n';
import { Link } from '../ui';
import type { FolderAccess } from './folder-listing';
import { startUploads } from './widgets';

/** Above the file list: the folder's path, who shared it, and the folder's own actions (new folder, upload, share). */
export function FolderHeader(props: {
  folder: any;
  crumbs: { id: string; name: string }[];
  /** What the bucket's root folder is called: "My files", or the bucket's name when there are several. */
  rootLabel: string;
  /** Whether the folder's full path (with its bucket and datahub) helps: only with several buckets. */
  showPath: boolean;
  /** The names of the files listed, which an upload of the same name turns into a new version. */
  fileNames: () => ReadonlySet<string>;
  access: FolderAccess;
  onNewFolder: () => void;
  onShare: () => void;
}) {
  const fileInput = useRef<HTMLInputElement>(null);
  return (
    <>
      {/* The breadcrumb shows where the folder is; the heading names the page for screen readers' heading navigation. */}
      <h1 class="visually-hidden">{props.folder.isRoot ? props.rootLabel : props.folder.name}</h1>
      <nav aria-label={t('breadcrumbs')} class="breadcrumbs">
        <ol>
          {!props.access.isOwner && (
            <li>
              <Link href="/shared">{t('sharedWithMe')}</Link>
            </li>
          )}
          {props.crumbs.map((c, i) => (
            <li key={c.id}>
              {i === props.crumbs.length - 1 ? (
                <span aria-current="page">{c.name === '/' ? props.rootLabel : c.name}</span>
              ) : (
                <Link href={`/files/${c.id}`}>{c.name === '/' ? props.rootLabel : c.name}</Link>
              )}
            </li>
          ))}
        </ol>
        {props.showPath && (
          <span class="display-path" title={props.folder.locationLabel}>
            {props.folder.displayPath}
          </span>
        )}
      </nav>
      {props.folder.ownerFolder && <p class="shared-note">{t('sharedBy', { name: props.folder.ownerFolder.name })}</p>}
      {!props.access.canEdit && <p class="muted read-only-note">{t(props.access.canDownload ? 'viewDownloadOnly' : 'viewOnlyFolder')}</p>}
      <div class="toolbar" role="toolbar" aria-label={t('colActions')}>
        {props.access.canEdit && (
          <>
            <button type="button" class="primary" onClick={props.onNewFolder}>
              + {t('newFolder')}
            </button>
            <button type="button" onClick={() => fileInput.current?.click()}>
              ⇪ {t('upload')}
            </button>
            <input
              ref={fileInput}
              type="file"
              multiple
              class="visually-hidden"
              aria-label={t('upload')}
              tabIndex={-1}
              onChange={(e) => {
                const list = Array.from(e.currentTarget.files ?? []);
                e.currentTarget.value = '';
                if (list.length) startUploads(props.folder.id, list, props.fileNames());
              }}
            />
          </>
        )}
        {!props.folder.isRoot && props.access.isOwner && (
          <button type="button" onClick={props.onShare}>
            {t('share')}
          </button>
        )}
      </div>
    </>
  );
}
