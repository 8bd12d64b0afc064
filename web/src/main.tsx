import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, onSessionExpired, setCsrf, type AuthStatus } from './api';
import { connState, onConn, startEvents, stopEvents, subscribe, type Conn } from './events';
import { linkClick, navigate, useLocation } from './router';
import { applyTheme, currentTheme, type Theme } from './theme';
import { Login, Setup } from './pages/auth';
import { Home } from './pages/home';
import { Missions } from './pages/missions';
import { MissionPage } from './pages/mission';
import { Approvals } from './pages/approvals';
import { SpendPage } from './pages/spend';
import { SystemPage } from './pages/system';
import { StorePage } from './pages/store';
import { AgentsPage } from './pages/agents';
import { DevicesPage } from './pages/devices';
import { SettingsPage } from './pages/settings';
import { ProjectsPage } from './pages/projects';
import { PolicyPage } from './pages/policy';
import { Palette } from './components/palette';
import { Reveals } from './components/reveal';
import { startNotifications } from './notify';

applyTheme(currentTheme());

type Auth = 'loading' | 'setup' | 'login' | 'in';

const tabs: [string, string][] = [
  ['/home/', 'Home'],
  ['/missions/', 'Missions'],
  ['/approvals/', 'Approvals'],
];
const more: [string, string][] = [
  ['/projects/', 'Projects'],
  ['/policy/', 'Policy'],
  ['/spend/', 'Spend'],
  ['/system/', 'System'],
  ['/store/', 'Store'],
  ['/agents/', 'Agents'],
  ['/devices/', 'Devices'],
  ['/settings/', 'Settings'],
];

function App() {
  const { path, query } = useLocation();
  const [auth, setAuth] = useState<Auth>('loading');
  const [error, setError] = useState('');
  const [passkeys, setPasskeys] = useState(false);

  async function refreshAuth() {
    try {
      const st = await api<AuthStatus>('GET', '/auth/status');
      setCsrf(st.csrfToken);
      setPasskeys(!!st.passkeys);
      setAuth(st.setupRequired ? 'setup' : st.authenticated ? 'in' : 'login');
    } catch (e) {
      setError(String((e as Error).message));
    }
  }
  useEffect(() => {
    onSessionExpired(() => {
      stopEvents();
      setAuth('login');
    });
    void refreshAuth();
  }, []);
  useEffect(() => {
    if (auth === 'in') startEvents();
    // Send each state to its page; keep the page the owner asked for.
    if (auth === 'setup' && path !== '/setup/') navigate('/setup/', true);
    if (auth === 'login' && path !== '/login/') navigate('/login/?next=' + encodeURIComponent(location.pathname + location.search), true);
    if (auth === 'in' && (path === '/login/' || path === '/setup/')) navigate(safeNext(query.get('next')), true);
  }, [auth, path]);

  if (error) return <main><p class="error" role="alert">{error}</p></main>;
  if (auth === 'loading') return <main aria-busy="true"><p class="empty">Loading…</p></main>;
  if (auth === 'setup') return <Setup done={() => setAuth('in')} />;
  if (auth === 'login') return <Login passkeys={passkeys} done={() => setAuth('in')} />;
  return (
    <Shell path={path} onLogout={() => void refreshAuth()}>
      {page(path, query)}
    </Shell>
  );
}

/** safeNext keeps a post-login redirect on a console page of this origin. */
function safeNext(n: string | null): string {
  return n && /^\/[a-z]+\/(\?[^\\]*)?$/.test(n) && !n.startsWith('/login/') && !n.startsWith('/setup/') ? n : '/home/';
}

function page(path: string, query: URLSearchParams) {
  switch (path) {
    case '/home/':
      return <Home />;
    case '/missions/':
      return <Missions create={query.get('new') === '1'} />;
    case '/mission/':
      return <MissionPage id={query.get('id') ?? ''} />;
    case '/approvals/':
      return <Approvals />;
    case '/projects/':
      return <ProjectsPage />;
    case '/policy/':
      return <PolicyPage />;
    case '/spend/':
      return <SpendPage />;
    case '/system/':
      return <SystemPage />;
    case '/settings/':
      return <SettingsPage />;
    case '/store/':
      return <StorePage />;
    case '/agents/':
      return <AgentsPage id={query.get('id') ?? ''} />;
    case '/devices/':
      return <DevicesPage />;
    default:
      return (
        <section>
          <h1>Not found</h1>
          <p class="empty">There is no such page. <a href="/home/">Home</a></p>
        </section>
      );
  }
}

function Shell({ path, onLogout, children }: { path: string; onLogout: () => void; children: any }) {
  const [conn, setConn] = useState<Conn>(connState());
  const [pending, setPending] = useState(0);
  const [theme, setTheme] = useState<Theme>(currentTheme());
  useEffect(() => onConn(setConn), []);
  useEffect(() => startNotifications(), []);
  useEffect(() => {
    const load = () =>
      api<unknown[]>('GET', '/waits?status=pending')
        .then((ws) => setPending(ws.length))
        .catch(() => {});
    load();
    return subscribe((e) => {
      if (e.kind === 'wait.created' || e.kind === 'wait.resolved' || e.kind === 'console.resync') load();
    });
  }, []);
  async function logout() {
    try {
      await api('POST', '/auth/logout');
    } catch {
      /* the session is gone either way */
    }
    stopEvents();
    setCsrf('');
    onLogout();
  }
  function pick(t: Theme) {
    applyTheme(t);
    setTheme(t);
  }
  return (
    <div onClick={linkClick}>
      <header class="top">
        <a class="brand" href="/home/">
          <img src="/icon.svg" alt="" width={24} height={24} />
          <span>Agent OS</span>
        </a>
        <nav class="tabs" aria-label="Main">
          {tabs.map(([href, label]) => (
            <a href={href} aria-current={path === href ? 'page' : undefined}>
              {label}
              {href === '/approvals/' && pending > 0 && <span class="badge-count" aria-label={`${pending} pending`}>{pending}</span>}
            </a>
          ))}
        </nav>
        <span class="spacer" />
        <label class="sr-only" for="theme">Theme</label>
        <select id="theme" class="small" value={theme} onChange={(e) => pick((e.target as HTMLSelectElement).value as Theme)}>
          <option value="light">Light</option>
          <option value="dark">Dark</option>
          <option value="system">System</option>
        </select>
        <button class="small" onClick={logout}>Log out</button>
      </header>
      {conn !== 'open' && conn !== 'connecting' && (
        <div class="conn" role="status">
          {conn === 'reconnecting' && 'Reconnecting to live updates…'}
          {conn === 'offline' && 'Offline. Live updates resume when the network is back.'}
          {conn === 'expired' && 'Your session has ended. Reload to log in again.'}
        </div>
      )}
      <Palette />
      <Reveals />
      <main>{children}</main>
      <footer class="more">
        <nav aria-label="More">
          {more.map(([href, label]) => (
            <a href={href} aria-current={path === href ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
      </footer>
    </div>
  );
}

render(<App />, document.getElementById('app')!);

// The app shell works offline; API answers are never cached (public/sw.js).
if ('serviceWorker' in navigator) {
  window.addEventListener('load', () => {
    navigator.serviceWorker.register('/sw.js', { scope: '/' }).catch(() => {});
  });
}
