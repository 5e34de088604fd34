/** The chosen language (navigator.language, or the switcher) and its messages (messages-en.ts, messages-fr.ts). */

import { en, type MessageKey } from './messages-en';
import { fr } from './messages-fr';

export type { MessageKey };

export type Lang = 'en' | 'fr';
const DICTIONARIES: Record<Lang, Record<MessageKey, string>> = { en, fr };
const LANG_KEY = 'coffre.lang';

function initialLang(): Lang {
  try {
    const saved = localStorage.getItem(LANG_KEY);
    if (saved === 'en' || saved === 'fr') return saved;
  } catch {
    // storage unavailable
  }
  const nav = typeof navigator !== 'undefined' ? navigator.language || '' : '';
  return nav.toLowerCase().startsWith('fr') ? 'fr' : 'en';
}

let current: Lang = initialLang();
const listeners = new Set<() => void>();

export function lang(): Lang {
  return current;
}

export function setLang(next: Lang): void {
  current = next;
  try {
    localStorage.setItem(LANG_KEY, next);
  } catch {
    // storage unavailable
  }
  document.documentElement.lang = next;
  for (const l of listeners) l();
}

export function onLangChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The message in the current language, with `{name}` placeholders filled. */
export function t(key: MessageKey, vars: Record<string, string | number> = {}): string {
  const text = DICTIONARIES[current][key] ?? en[key];
  return text.replace(/\{(\w+)\}/g, (_, name: string) => (name in vars ? String(vars[name]) : `{${name}}`));
}

/** Error codes of the API shown in the user's words where the API's own message is not enough. */
export function errorText(error: unknown): string {
  const code = (error as { code?: string })?.code;
  const message = (error as { message?: string })?.message ?? String(error);
  switch (code) {
    case 'NAME_CONFLICT':
      return t('nameConflict');
    case 'QUOTA_EXCEEDED':
      return t('quotaExceeded');
    case 'PAYLOAD_TOO_LARGE':
      return t('fileTooLarge');
    case 'USER_NOT_FOUND':
      return t('userNotFound');
    case 'REGISTRATION_CLOSED':
      return t('registrationClosed');
    default:
      return message;
  }
}
