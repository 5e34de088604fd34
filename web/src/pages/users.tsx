import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { useLatest } from '../latest';
import { formatDate, formatSize } from '../format';
import { useNarrow } from '../drawer';
import { errorText, t } from '../i18n';
import type { MessageKey } from '../messages-en';
import { Alert, Confirm, CopyField, Dialog, TableHead, notify, useLang } from '../ui';

/** An account as `GET /api/admin/users` lists it. */
interface AdminUser {
  id: string;
  email: string;
  name: string;
  isAdmin: boolean;
  disabled: boolean;
  quotaBytes: number;
  customQuota: boolean;
  usedBytes: number;
  createdAt: string;
  lastActiveAt: string | null;
}

/** An invitation not used yet, or one just made (then with its link, shown once). */
interface Invitation {
  id: string;
  purpose: 'join' | 'reset';
  email: string;
  expiresAt: string;
  invitationLink?: string;
}

/** Quotas are typed in the unit sizes are shown in (1024-based "GB"). */
const GB = 1024 ** 3;

/** A link just made: shown once, with a button that copies it. */
function IssuedLink(props: { invitation: Invitation }) {
  const { invitation } = props;
  const message = invitation.purpose === 'join' ? 'invitationCreated' : 'resetLinkCreated';
  return (
    <div class="created-link" role="status">
      <p>{t(message, { email: invitation.email, date: formatDate(invitation.expiresAt) })}</p>
      <CopyField id="issued-link" value={invitation.invitationLink!} label={t('invitationLink')} buttonLabel={t('copyLink')} />
    </div>
  );
}

/** The quota field: a number of GB, or empty for the server's default. */
function QuotaField(props: { value: string; onInput: (value: string) => void; id: string }) {
  return (
    <label class="field">
      <span>{t('quotaGb')}</span>
      <input
        id={props.id}
        name="quota"
        type="number"
        min={0}
        step="any"
        value={props.value}
        placeholder={t('quotaDefault')}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
    </label>
  );
}

const quotaBytesOf = (value: string) => (value.trim() === '' ? null : Math.round(Number(value) * GB));

function InviteForm(props: { onIssued: (invitation: Invitation) => void }) {
  const [email, setEmail] = useState('');
  const [quota, setQuota] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      const quotaBytes = quotaBytesOf(quota);
      const invitation = await api.post<Invitation>('/admin/invitations', {
        email: email.trim(),
        ...(quotaBytes === null ? {} : { quotaBytes }),
      });
      setEmail('');
      setQuota('');
      props.onIssued(invitation);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} class="invite-form" aria-labelledby="invite-title">
      <h2 id="invite-title">{t('inviteTitle')}</h2>
      <div class="grid2">
        <label class="field">
          <span>{t('email')}</span>
          <input name="email" type="email" required autoComplete="off" value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </label>
        <QuotaField id="invite-quota" value={quota} onInput={setQuota} />
      </div>
      <Alert text={error} />
      <button type="submit" class="primary" disabled={busy}>
        {t('invite')}
      </button>
    </form>
  );
}

