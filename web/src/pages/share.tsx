import { useCallback, useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { formatDate } from '../format';
import { errorText, t } from '../i18n';
import { Alert, Confirm, CopyField, Dialog, Icon, notify } from '../ui';
import type { Item } from './items';

/** Links and per-user permissions of one file or folder. */
export function ShareDialog(props: { item: Item; onClose: () => void; onChanged: () => void }) {
  const { item } = props;
  const base = item.kind === 'file' ? '/files' : '/folders';
  const [links, setLinks] = useState<any[]>([]);
  const [users, setUsers] = useState<any[]>([]);
  const [created, setCreated] = useState<string | null>(null);
  const [error, setError] = useState('');
  const [editing, setEditing] = useState<string | null>(null);
  const [revoking, setRevoking] = useState<string | null>(null);
  // new link form
  const [password, setPassword] = useState('');
  const [expirationDays, setExpirationDays] = useState(7);
  const [maxAccess, setMaxAccess] = useState(0);
  const [canDownload, setCanDownload] = useState(true);
  const [isPublic, setIsPublic] = useState(true);
  // people form
  const [email, setEmail] = useState('');
  const [perm, setPerm] = useState({ canView: true, canDownload: true, canEdit: false });
  const [peopleError, setPeopleError] = useState('');

  const reload = useCallback(async () => {
    try {
      const [l, u] = await Promise.all([api.get(`${base}/share/${item.id}`), api.get(`${base}/share-users/${item.id}`)]);
      setLinks(l);
      setUsers(u);
    } catch (e) {
      setError(errorText(e));
    }
  }, [item.id]);
  useEffect(() => {
    reload();
  }, [reload]);

  const createLink = async (e: Event) => {
    e.preventDefault();
    setError('');
    try {
      const link = await api.post(`${base}/share/${item.id}`, {
        ...(password ? { password } : {}),
        expirationDays,
        maxAccess,
        canView: true,
        canDownload,
        canEdit: false,
        isPublic,
      });
      setCreated(link.shareLink);
      setPassword('');
      await reload();
      props.onChanged();
    } catch (err) {
      setError(errorText(err));
    }
  };

  const addPerson = async (e: Event) => {
    e.preventDefault();
    setPeopleError('');
    try {
      const user = await api.get('/users/lookup', { email: email.trim() });
      await api.post(`${base}/share-users/${item.id}`, { users: [{ userId: user.id, ...perm }] });
      setEmail('');
      await reload();
      props.onChanged();
    } catch (err) {
      setPeopleError((err as { status?: number }).status === 404 ? t('userNotFound') : errorText(err));
    }
  };

  const updatePerson = async (u: any, change: Partial<{ canView: boolean; canDownload: boolean; canEdit: boolean }>) => {
    try {
      const next = { canView: u.canView, canDownload: u.canDownload, canEdit: u.canEdit, ...change };
      await api.post(`${base}/share-users/${item.id}`, { users: [{ userId: u.userId, ...next }] });
      await reload();
    } catch (err) {
      notify(errorText(err), 'error');
    }
  };

  return (
    <Dialog title={t('shareTitle', { name: item.name })} onClose={props.onClose} wide id="share">
      <section aria-labelledby="links-title" class="share-section">
        <h3 id="links-title">{t('shareLinks')}</h3>
        <LocalAddressWarning link={created} />
        {created && (
          <div class="created-link" role="status">
            <p>{t('linkCreated')}</p>
            <CopyField id="created-link" value={created} label={t('shareLinks')} buttonLabel={t('copyLink')} />
          </div>
        )}
        {links.length === 0 ? (
          <p class="muted">{t('noLinks')}</p>
        ) : (
          <ul class="link-list">
            {links.map((l) => (
              <li key={l.sharedHash}>
                <div class="link-summary">
                  <code>…/s/{l.sharedHash.slice(0, 8)}…</code>{' '}
                  <span>{l.maxAccess ? t('usesOf', { count: l.accessCount, max: l.maxAccess }) : t('uses', { count: l.accessCount })}</span>
                  {' · '}
                  <span>{l.expiresAt ? t('expires', { date: formatDate(l.expiresAt) }) : t('never')}</span>
                  {l.hasPassword && (
                    <span>
                      {' · '}
                      <Icon name="lock" /> {t('withPassword')}
                    </span>
                  )}
                  {!l.canDownload && <span> · {t('viewOnly')}</span>}
                </div>
                <div class="link-actions">
                  <button
                    type="button"
                    onClick={() => setEditing(editing === l.sharedHash ? null : l.sharedHash)}
                    aria-expanded={editing === l.sharedHash}
                  >
                    {t('edit')}
                  </button>
                  <button type="button" class="danger-text" onClick={() => setRevoking(l.sharedHash)}>
                    {t('revoke')}
                  </button>
                </div>
                {editing === l.sharedHash && <EditLink base={base} link={l} onDone={() => (setEditing(null), reload())} />}
              </li>
            ))}
          </ul>
        )}
        <form onSubmit={createLink} class="new-link">
          <h4>{t('newLink')}</h4>
          <div class="grid2">
            <label class="field">
              <span>{t('linkPassword')}</span>
              <input
                name="link-password"
                type="password"
                autoComplete="new-password"
                value={password}
                onInput={(e) => setPassword(e.currentTarget.value)}
              />
            </label>
            <label class="field">
              <span>{t('expiresInDays')}</span>
              <input
                name="expiration-days"
                type="number"
                min={0}
                max={36500}
                value={expirationDays}
                onInput={(e) => setExpirationDays(Number(e.currentTarget.value) || 0)}
              />
            </label>
            <label class="field">
              <span>{t('maxAccess')}</span>
              <input
                name="max-access"
                type="number"
                min={0}
                value={maxAccess}
                onInput={(e) => setMaxAccess(Number(e.currentTarget.value) || 0)}
                aria-describedby="max-access-help"
              />
              <small id="max-access-help" class="hint">
                {item.kind === 'file' ? t('maxAccessHelpFile') : t('maxAccessHelpFolder')}
              </small>
            </label>
          </div>
          <label class="check">
            <input type="checkbox" checked={canDownload} onChange={(e) => setCanDownload(e.currentTarget.checked)} /> {t('allowDownload')}
          </label>
          <label class="check">
            <input type="checkbox" checked={isPublic} onChange={(e) => setIsPublic(e.currentTarget.checked)} /> {t('publicLink')}
          </label>
          <Alert text={error} />
          <button type="submit" class="primary">
            {t('createLink')}
          </button>
        </form>
      </section>
      <section aria-labelledby="people-title" class="share-section">
        <h3 id="people-title">{t('people')}</h3>
        {users.length === 0 ? (
          <p class="muted">{t('noPeople')}</p>
        ) : (
          <ul class="people-list">
            {users.map((u) => (
              <li key={u.userId}>
                <span class="person">
                  {u.name} <span class="muted">&lt;{u.email}&gt;</span>
                </span>
                <span class="perm-toggles">
                  <PermissionChecks value={u} onChange={(change) => updatePerson(u, change)} />
                </span>
                <button
                  type="button"
                  class="danger-text"
                  aria-label={`${t('remove')} ${u.email}`}
                  onClick={async () => {
                    try {
                      await api.del(`${base}/share-users/${item.id}/${u.userId}`);
                      await reload();
                    } catch (err) {
                      notify(errorText(err), 'error');
                    }
                  }}
                >
                  {t('remove')}
                </button>
              </li>
            ))}
          </ul>
        )}
        <form onSubmit={addPerson} class="add-person">
          <h4>{t('addPerson')}</h4>
          <label class="field">
            <span>{t('lookupEmail')}</span>
            <input name="person-email" type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
          </label>
          <fieldset class="perms">
            <legend>{t('permissions')}</legend>
            <PermissionChecks value={perm} onChange={(change) => setPerm({ ...perm, ...change })} />
          </fieldset>
          <Alert text={peopleError} />
          <button type="submit">{t('add')}</button>
        </form>
      </section>
      {revoking && (
        <Confirm
          message={t('confirmRevoke')}
          confirmLabel={t('revoke')}
          danger
          onCancel={() => setRevoking(null)}
          onConfirm={async () => {
            const hash = revoking;
            setRevoking(null);
            try {
              await api.del(`${base}/revoke/${hash}`);
              await reload();
            } catch (err) {
              notify(errorText(err), 'error');
            }
          }}
        />
      )}
    </Dialog>
  );
}

function EditLink(props: { base: string; link: any; onDone: () => void }) {
  const { link } = props;
  const daysLeft = link.expiresAt ? Math.max(1, Math.ceil((Date.parse(link.expiresAt) - Date.now()) / 86_400_000)) : 0;
  const [expirationDays, setExpirationDays] = useState(daysLeft);
  const [maxAccess, setMaxAccess] = useState<number>(link.maxAccess);
  const [canDownload, setCanDownload] = useState<boolean>(link.canDownload);
  const [password, setPassword] = useState('');
  const [removePassword, setRemovePassword] = useState(false);
  const [error, setError] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      await api.patch(`${props.base}/share/${link.sharedHash}`, {
        expirationDays,
        maxAccess,
        canDownload,
        ...(removePassword ? { password: '' } : password ? { password } : {}),
      });
      props.onDone();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <form onSubmit={submit} class="edit-link">
      <div class="grid2">
        <label class="field">
          <span>{t('expiresInDays')}</span>
          <input type="number" min={0} value={expirationDays} onInput={(e) => setExpirationDays(Number(e.currentTarget.value) || 0)} />
        </label>
        <label class="field">
          <span>{t('maxAccess')}</span>
          <input type="number" min={0} value={maxAccess} onInput={(e) => setMaxAccess(Number(e.currentTarget.value) || 0)} />
        </label>
        <label class="field">
          <span>{t('linkPassword')}</span>
          <input
            type="password"
            autoComplete="new-password"
            value={password}
            disabled={removePassword}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </label>
      </div>
      <label class="check">
        <input type="checkbox" checked={canDownload} onChange={(e) => setCanDownload(e.currentTarget.checked)} /> {t('allowDownload')}
      </label>
      {link.hasPassword && (
        <label class="check">
          <input type="checkbox" checked={removePassword} onChange={(e) => setRemovePassword(e.currentTarget.checked)} /> {t('remove')} (
          {t('withPassword')})
        </label>
      )}
      <Alert text={error} />
      <button type="submit" class="primary">
        {t('save')}
      </button>
    </form>
  );
}

