package api

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ParseTrustedProxies parses AOS_TRUSTED_PROXIES: comma-separated IP
// addresses and CIDR prefixes of the reverse proxies whose X-Forwarded-For
// and X-Forwarded-Proto headers are believed.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if strings.Contains(f, "/") {
			p, err := netip.ParsePrefix(f)
			if err != nil {
				return nil, fmt.Errorf("api: trusted proxy %q: %w", f, err)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("api: trusted proxy %q: %w", f, err)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

func trusted(proxies []netip.Prefix, a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// peerAddr is the TCP peer's address (invalid if RemoteAddr is not one).
func peerAddr(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}

// clientIP is the client's address: the TCP peer, unless the peer is a
// trusted proxy; then the right-most X-Forwarded-For entry that is not a
// trusted proxy (entries to its left could be forged by the client). If
// every entry is trusted, the left-most one.
func clientIP(r *http.Request, proxies []netip.Prefix) netip.Addr {
	peer := peerAddr(r)
	if !trusted(proxies, peer) {
		return peer
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	ip := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return ip // a garbled hop: stop at the last good one
		}
		ip = a.Unmap()
		if !trusted(proxies, ip) {
			return ip
		}
	}
	return ip
}

// isHTTPS reports whether the client reached us over TLS: directly, or
// through a trusted proxy that says so in X-Forwarded-Proto.
func isHTTPS(r *http.Request, proxies []netip.Prefix) bool {
	if r.TLS != nil {
		return true
	}
	if !trusted(proxies, peerAddr(r)) {
		return false
	}
	proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	return strings.EqualFold(strings.TrimSpace(proto), "https")
}
