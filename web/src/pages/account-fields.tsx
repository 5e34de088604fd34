import type { ComponentChildren } from 'preact';
import { t } from '../i18n';

/** The card of the pages before signing in (sign-in, sign-up, invitation): the brand and a title. */
export function AuthCard(props: { title: string; children: ComponentChildren }) {
  return (
    <main id="main" class="auth">
      <div class="auth-card">
        <h1 class="brand-title">
          <img src="/favicon.svg" alt="" width={32} height={32} /> {t('appName')}
        </h1>
        <h2>{props.title}</h2>
        {props.children}
      </div>
    </main>
  );
}

/** A person's name, as they want others to see it. */
export function NameField(props: { value: string; onInput: (value: string) => void }) {
  return (
    <label class="field">
      <span>{t('name')}</span>
      <input
        name="name"
        autoComplete="name"
        required
        maxLength={100}
        value={props.value}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
    </label>
  );
}

/** A password being chosen: at least 8 characters, said under the field. */
export function NewPasswordField(props: { label: string; value: string; onInput: (value: string) => void }) {
  return (
    <label class="field">
      <span>{props.label}</span>
      <input
        name="password"
        type="password"
        autoComplete="new-password"
        required
        minLength={8}
        aria-describedby="password-hint"
        value={props.value}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
      <small id="password-hint" class="hint">
        {t('passwordHint')}
      </small>
    </label>
  );
}
