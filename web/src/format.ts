import { lang } from './i18n';

// French writes octets: o, Ko, Mo, Go.
const UNITS = { en: ['B', 'KB', 'MB', 'GB', 'TB', 'PB'], fr: ['o', 'Ko', 'Mo', 'Go', 'To', 'Po'] };

/** 1024-based, at most two decimals, like the API's readable sizes. */
export function formatSize(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '';
  let value = bytes;
  let unit = 0;
  const units = UNITS[lang()];
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  const rounded = Math.round(value * 100) / 100;
  return `${rounded.toLocaleString(lang() === 'fr' ? 'fr-FR' : 'en-US', { maximumFractionDigits: 2 })} ${units[unit]}`;
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return d.toLocaleString(lang() === 'fr' ? 'fr-FR' : 'en-GB', { dateStyle: 'medium', timeStyle: 'short' });
}
