package api

import (
	"net/http"
	"time"

	"github.com/aos-run/aos/internal/auth"
)

// Session cookie names. Browsers accept a __Host- cookie only with Secure
// (so only over HTTPS), Path=/ and no Domain; over plain HTTP (a loopback
// server, say) the session cookie is named aos_sid instead, with the same
// attributes minus Secure. Both names are read.
const (
	cookieSecure = "__Host-aos_sid"
	cookiePlain  = "aos_sid"
)

// sessionCookie returns the session id the request carries, if any.
func sessionCookie(r *http.Request) string {
	for _, name := range []string{cookieSecure, cookiePlain} {
		if c, err := r.Cookie(name); err == nil && c.Value != "" {
			return c.Value
		}
	}
	return ""
}

// setSessionCookie sets the session cookie: HttpOnly, SameSite=Strict,
// Path=/, Secure (and __Host-) over HTTPS, lasting until the session's
// absolute expiry at most.
func (s *Server) setSessionCookie(w http.ResponseWriter, r *http.Request, ns auth.NewSession) {
	maxAge := ns.EndsAt.Sub(ns.CreatedAt)
	secure := isHTTPS(r, s.opts.TrustedProxies)
	name := cookiePlain
	if secure {
		name = cookieSecure
	}
	http.SetCookie(w, &http.Cookie{Name: name, Value: ns.Secret, Path: "/", HttpOnly: true, Secure: secure,
		SameSite: http.SameSiteStrictMode, MaxAge: int(maxAge / time.Second)})
}

// clearSessionCookies expires both session cookies.
func (s *Server) clearSessionCookies(w http.ResponseWriter, r *http.Request) {
	secure := isHTTPS(r, s.opts.TrustedProxies)
	for _, name := range []string{cookieSecure, cookiePlain} {
		if name == cookieSecure && !secure {
			continue // a browser would refuse it anyway
		}
		http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/", HttpOnly: true, Secure: name == cookieSecure,
			SameSite: http.SameSiteStrictMode, MaxAge: -1})
	}
}
