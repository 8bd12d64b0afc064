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
// peer is a loopback address, it carries no proxy forwarding header, and
// it names a loopback host (an address or "localhost"). A reverse proxy on
// the same host forwarding a remote client's request is therefore not
// local, and neither is a browser page whose domain was rebound to
// 127.0.0.1 (its Host is that domain).
func LocalRequest(r *http.Request) bool {
	for _, h := range forwardHeaders {
		if _, ok := r.Header[h]; ok {
			return false
		}
	}
	return loopback(r.RemoteAddr, true) && loopback(r.Host, false)
}

// loopback reports whether hostport (a port is optional unless needPort)
// names a loopback address, or localhost.
func loopback(hostport string, needPort bool) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		if needPort {
			return false
		}
		host = hostport
	}
	if host == "localhost" {
		return true
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
