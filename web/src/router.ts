// A small client-side router: the server sends the same document for every
// page path; the app draws the page the path names.
import { useEffect, useState } from 'preact/hooks';

const NAV = 'aos:navigate';

/** navigate goes to a console path without reloading. */
export function navigate(to: string, replace = false) {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  window.dispatchEvent(new Event(NAV));
  window.scrollTo(0, 0);
}

/** useLocation re-renders on navigation and returns the path and query. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const [, force] = useState(0);
  useEffect(() => {
    const f = () => force((n) => n + 1);
    window.addEventListener('popstate', f);
    window.addEventListener(NAV, f);
    return () => {
      window.removeEventListener('popstate', f);
      window.removeEventListener(NAV, f);
    };
  }, []);
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

/** linkClick makes same-origin <a> clicks client-side navigations. */
export function linkClick(e: MouseEvent) {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = (e.target as Element | null)?.closest?.('a');
  if (!a || a.target || a.hasAttribute('download')) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || url.pathname.startsWith('/api/')) return;
  e.preventDefault();
  navigate(url.pathname + url.search);
}
