package metrics

import (
	"net"
	"net/http"
	"net/netip"
)

// forwardHeaders mark a request a proxy passed on: its TCP peer is the
// proxy, which may well be on loopback, not the client.
var forwardHeaders = []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Real-Ip"}

// LocalRequest reports whether r comes straight from this machine: its TCP
// peer is a loopback address and it carries no proxy forwarding header. A
// reverse proxy on the same host forwarding a remote client's request is
// therefore not local.
func LocalRequest(r *http.Request) bool {
	for _, h := range forwardHeaders {
		if _, ok := r.Header[h]; ok {
			return false
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// LocalOnly serves h to local requests (LocalRequest) and answers 403 to
// any other. A worker's metrics endpoint uses it.
func LocalOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !LocalRequest(r) {
			http.Error(w, "metrics are served to this machine's loopback only", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}
