import { render } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, getToken, setToken, whenSignedOut } from './api';
import { lang, setLang, t, type Lang } from './i18n';
import { DrawerPanel, MenuButton, useDrawer } from './drawer';
import { AppPasswordsPage } from './pages/app-passwords';
import { AuthPage } from './pages/auth';
import { FolderPage } from './pages/files';
import { InvitePage } from './pages/invite';
import { PublicLinkPage } from './pages/public';
import { SharedWithMePage } from './pages/shared';
import { TrashPage } from './pages/trash';
import { UsersPage } from './pages/users';
import { DownloadPanel } from './pages/downloads';
import { SearchBox } from './search-box';
import { StorageBar, UploadPanel } from './pages/widgets';
import { Link, Notices, navigate, useLang, usePath } from './ui';
import { setTheme, theme, type Theme } from './theme';
import { forgetUnfinishedUploads } from './upload';
import './styles.css';
import './phone.css';

export interface Me {
  id: string;
  email: string;
  name: string;
  defaultBucketId: string | null;
  defaultDatahubId: string | null;
  isAdmin: boolean;
}
export interface BucketInfo {
  id: string;
  name: string;
  datahubId: string;
  rootFolderId: string;
  isDefault: boolean;
}
export interface DatahubInfo {
  id: string;
  name: string;
  locationLabel: string;
  buckets: BucketInfo[];
}

const BUCKET_KEY = 'coffre.bucket';

function LanguageSwitcher() {
  useLang();
  return (
    <label class="lang-switch">
      <span class="visually-hidden">{t('language')}</span>
      <select value={lang()} onChange={(e) => setLang(e.currentTarget.value as Lang)} aria-label={t('language')}>
        <option value="en">English</option>
        <option value="fr">Français</option>
      </select>
    </label>
  );
}

function ThemeSwitcher() {
  useLang();
  const [current, setCurrent] = useState<Theme>(theme);
  return (
    <label class="theme-switch">
      <span class="visually-hidden">{t('theme')}</span>
      <select
        value={current}
        aria-label={t('theme')}
        onChange={(e) => {
          const next = e.currentTarget.value as Theme;
          setTheme(next);
          setCurrent(next);
        }}
      >
        <option value="system">{t('themeSystem')}</option>
        <option value="light">{t('themeLight')}</option>
        <option value="dark">{t('themeDark')}</option>
      </select>
    </label>
  );
}

/**
 * The switches of every page: language and theme. Signed out, they stand in a <header> of their
 * own, so that every part of the page is in a landmark.
 */
function Preferences() {
  return (
    <>
      <LanguageSwitcher />
      <ThemeSwitcher />
    </>
  );
}

/**
 * The datahub and bucket selectors, the switches, who is signed in and the sign-out button: in the
 * topbar on a wide window, in the navigation drawer on a phone.
 */
function ShellTools(props: {
  datahubs: DatahubInfo[];
  hub: DatahubInfo | null;
  bucket: BucketInfo | null;
  chooseBucket: (bucketId: string) => void;
  me: Me | null;
  signOut: () => void;
}) {
  const { datahubs, hub, bucket, chooseBucket, me, signOut } = props;
  return (
    <>
      {/* Chosen only when there is a choice: one datahub of one bucket stays out of the way. */}
      <div class="switcher">
        {datahubs.length > 1 && (
          <label>
            <span class="visually-hidden">{t('datahub')}</span>
            <select
              aria-label={t('datahub')}
              value={hub?.id ?? ''}
              onChange={(e) => {
                const h = datahubs.find((x) => x.id === e.currentTarget.value);
                if (h?.buckets[0]) chooseBucket(h.buckets[0].id);
              }}
            >
              {datahubs.map((h) => (
                <option key={h.id} value={h.id}>
                  {h.name} · {h.locationLabel}
                </option>
              ))}
            </select>
          </label>
        )}
        {(hub?.buckets.length ?? 0) > 1 && (
          <label>
            <span class="visually-hidden">{t('bucket')}</span>
            <select aria-label={t('bucket')} value={bucket?.id ?? ''} onChange={(e) => chooseBucket(e.currentTarget.value)}>
              {(hub?.buckets ?? []).map((b) => (
                <option key={b.id} value={b.id}>
                  {b.name}
                </option>
              ))}
            </select>
          </label>
        )}
      </div>
      <div class="topbar-end">
        <Preferences />
        {me && (
          <span class="user" title={me.email}>
            {me.name}
          </span>
        )}
        <button type="button" onClick={signOut}>
          {t('signOut')}
        </button>
      </div>
    </>
  );
}

