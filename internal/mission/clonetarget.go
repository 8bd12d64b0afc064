package mission

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// cloneTarget is where a clone URL points: its host, the port git will
// dial, and the addresses the host resolved to when aos checked it.
type cloneTarget struct {
	scheme string // https or ssh
	host   string
	port   string
	addrs  []netip.Addr
}

// parseCloneTarget splits a URL that CheckCloneURL accepted.
func parseCloneTarget(raw string) cloneTarget {
	if rest, ok := strings.CutPrefix(raw, "git@"); ok {
		host, _, _ := strings.Cut(rest, ":")
		return cloneTarget{scheme: "ssh", host: host, port: "22"}
	}
	u, _ := url.Parse(raw)
	t := cloneTarget{scheme: u.Scheme, host: u.Hostname(), port: u.Port()}
	if t.port == "" {
		t.port = map[string]string{"https": "443", "ssh": "22"}[u.Scheme]
	}
	return t
}

// nonPublic are special-purpose ranges IsGlobalUnicast lets through:
// "this network", shared address space (CGNAT), IETF protocol
// assignments, benchmarking, reserved, and the IPv6 translation prefixes
// (NAT64, 6to4) that can carry any IPv4 address, a private one included.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"), netip.MustParsePrefix("100.64.0.0/10"), netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"), netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"), netip.MustParsePrefix("64:ff9b:1::/48"), netip.MustParsePrefix("2002::/16"),
}

// publicAddr reports whether a is a globally routable unicast address: not
// loopback, private (RFC 1918, ULA), link-local (cloud metadata lives at
// 169.254.169.254), unspecified, multicast, nor in nonPublic.
func publicAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || !a.IsGlobalUnicast() || a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// checkCloneTarget resolves the URL's host and refuses a clone that would
// reach this machine or a non-public network, unless
// Options.AllowPrivateClones is set (AOS_CLONE_ALLOW_PRIVATE=1): a clone
// runs on the server's host and its error text tells open ports from
// closed ones, so a token holder could otherwise probe the owner's network.
// The refusal does not say what the host resolved to.
func (s *Service) checkCloneTarget(ctx context.Context, raw string) (cloneTarget, error) {
	t := parseCloneTarget(raw)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(strings.Trim(t.host, "[]")); err == nil {
		addrs = []netip.Addr{a}
	} else {
		lookup := s.opts.LookupHost
		if lookup == nil {
			lookup = func(ctx context.Context, h string) ([]netip.Addr, error) {
				return net.DefaultResolver.LookupNetIP(ctx, "ip", h)
			}
		}
		found, err := lookup(ctx, t.host)
		if err != nil || len(found) == 0 {
			return t, &Error{Code: CodeGitFailed, Msg: "the clone URL's host does not resolve", Err: err}
		}
		addrs = found
	}
	if !s.opts.AllowPrivateClones {
		for _, a := range addrs {
			if !publicAddr(a) {
				return t, invalid("the clone URL points at this machine or a private network; set AOS_CLONE_ALLOW_PRIVATE=1 on the server to allow that")
			}
		}
	}
	t.addrs = addrs
	return t, nil
}

// pinArgs makes git connect to the addresses aos checked, so the host
// cannot resolve to another address between the check and the clone (DNS
// rebinding). git passes http.curloptResolve to libcurl's CURLOPT_RESOLVE
// (git ≥ 2.37); ssh has no equivalent, so an ssh clone trusts the resolver
// a second time (documented).
func (t cloneTarget) pinArgs() []string {
	if t.scheme != "https" || len(t.addrs) == 0 {
		return nil
	}
	ips := make([]string, 0, len(t.addrs))
	for _, a := range t.addrs {
		if a.Unmap().Is6() {
			ips = append(ips, "["+a.String()+"]")
		} else {
			ips = append(ips, a.Unmap().String())
		}
	}
	return []string{"-c", "http.curloptResolve=" + t.host + ":" + t.port + ":" + strings.Join(ips, ",")}
}

// CloneArgs applies the one rule for every git clone aos makes from a URL
// (a project's, a community package's): the URL's form (CheckCloneURL) and
// its host's resolved addresses (no loopback or non-public network unless
// AllowPrivateClones). It returns the git options to put before "clone" so
// that git connects only to the addresses checked and follows no
// redirect. Its refusals are *Error values (invalid_input, git_failed).
func (s *Service) CloneArgs(ctx context.Context, raw string) ([]string, error) {
	if err := CheckCloneURL(raw); err != nil {
		return nil, err
	}
	t, err := s.checkCloneTarget(ctx, raw)
	if err != nil {
		return nil, err
	}
	return t.gitOptions(), nil
}

// gitOptions are the git options that go before "clone" for t: its
// address pinning, and no redirect.
func (t cloneTarget) gitOptions() []string {
	return append(t.pinArgs(), "-c", "http.followRedirects=false")
}
