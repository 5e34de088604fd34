import { useCallback, useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { useLatest } from '../latest';
import { errorText, t } from '../i18n';
import { Alert, Dialog, notify } from '../ui';
import type { Item } from './items';
import { LinksSection, type LinkSummary } from './share-links';

/** Links and per-user permissions of one file or folder. */
export function ShareDialog(props: { item: Item; onClose: () => void; onChanged: () => void }) {
  const { item } = props;
  const base = item.kind === 'file' ? '/files' : '/folders';
  const [links, setLinks] = useState<LinkSummary[]>([]);
  const [users, setUsers] = useState<any[]>([]);
  const [error, setError] = useState('');
  // people form
  const [email, setEmail] = useState('');
  const [perm, setPerm] = useState({ canView: true, canDownload: true, canEdit: false });
  const [peopleError, setPeopleError] = useState('');

  const loads = useLatest();
  const reload = useCallback(async () => {
    const latest = loads.start();
    try {
      const [l, u] = await Promise.all([api.get(`${base}/share/${item.id}`), api.get(`${base}/share-users/${item.id}`)]);
      if (!latest()) return;
      setLinks(l);
      setUsers(u);
    } catch (e) {
      if (latest()) setError(errorText(e));
    }
  }, [item.id]);
  useEffect(() => {
    reload();
  }, [reload]);

  const addPerson = async (e: Event) => {
    e.preventDefault();
    setPeopleError('');
    try {
      const user = await api.get('/users/lookup', { email: email.trim() });
      await api.post(`${base}/share-users/${item.id}`, { users: [{ userId: user.id, ...perm }] });
      notify(t('sharedWithPerson', { name: user.name }));
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
      notify(t('permissionsSaved', { name: u.name }));
      await reload();
    } catch (err) {
      notify(errorText(err), 'error');
    }
  };

  return (
    <Dialog title={t('shareTitle', { name: item.name })} onClose={props.onClose} wide id="share">
      <Alert text={error} />
      <LinksSection item={item} links={links} reload={reload} onChanged={props.onChanged} />
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
                      notify(t('personRemoved', { name: u.name }));
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
    </Dialog>
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
