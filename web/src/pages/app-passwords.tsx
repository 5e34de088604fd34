import { useEffect, useState } from 'preact/hooks';
import { useServerAddresses } from '../addresses';
import { api } from '../api';
import { formatDate } from '../format';
import { errorText, t } from '../i18n';
import { Alert, Confirm, CopyField, TableHead, notify, useLang } from '../ui';

/** A personal access token as `GET /api/auth/tokens` lists it (never the token itself). */
interface AppPassword {
  id: string;
  name: string;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
}

/** The new app password, shown this once, with what a WebDAV client asks for beside it. */
function CreatedPassword(props: { token: string; email: string }) {
  const { webdav } = useServerAddresses();
  return (
    <div class="created-link app-password-created" role="status">
      <p>{t('appPasswordCreated')}</p>
      <CopyField id="created-app-password" value={props.token} label={t('appPasswords')} buttonLabel={t('copyAppPassword')} />
      <dl class="webdav-settings">
        <dt>{t('webdavAddress')}</dt>
        <dd>
          <code id="webdav-address">{webdav}</code>
        </dd>
        <dt>{t('webdavUser')}</dt>
        <dd>
          <code id="webdav-user">{props.email}</code>
        </dd>
      </dl>
    </div>
  );
}

/** The form that creates an app password: a name and an optional lifetime in days. */
function NewPasswordForm(props: { onCreated: (created: { id: string; token: string }) => void }) {
  const [name, setName] = useState('');
  const [days, setDays] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!name.trim()) return;
    setBusy(true);
    setError('');
    try {
      const created = await api.post<{ id: string; token: string }>('/auth/tokens', {
        name: name.trim(),
        ...(days ? { expiresInDays: Number(days) } : {}),
      });
      setName('');
      setDays('');
      props.onCreated(created);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} class="new-app-password">
      <div class="grid2">
        <label class="field">
          <span>{t('appPasswordName')}</span>
          <input name="name" value={name} onInput={(e) => setName(e.currentTarget.value)} required maxLength={100} autoComplete="off" />
        </label>
        <label class="field">
          <span>{t('appPasswordExpiry')}</span>
          <input name="expires-in-days" type="number" min={1} max={3650} value={days} onInput={(e) => setDays(e.currentTarget.value)} />
        </label>
      </div>
      <Alert text={error} />
      <button type="submit" class="primary" disabled={busy}>
        {t('createAppPassword')}
      </button>
    </form>
  );
}

/** App passwords (personal access tokens): create one, shown once; list and revoke them. */
export function AppPasswordsPage(props: { email: string }) {
  useLang();
  const [list, setList] = useState<AppPassword[] | null>(null);
  const [created, setCreated] = useState<{ id: string; token: string } | null>(null);
  const [revoking, setRevoking] = useState<AppPassword | null>(null);
  const load = async () => {
    try {
      setList(await api.get<AppPassword[]>('/auth/tokens'));
    } catch (e) {
      notify(errorText(e), 'error');
    }
  };
  useEffect(() => {
    load();
  }, []);
  const revoke = async (item: AppPassword) => {
    // The password shown once goes with its revocation.
    if (created?.id === item.id) setCreated(null);
    try {
      await api.del(`/auth/tokens/${item.id}`);
    } catch (e) {
      notify(errorText(e), 'error');
    }
    await load();
  };
  return (
    <div class="app-passwords-page">
      <div class="page-head">
        <h1>{t('appPasswords')}</h1>
      </div>
      <p class="muted">{t('appPasswordsIntro')}</p>
      {created && <CreatedPassword token={created.token} email={props.email} />}
      <NewPasswordForm
        onCreated={(next) => {
          setCreated(next);
          load();
        }}
      />
      {!list ? (
        <p>{t('loading')}</p>
      ) : list.length === 0 ? (
        <p class="empty">{t('noAppPasswords')}</p>
      ) : (
        <table class="items">
          <TableHead
            columns={[
              { label: t('colName') },
              { label: t('created'), class: 'col-createdAt' },
              { label: t('lastUsed') },
              { label: t('expiry') },
              { label: t('colActions'), hidden: true },
            ]}
          />
          <tbody>
            {list.map((item) => (
              <tr key={item.id} data-id={item.id} data-name={item.name}>
                <td>{item.name}</td>
                <td class="col-createdAt">{formatDate(item.createdAt)}</td>
                <td>{item.lastUsedAt ? formatDate(item.lastUsedAt) : t('notYet')}</td>
                <td>{item.expiresAt ? formatDate(item.expiresAt) : t('noExpiry')}</td>
                <td class="row-buttons">
                  <button type="button" class="danger-text" onClick={() => setRevoking(item)}>
                    {t('revoke')}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {revoking && (
        <Confirm
          message={t('confirmRevokeAppPassword', { name: revoking.name })}
          confirmLabel={t('revoke')}
          danger
          onCancel={() => setRevoking(null)}
          onConfirm={() => {
            const item = revoking;
            setRevoking(null);
            revoke(item);
          }}
        />
      )}
    </div>
  );
}
