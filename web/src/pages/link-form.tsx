import { useState } from 'preact/hooks';
import { errorText, t } from '../i18n';
import { Alert } from '../ui';

/** What the link form edits; `expiresOn` is a local date (YYYY-MM-DD), '' for never. */
export interface LinkChoices {
  expiresOn: string;
  /** 0: unlimited. */
  maxAccess: number;
  password: string;
  removePassword: boolean;
  canDownload: boolean;
  isPublic: boolean;
}

const DAY_MS = 86_400_000;

/** A local date `days` from today, as a date input holds it. */
export function dateInDays(days: number, from = new Date()): string {
  const date = new Date(from.getFullYear(), from.getMonth(), from.getDate() + days);
  return `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`;
}

/** The API's `expirationDays` (from now) for a chosen local date; 0 (never) for none. */
export function daysUntil(expiresOn: string, from = new Date()): number {
  if (!expiresOn) return 0;
  const [year, month, day] = expiresOn.split('-').map(Number);
  const today = Date.UTC(from.getFullYear(), from.getMonth(), from.getDate());
  return Math.max(1, Math.round((Date.UTC(year, month - 1, day) - today) / DAY_MS));
}

/** A new link's defaults: a week, unlimited, no password, downloads allowed, no sign-in needed. */
export function newLinkChoices(): LinkChoices {
  return { expiresOn: dateInDays(7), maxAccess: 0, password: '', removePassword: false, canDownload: true, isPublic: true };
}

/** An existing link's settings as the form shows them. */
export function choicesOf(link: { expiresAt: string | null; maxAccess: number; canDownload: boolean; isPublic: boolean }): LinkChoices {
  const expiresOn = link.expiresAt ? dateInDays(0, new Date(link.expiresAt)) : '';
  return {
    expiresOn,
    maxAccess: link.maxAccess,
    password: '',
    removePassword: false,
    canDownload: link.canDownload,
    isPublic: link.isPublic,
  };
}

/** A password a person can read out and type: 16 characters without look-alikes (about 90 bits). */
export function generatedPassword(): string {
  const alphabet = 'abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  const picks = crypto.getRandomValues(new Uint32Array(16));
  return Array.from(picks, (n) => alphabet[n % alphabet.length]).join('');
}

/**
 * The settings of a link, the same fields in the same order for a new link and an existing one:
 * expiry date or never, access limit or unlimited, password (typed or generated), downloads.
 * `hasPassword`: the link has one already (the field then changes it, or it can be removed).
 */
export function LinkForm(props: {
  id: string;
  initial: LinkChoices;
  kind: 'file' | 'folder';
  isNew: boolean;
  hasPassword?: boolean;
  submitLabel: string;
  onSubmit: (choices: LinkChoices) => Promise<void>;
}) {
  const { id } = props;
  const [choices, setChoices] = useState(props.initial);
  const [showPassword, setShowPassword] = useState(false);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const change = (next: Partial<LinkChoices>) => setChoices({ ...choices, ...next });

  const submit = async (e: Event) => {
    e.preventDefault();
    setError('');
    setBusy(true);
    try {
      await props.onSubmit(choices);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} class={props.isNew ? 'link-form new-link' : 'link-form edit-link'}>
      <div class="grid2">
        <fieldset class="link-field">
          <legend>{t('linkExpiry')}</legend>
          <label class="check">
            <input
              type="checkbox"
              name="no-expiry"
              checked={!choices.expiresOn}
              onChange={(e) => change({ expiresOn: e.currentTarget.checked ? '' : dateInDays(7) })}
            />{' '}
            {t('noExpiryOption')}
          </label>
          {choices.expiresOn && (
            <label class="field">
              <span>{t('expiryDate')}</span>
              <input
                id={`${id}-expiry`}
                name="expiry-date"
                type="date"
                required
                min={dateInDays(1)}
                value={choices.expiresOn}
                onInput={(e) => change({ expiresOn: e.currentTarget.value })}
              />
            </label>
          )}
        </fieldset>
        <fieldset class="link-field">
          <legend>{t('maxAccess')}</legend>
          <label class="check">
            <input
              type="checkbox"
              name="unlimited"
              checked={choices.maxAccess === 0}
              onChange={(e) => change({ maxAccess: e.currentTarget.checked ? 0 : 10 })}
            />{' '}
            {t('unlimitedAccess')}
          </label>
          {choices.maxAccess > 0 && (
            <label class="field">
              <span>{props.kind === 'file' ? t('maxAccessHelpFile') : t('maxAccessHelpFolder')}</span>
              <input
                name="max-access"
                type="number"
                required
                min={1}
                max={1_000_000_000}
                value={choices.maxAccess}
                onInput={(e) => change({ maxAccess: Math.max(1, Number(e.currentTarget.value) || 1) })}
              />
            </label>
          )}
        </fieldset>
      </div>
      <PasswordChoice
        id={id}
        choices={choices}
        change={change}
        hasPassword={props.hasPassword}
        show={showPassword}
        setShow={setShowPassword}
      />
      <label class="check">
        <input
          type="checkbox"
          name="can-download"
          checked={choices.canDownload}
          onChange={(e) => change({ canDownload: e.currentTarget.checked })}
        />{' '}
        {t('allowDownload')}
      </label>
      {props.isNew && (
        <label class="check">
          <input
            type="checkbox"
            name="is-public"
            checked={choices.isPublic}
            onChange={(e) => change({ isPublic: e.currentTarget.checked })}
          />{' '}
          {t('publicLink')}
        </label>
      )}
      <Alert text={error} />
      <button type="submit" class="primary" disabled={busy}>
        {props.submitLabel}
      </button>
    </form>
  );
}

/** The password field with its generator; for a link that has one, its removal. */
function PasswordChoice(props: {
  id: string;
  choices: LinkChoices;
  change: (next: Partial<LinkChoices>) => void;
  hasPassword?: boolean;
  show: boolean;
  setShow: (show: boolean) => void;
}) {
  const { choices, change } = props;
  const hintId = `${props.id}-password-hint`;
  return (
    <fieldset class="link-field">
      <legend>{t('linkPassword')}</legend>
      <div class="password-row">
        <input
          id={`${props.id}-password`}
          name="link-password"
          type={props.show ? 'text' : 'password'}
          autoComplete="new-password"
          aria-label={t('linkPassword')}
          aria-describedby={props.hasPassword ? hintId : undefined}
          value={choices.password}
          disabled={choices.removePassword}
          onInput={(e) => change({ password: e.currentTarget.value })}
        />
        <button type="button" onClick={() => props.setShow(!props.show)} aria-pressed={props.show}>
          {t('showPassword')}
        </button>
        <button
          type="button"
          disabled={choices.removePassword}
          onClick={() => {
            change({ password: generatedPassword() });
            props.setShow(true);
          }}
        >
          {t('generatePassword')}
        </button>
      </div>
      {props.hasPassword && (
        <>
          <small id={hintId} class="hint">
            {t('keepPasswordHint')}
          </small>
          <label class="check">
            <input
              type="checkbox"
              name="remove-password"
              checked={choices.removePassword}
              onChange={(e) => change({ removePassword: e.currentTarget.checked, password: '' })}
            />{' '}
            {t('removePassword')}
          </label>
        </>
      )}
    </fieldset>
  );
}
