// The console's service worker caches the app shell only: the HTML
// document and the content-hashed assets, so the console opens (and says
// it is offline) without the network. It never touches /api/: API answers
// and the events socket always go to the server, and nothing an API call
// returned is ever stored.
const SHELL = 'aos-shell-v1';
const PAGES = new Set(['/home/', '/missions/', '/mission/', '/approvals/', '/login/', '/setup/', '/projects/', '/policy/', '/spend/', '/system/', '/settings/']);

self.addEventListener('install', (e) => {
  e.waitUntil(caches.open(SHELL).then((c) => c.addAll(['/home/', '/icon.svg'])).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (e) => {
  e.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== SHELL).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener('fetch', (e) => {
  const req = e.request;
  const url = new URL(req.url);
  if (req.method !== 'GET' || url.origin !== self.location.origin || url.pathname.startsWith('/api/')) return;
  if (req.mode === 'navigate' && PAGES.has(url.pathname)) {
    // Network first, so a new console is used at once; the cached
    // document (every page is the same one) when offline.
    e.respondWith(
      fetch(req)
        .then((resp) => {
          if (resp.ok) {
            const copy = resp.clone();
            caches.open(SHELL).then((c) => c.put('/home/', copy));
          }
          return resp;
        })
        .catch(() => caches.match('/home/').then((r) => r || Response.error())),
    );
    return;
  }
  if (url.pathname.startsWith('/assets/')) {
    // Content-hashed: a cached copy is always right.
    e.respondWith(
      caches.match(req).then(
        (hit) =>
          hit ||
          fetch(req).then((resp) => {
            if (resp.ok) {
              const copy = resp.clone();
              caches.open(SHELL).then((c) => c.put(req, copy));
            }
            return resp;
          }),
      ),
    );
  }
});
