import { defineConfig } from 'vite';

// The console is built into internal/console/dist, which the Go binary
// embeds. Output names carry content hashes (cached immutably by the
// server); nothing inline, so the server's CSP can say script-src 'self'.
export default defineConfig({
  base: '/',
  publicDir: 'public',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: '../internal/console/dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    target: 'es2022',
  },
});
