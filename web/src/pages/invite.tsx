import { useEffect, useState } from 'preact/hooks';
import { call, setToken } from '../api';
import { errorText, t } from '../i18n';
import { Alert, navigate } from '../ui';
import { AuthCard, NameField, NewPasswordField } from './account-fields';

interface InvitationInfo {
  purpose: 'join' | 'reset';
  email: string;
  expiresAt: string;
}

/**
 * The page of an invitation link (`/invite/<token>`): joining asks for a name and a password, a
 * reset for a new password; either signs in and opens the files. A used, expired or unknown link
 * says so and leads to the sign-in page.
 */
export function InvitePage(props: { token: string; onSignedIn: () => void }) {
  const [info, setInfo] = useState<InvitationInfo | null>(null);
  const [problem, setProblem] = useState('');
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    call<InvitationInfo>('GET', `/invitations/${encodeURIComponent(props.token)}`, { anonymous: true }).then(setInfo, (e) =>
      setProblem(errorText(e)),
    );
  }, [props.token]);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      const body = info?.purpose === 'join' ? { name: name.trim(), password } : { password };
      const session = await call('POST', `/invitations/${encodeURIComponent(props.token)}/accept`, { body, anonymous: true });
      setToken(session.accessToken);
      props.onSignedIn();
      navigate('/files', true);
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  };

  const join = info?.purpose === 'join';
  return (
    <AuthCard title={!info ? t('invitation') : join ? t('joinTitle') : t('newPasswordTitle')}>
      {problem ? (
        <>
          <p class="error" role="alert">
            {problem}
          </p>
          <p class="switch">
            <a href="/login">{t('signIn')}</a>
          </p>
        </>
      ) : !info ? (
        <p>{t('loading')}</p>
      ) : (
        <form onSubmit={submit} aria-busy={busy}>
          <p>{join ? t('joinIntro', { email: info.email }) : t('newPasswordIntro', { email: info.email })}</p>
          {join && <NameField value={name} onInput={setName} />}
          <input type="email" name="email" autoComplete="username" value={info.email} hidden readOnly />
          <NewPasswordField label={join ? t('password') : t('newPassword')} value={password} onInput={setPassword} />
          <Alert text={error} />
          <button type="submit" class="primary wide" disabled={busy}>
            {busy ? t('working') : join ? t('joinButton') : t('setPassword')}
          </button>
        </form>
      )}
    </AuthCard>
  );
}