function QuotaDialog(props: { user: AdminUser; onSave: (quotaBytes: number | null) => Promise<void>; onClose: () => void }) {
  const [value, setValue] = useState(props.user.customQuota ? String(Math.round((props.user.quotaBytes / GB) * 100) / 100) : '');
  const [error, setError] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      await props.onSave(quotaBytesOf(value));
      props.onClose();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <Dialog title={t('setQuotaOf', { name: props.user.name })} onClose={props.onClose} id="quota">
      <form onSubmit={submit}>
        <QuotaField id="quota-value" value={value} onInput={setValue} />
        <Alert text={error} />
        <div class="actions">
          <button type="button" onClick={props.onClose}>
            {t('cancel')}
          </button>
          <button type="submit" class="primary">
            {t('save')}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function UserRow(props: { user: AdminUser; self: boolean; onQuota: () => void; onToggle: () => void; onReset: () => void }) {
  const { user } = props;
  const narrow = useNarrow();
  const storage = t('usedOf', { used: formatSize(user.usedBytes), quota: formatSize(user.quotaBytes) });
  return (
    <tr data-email={user.email}>
      <td>
        {user.name}
        {user.isAdmin && <span class="badge">{t('administrator')}</span>}
        <div class="muted">{user.email}</div>
        {/* On a phone the storage and status columns make way for the buttons: they are shown here. */}
        {narrow && (
          <div class="item-meta">
            {storage} · {user.disabled ? <span class="danger-text">{t('disabled')}</span> : t('active')}
          </div>
        )}
      </td>
      <td class="col-wide">{storage}</td>
      <td class="col-wide">{user.lastActiveAt ? formatDate(user.lastActiveAt) : t('notYet')}</td>
      <td class="col-wide">{user.disabled ? <span class="badge danger">{t('disabled')}</span> : t('active')}</td>
      <td class="row-buttons">
        <button type="button" onClick={props.onQuota} aria-label={t('setQuotaOf', { name: user.name })}>
          {t('quota')}
        </button>
        <button type="button" onClick={props.onReset} aria-label={t('resetPasswordOf', { name: user.name })}>
          {t('resetPassword')}
        </button>
        {!props.self && (
          <button type="button" class={user.disabled ? '' : 'danger-text'} onClick={props.onToggle}>
            {user.disabled ? t('enable') : t('disable')}
          </button>
        )}
      </td>
    </tr>
  );
}

/** Administrators: invite people, see the accounts, set quotas, disable, enable, reset passwords. */
export function UsersPage(props: { selfId: string }) {
  useLang();
  const [users, setUsers] = useState<AdminUser[] | null>(null);
  const [pending, setPending] = useState<Invitation[]>([]);
  const [issued, setIssued] = useState<Invitation | null>(null);
  const [quotaOf, setQuotaOf] = useState<AdminUser | null>(null);
  const [disabling, setDisabling] = useState<AdminUser | null>(null);
  const loads = useLatest();
  const load = async () => {
    const latest = loads.start();
    try {
      const [people, invitations] = await Promise.all([api.get<AdminUser[]>('/admin/users'), api.get<Invitation[]>('/admin/invitations')]);
      if (!latest()) return;
      setUsers(people);
      setPending(invitations);
    } catch (e) {
      if (latest()) notify(errorText(e), 'error');
    }
  };
  useEffect(() => {
    load();
  }, []);
  const update = async (user: AdminUser, changes: { quotaBytes?: number | null; disabled?: boolean }, done: MessageKey) => {
    await api.patch(`/admin/users/${user.id}`, changes);
    notify(t(done, { name: user.name }));
    await load();
  };
  const act = (work: () => Promise<void>) => work().catch((e) => notify(errorText(e), 'error'));
  const issue = (invitation: Invitation) => {
    setIssued(invitation);
    load();
  };
  return (
    <div class="users-page">
      <div class="page-head">
        <h1>{t('users')}</h1>
      </div>
      {issued && <IssuedLink invitation={issued} />}
      <InviteForm onIssued={issue} />
      {pending.length > 0 && (
        <section aria-labelledby="pending-title">
          <h2 id="pending-title">{t('pendingInvitations')}</h2>
          <ul class="link-list">
            {pending.map((p) => (
              <li key={p.id} data-email={p.email}>
                <span>{t('invitedUntil', { email: p.email, date: formatDate(p.expiresAt) })}</span>
                <button
                  type="button"
                  class="danger-text"
                  onClick={() => act(async () => (await api.del(`/admin/invitations/${p.id}`), load()))}
                >
                  {t('withdraw')}
                </button>
              </li>
            ))}
          </ul>
        </section>
      )}
      {!users ? (
        <p>{t('loading')}</p>
      ) : (
        <table class="items users">
          <TableHead
            columns={[
              { label: t('colName') },
              { label: t('storage'), class: 'col-wide' },
              { label: t('lastActive'), class: 'col-wide' },
              { label: t('status'), class: 'col-wide' },
              { label: t('colActions'), hidden: true },
            ]}
          />
          <tbody>
            {users.map((user) => (
              <UserRow
                key={user.id}
                user={user}
                self={user.id === props.selfId}
                onQuota={() => setQuotaOf(user)}
                onToggle={() => (user.disabled ? act(() => update(user, { disabled: false }, 'userEnabled')) : setDisabling(user))}
                onReset={() => act(async () => issue(await api.post<Invitation>(`/admin/users/${user.id}/password-reset`)))}
              />
            ))}
          </tbody>
        </table>
      )}
      {quotaOf && (
        <QuotaDialog user={quotaOf} onSave={(quotaBytes) => update(quotaOf, { quotaBytes }, 'saved')} onClose={() => setQuotaOf(null)} />
      )}
      {disabling && (
        <Confirm
          message={t('confirmDisable', { name: disabling.name })}
          confirmLabel={t('disable')}
          danger
          onCancel={() => setDisabling(null)}
          onConfirm={() => {
            const user = disabling;
            setDisabling(null);
            act(() => update(user, { disabled: true }, 'userDisabled'));
          }}
        />
      )}
    </div>
  );
}
