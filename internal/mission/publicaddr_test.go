package mission

import (
	"net/netip"
	"testing"
)

func TestPublicAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"93.184.215.14": true, "140.82.112.3": true, "2606:4700::1111": true,
		"127.0.0.1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false, "169.254.169.254": false,
		"100.64.0.1": false, "0.0.0.0": false, "0.1.2.3": false, "192.0.0.8": false, "198.18.0.1": false, "240.0.0.1": false,
		"255.255.255.255": false, "224.0.0.1": false, "::1": false, "::": false, "fd00::1": false, "fe80::1": false,
		"64:ff9b::a01:203": false, "2002:a01:203::1": false, "::ffff:10.1.2.3": false, "::ffff:93.184.215.14": true,
	} {
		if got := publicAddr(netip.MustParseAddr(addr)); got != want {
			t.Errorf("publicAddr(%s) = %v, want %v", addr, got, want)
		}
	}
}
