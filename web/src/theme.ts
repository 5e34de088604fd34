/** The colour theme: the system's (light or dark, as it says), or one the person chose. */
export type Theme = 'system' | 'light' | 'dark';

const THEME_KEY = 'coffre.theme';
const systemDark = window.matchMedia('(prefers-color-scheme: dark)');

export function theme(): Theme {
  const stored = localStorage.getItem(THEME_KEY);
  return stored === 'light' || stored === 'dark' ? stored : 'system';
}

/** Shows the page in `next` (styles.css reads `data-theme` on <html>) and remembers the choice. */
export function setTheme(next: Theme): void {
  if (next === 'system') localStorage.removeItem(THEME_KEY);
  else localStorage.setItem(THEME_KEY, next);
  applyTheme();
}

function applyTheme(): void {
  const chosen = theme();
  document.documentElement.dataset.theme = chosen === 'system' ? (systemDark.matches ? 'dark' : 'light') : chosen;
}

// The system's setting may change while the page is open (at nightfall, say).
systemDark.addEventListener('change', applyTheme);