/** The signed-in application: header, navigation, storage bar, and the page of the path. */
function Shell(props: { path: string; onSignedOut: () => void }) {
  useLang();
  const [me, setMe] = useState<Me | null>(null);
  const [datahubs, setDatahubs] = useState<DatahubInfo[]>([]);
  const [bucketId, setBucketIdState] = useState<string | null>(() => localStorage.getItem(BUCKET_KEY));
  const [storageTick, setStorageTick] = useState(0);
  // The folder shown is someone else's: the navigation highlights "Shared with me".
  const [inShared, setInShared] = useState(false);
  const refreshStorage = useCallback(() => setStorageTick((n) => n + 1), []);

  const loadHubs = useCallback(async () => {
    const page = await api.get('/datahub/list', { limit: 1000 });
    setDatahubs(page.data);
    return page.data as DatahubInfo[];
  }, []);

  useEffect(() => {
    (async () => {
      const user = await api.get<Me>('/auth/me');
      setMe(user);
      const hubs = await loadHubs();
      const all = hubs.flatMap((h) => h.buckets);
      setBucketIdState((current) => (current && all.some((b) => b.id === current) ? current : user.defaultBucketId));
    })().catch(() => {});
  }, []);

  const buckets = datahubs.flatMap((h) => h.buckets);
  const bucket = buckets.find((b) => b.id === bucketId) ?? null;
  const hub = datahubs.find((h) => h.id === bucket?.datahubId) ?? null;
  const setBucketId = (id: string) => {
    localStorage.setItem(BUCKET_KEY, id);
    setBucketIdState(id);
  };
  const chooseBucket = (id: string) => {
    setBucketId(id);
    const b = buckets.find((x) => x.id === id);
    if (b) navigate(`/files/${b.rootFolderId}`);
  };

  const signOut = async () => {
    try {
      await api.post('/auth/logout');
    } catch {
      // the token is dropped anyway
    }
    setToken(null);
    forgetUnfinishedUploads();
    props.onSignedOut();
    navigate('/login', true);
  };

  const path = props.path;
  const drawer = useDrawer(path);
  const tools = <ShellTools datahubs={datahubs} hub={hub} bucket={bucket} chooseBucket={chooseBucket} me={me} signOut={signOut} />;
  let page;
  let section: 'files' | 'shared' | 'trash' | 'app-passwords' | 'users' = 'files';
  const folderMatch = /^\/files\/(fld_[A-Za-z0-9]+)$/.exec(path);
  if (folderMatch) {
    if (inShared) section = 'shared';
    page = (
      <FolderPage
        key={folderMatch[1]}
        folderId={folderMatch[1]}
        buckets={buckets}
        onBucketSeen={(id) => buckets.some((b) => b.id === id) && id !== bucketId && setBucketId(id)}
        onSharedSeen={setInShared}
        onChanged={refreshStorage}
      />
    );
  } else if (path === '/shared') {
    section = 'shared';
    page = <SharedWithMePage />;
  } else if (path === '/trash') {
    section = 'trash';
    page = bucket ? <TrashPage bucket={bucket} onChanged={refreshStorage} /> : <p>{t('loading')}</p>;
  } else if (path === '/app-passwords') {
    section = 'app-passwords';
    page = <AppPasswordsPage email={me?.email ?? ''} />;
  } else if (path === '/users' && me?.isAdmin) {
    section = 'users';
    page = <UsersPage selfId={me.id} />;
  } else if (path === '/' || path === '/files' || path === '/login' || path === '/signup') {
    if (bucket) queueMicrotask(() => navigate(`/files/${bucket.rootFolderId}`, true));
    page = <p class="loading">{t('loading')}</p>;
  } else {
    page = (
      <div class="empty">
        <p>{t('notFound')}</p>
        <Link href="/files">{t('goHome')}</Link>
      </div>
    );
  }

  return (
    <div class="shell">
      <a class="skip" href="#main">
        {t('skipToContent')}
      </a>
      <header class="topbar">
        <MenuButton drawer={drawer} />
        <Link href="/files" class="brand">
          <img src="/favicon.svg" alt="" width={24} height={24} /> <span>{t('appName')}</span>
        </Link>
        <SearchBox />
        {!drawer.narrow && tools}
      </header>
      <DrawerPanel drawer={drawer}>
        <nav class="sidebar" aria-label={t('appName')}>
          <ul>
            <li>
              <Link href={bucket ? `/files/${bucket.rootFolderId}` : '/files'} aria-current={section === 'files' ? 'page' : undefined}>
                {t('files')}
              </Link>
            </li>
            <li>
              <Link href="/shared" aria-current={section === 'shared' ? 'page' : undefined}>
                {t('sharedWithMe')}
              </Link>
            </li>
            <li>
              <Link href="/trash" aria-current={section === 'trash' ? 'page' : undefined}>
                {t('trash')}
              </Link>
            </li>
            <li>
              <Link href="/app-passwords" aria-current={section === 'app-passwords' ? 'page' : undefined}>
                {t('appPasswords')}
              </Link>
            </li>
            {me?.isAdmin && (
              <li>
                <Link href="/users" aria-current={section === 'users' ? 'page' : undefined}>
                  {t('users')}
                </Link>
              </li>
            )}
          </ul>
          <StorageBar tick={storageTick} />
        </nav>
        {drawer.narrow && <div class="drawer-tools">{tools}</div>}
      </DrawerPanel>
      <main id="main" class="content" tabIndex={-1}>
        {page}
      </main>
      <UploadPanel onUploaded={refreshStorage} />
      <DownloadPanel />
      <Notices />
    </div>
  );
}

