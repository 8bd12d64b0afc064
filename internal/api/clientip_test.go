package api

import (
	"crypto/tls"
	"net/http"
	"net/netip"
	"testing"
)

func TestParseTrustedProxies(t *testing.T) {
	t.Parallel()
	got, err := ParseTrustedProxies(" 10.0.0.1, 192.168.0.0/16,::1 ,, 2001:db8::/32")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10.0.0.1/32", "192.168.0.0/16", "::1/128", "2001:db8::/32"}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i].String() != want[i] {
			t.Errorf("%d: %s, want %s", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"10.0.0", "10.0.0.0/33", "example.com"} {
		if _, err := ParseTrustedProxies(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// TestClientIP: the peer, unless it is a trusted proxy; then the
// right-most untrusted X-Forwarded-For hop. X-Forwarded-Proto counts only
// from a trusted peer.
func TestClientIP(t *testing.T) {
	t.Parallel()
	proxies, _ := ParseTrustedProxies("10.0.0.0/8, 2001:db8::1")
	for _, c := range []struct {
		name, remote string
		xff          []string
		xfp          string
		tls          bool
		wantIP       string
		wantHTTPS    bool
	}{
		{"direct", "203.0.113.5:4000", nil, "", false, "203.0.113.5", false},
		{"direct ignores forged headers", "203.0.113.5:4000", []string{"1.2.3.4"}, "https", false, "203.0.113.5", false},
		{"direct tls", "203.0.113.5:4000", nil, "", true, "203.0.113.5", true},
		{"trusted proxy", "10.1.2.3:4000", []string{"198.51.100.7"}, "https", false, "198.51.100.7", true},
		{"trusted proxy, http", "10.1.2.3:4000", []string{"198.51.100.7"}, "http", false, "198.51.100.7", false},
		{"client forges a left hop", "10.1.2.3:4000", []string{"1.2.3.4, 198.51.100.7"}, "", false, "198.51.100.7", false},
		{"two trusted hops", "10.1.2.3:4000", []string{"198.51.100.7, 10.9.9.9"}, "", false, "198.51.100.7", false},
		{"several headers", "10.1.2.3:4000", []string{"1.2.3.4", "198.51.100.7"}, "", false, "198.51.100.7", false},
		{"all hops trusted", "10.1.2.3:4000", []string{"10.0.0.2, 10.0.0.3"}, "", false, "10.0.0.2", false},
		{"no header", "10.1.2.3:4000", nil, "", false, "10.1.2.3", false},
		{"garbled hop stops", "10.1.2.3:4000", []string{"junk, 10.0.0.9"}, "", false, "10.0.0.9", false},
		{"ipv6 trusted proxy", "[2001:db8::1]:443", []string{"2001:db8:ffff::5"}, "https", false, "2001:db8:ffff::5", true},
		{"ipv4-mapped peer", "[::ffff:10.1.2.3]:80", []string{"198.51.100.7"}, "", false, "198.51.100.7", false},
		{"xfp list", "10.1.2.3:4000", nil, "https, http", false, "10.1.2.3", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, _ := http.NewRequest("GET", "http://x/", nil)
			r.RemoteAddr = c.remote
			r.Header["X-Forwarded-For"] = c.xff
			if c.xfp != "" {
				r.Header.Set("X-Forwarded-Proto", c.xfp)
			}
			if c.tls {
				r.TLS = &tls.ConnectionState{}
			}
			if got := clientIP(r, proxies); got != netip.MustParseAddr(c.wantIP) {
				t.Errorf("clientIP = %s, want %s", got, c.wantIP)
			}
			if got := isHTTPS(r, proxies); got != c.wantHTTPS {
				t.Errorf("isHTTPS = %v, want %v", got, c.wantHTTPS)
			}
		})
	}
}