type Permission = { canView: boolean; canDownload: boolean; canEdit: boolean };
const PERMISSION_LABELS = { canView: 'allowView', canDownload: 'allowDownload', canEdit: 'allowEdit' } as const;

/** The three permission checkboxes of per-user sharing. */
function PermissionChecks(props: { value: Permission; onChange: (change: Partial<Permission>) => void }) {
  return (
    <>
      {(['canView', 'canDownload', 'canEdit'] as const).map((p) => (
        <label class="check" key={p}>
          <input type="checkbox" name={p} checked={props.value[p]} onChange={(e) => props.onChange({ [p]: e.currentTarget.checked })} />{' '}
          {t(PERMISSION_LABELS[p])}
        </label>
      ))}
    </>
  );
}

/** Whether a host name reaches only the machine it is typed on. */
function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost') || /^127\./.test(hostname) || hostname === '[::1]';
}

/**
 * Says so when links start with an address only this computer can open: the new link's, or the
 * page's before one is made (the server builds links from the address it is reached by, unless
 * its administrator set COFFRE_PUBLIC_URL).
 */
function LocalAddressWarning(props: { link: string | null }) {
  const url = new URL(props.link ?? location.href);
  if (!isLoopback(url.hostname)) return null;
  return (
    <p class="warning" data-testid="local-address-warning">
      {t('localAddressWarning', { origin: url.origin })}
    </p>
  );
}
