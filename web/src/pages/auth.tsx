import { useEffect, useState } from 'preact/hooks';
import { call, setToken } from '../api';
import { errorText, t } from '../i18n';
import { Link, navigate, Alert } from '../ui';
import { AuthCard, NameField, NewPasswordField } from './account-fields';

/** Sign-in and sign-up; sign-up is offered only while the registration policy accepts one. */
export function AuthPage(props: { mode: 'login' | 'signup'; onSignedIn: () => void }) {
  const [registration, setRegistration] = useState<{ open: boolean } | null>(null);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [name, setName] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const signup = props.mode === 'signup';

  useEffect(() => {
    call('GET', '/auth/registration', { anonymous: true }).then(setRegistration, () => setRegistration({ open: false }));
  }, []);
  useEffect(() => setError(''), [props.mode]);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      const session = signup
        ? await call('POST', '/auth/register', { body: { email, password, name }, anonymous: true })
        : await call('POST', '/auth/login', { body: { email, password }, anonymous: true });
      setToken(session.accessToken);
      props.onSignedIn();
      const back = new URLSearchParams(location.search).get('next');
      navigate(back && back.startsWith('/') && !back.startsWith('//') ? back : '/files', true);
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  };

  const closed = signup && registration && !registration.open;
  return (
    <AuthCard title={signup ? t('signUp') : t('signIn')}>
      {closed ? (
        <p class="error" role="alert">
          {t('registrationClosed')}
        </p>
      ) : (
        <form onSubmit={submit} aria-busy={busy}>
          {signup && <NameField value={name} onInput={setName} />}
          <label class="field">
            <span>{t('email')}</span>
            <input name="email" type="email" autoComplete="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
          </label>
          {signup ? (
            <NewPasswordField label={t('password')} value={password} onInput={setPassword} />
          ) : (
            <label class="field">
              <span>{t('password')}</span>
              <input
                name="password"
                type="password"
                autoComplete="current-password"
                required
                value={password}
                onInput={(e) => setPassword(e.currentTarget.value)}
              />
            </label>
          )}
          <Alert text={error} />
          <button type="submit" class="primary wide" disabled={busy}>
            {busy ? t('working') : signup ? t('signUp') : t('signIn')}
          </button>
        </form>
      )}
      <p class="switch">
        {signup ? (
          <>
            {t('haveAccount')} <Link href="/login">{t('signIn')}</Link>
          </>
        ) : (
          registration?.open && (
            <>
              {t('noAccount')} <Link href="/signup">{t('signUp')}</Link>
            </>
          )
        )}
      </p>
    </AuthCard>
  );
}
