// Light (default), dark, or the system's choice; kept in localStorage.
export type Theme = 'light' | 'dark' | 'system';

/** currentTheme returns the chosen theme. */
export function currentTheme(): Theme {
  const t = localStorage.getItem('aos.theme');
  return t === 'dark' || t === 'system' ? t : 'light';
}

/** applyTheme sets the theme on the document and remembers it. */
export function applyTheme(t: Theme) {
  localStorage.setItem('aos.theme', t);
  const el = document.documentElement;
  if (t === 'system') el.removeAttribute('data-theme');
  else el.setAttribute('data-theme', t);
}
