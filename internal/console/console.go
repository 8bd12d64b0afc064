package console

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed all:dist
var dist embed.FS

// CSP is the Content-Security-Policy of every response the console serves:
// scripts, styles, fonts and images only from this origin (no inline script
// or eval, no remote origin), the API and the events WebSocket only on this
// origin, never framed, no <base>, forms only to this origin, no plugins.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
	"connect-src 'self'; manifest-src 'self'; worker-src 'self'; frame-ancestors 'none'; base-uri 'none'; " +
	"form-action 'self'; object-src 'none'"

// Pages are the console's routes; each is served the one HTML document, and
// the app draws the page the path names.
var pages = map[string]bool{
	"/home/": true, "/missions/": true, "/mission/": true, "/approvals/": true,
	"/login/": true, "/setup/": true, "/projects/": true, "/policy/": true,
	"/spend/": true, "/system/": true, "/settings/": true,
	"/store/": true, "/agents/": true, "/devices/": true,
}

// Handler returns the console: "/" redirects to /home/, every page path
// gets index.html (never cached), /assets/ holds the content-hashed files
// (cached for a year, immutable), and the few fixed-name files at the top
// (icons, manifest) are revalidated on every use.
func Handler() http.Handler {
	root, err := fs.Sub(dist, "dist")
	if err != nil {
		panic("console: dist missing from the binary: " + err.Error()) // a build error, not a runtime one
	}
	return &handler{root: root}
}

type handler struct{ root fs.FS }

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", CSP)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		hd.Set("Cache-Control", "no-store")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p := r.URL.Path
	switch {
	case p == "/":
		hd.Set("Cache-Control", "no-store")
		http.Redirect(w, r, "/home/", http.StatusFound)
	case pages[p]:
		hd.Set("Cache-Control", "no-cache")
		h.serveFile(w, r, "index.html")
	case pages[p+"/"]:
		hd.Set("Cache-Control", "no-store")
		u := p + "/"
		if r.URL.RawQuery != "" {
			u += "?" + r.URL.RawQuery
		}
		http.Redirect(w, r, u, http.StatusMovedPermanently)
	case strings.HasPrefix(p, "/assets/"):
		hd.Set("Cache-Control", "public, max-age=31536000, immutable")
		h.serveFile(w, r, strings.TrimPrefix(p, "/"))
	default:
		name := strings.TrimPrefix(p, "/")
		if name == "index.html" || strings.Contains(name, "/") || !fs.ValidPath(name) {
			h.notFound(w)
			return
		}
		hd.Set("Cache-Control", "no-cache")
		if strings.HasSuffix(name, ".webmanifest") {
			hd.Set("Content-Type", "application/manifest+json")
		}
		h.serveFile(w, r, name)
	}
}

// serveFile writes one embedded file; a directory or a missing file is 404.
func (h *handler) serveFile(w http.ResponseWriter, r *http.Request, name string) {
	name = path.Clean(name)
	if !fs.ValidPath(name) {
		h.notFound(w)
		return
	}
	st, err := fs.Stat(h.root, name)
	if err != nil || st.IsDir() {
		h.notFound(w)
		return
	}
	http.ServeFileFS(w, r, h.root, name)
}

func (h *handler) notFound(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	http.Error(w, "404 page not found", http.StatusNotFound)
}