function App() {
  useLang();
  const path = usePath();
  const [signedIn, setSignedIn] = useState(() => !!getToken());
  useEffect(() => {
    whenSignedOut(() => {
      setSignedIn(false);
      if (!location.pathname.startsWith('/s/') && !location.pathname.startsWith('/invite/'))
        navigate(`/login?next=${encodeURIComponent(location.pathname)}`, true);
    });
  }, []);
  useEffect(() => {
    document.documentElement.lang = lang();
  });

  // An invitation link opens its own page, signed in or not: accepting it signs in as its account.
  if (path.startsWith('/invite/')) {
    return (
      <>
        <InvitePage token={path.slice('/invite/'.length)} onSignedIn={() => setSignedIn(true)} />
        <header class="public-lang">
          <Preferences />
        </header>
      </>
    );
  }
  if (path.startsWith('/s/')) {
    return (
      <>
        <PublicLinkPage sharedHash={path.slice(3)} />
        <header class="public-lang">
          <Preferences />
        </header>
      </>
    );
  }
  if (!signedIn) {
    if (path !== '/login' && path !== '/signup')
      queueMicrotask(() => navigate(path === '/' || path === '/files' ? '/login' : `/login?next=${encodeURIComponent(path)}`, true));
    return (
      <>
        <AuthPage mode={path === '/signup' ? 'signup' : 'login'} onSignedIn={() => setSignedIn(true)} />
        <header class="public-lang">
          <Preferences />
        </header>
      </>
    );
  }
  return <Shell path={path} onSignedOut={() => setSignedIn(false)} />;
}

setTheme(theme());
render(<App />, document.getElementById('app')!);
