package backend_test

import (
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store/storetest"
)

// counter is a TCP listener the test owns; it counts the connections it
// accepted, which is what an engine reached, seen from outside.
type counter struct {
	ln net.Listener
	n  atomic.Int64
}

func listenCount(t *testing.T, ip string) *counter {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	c := &counter{ln: ln}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.n.Add(1)
			_ = conn.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); <-done })
	return c
}

func (c *counter) port() string {
	_, p, _ := net.SplitHostPort(c.ln.Addr().String())
	return p
}

// reachedWithin polls the count until it is positive or d passes.
func (c *counter) reachedWithin(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for c.n.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return c.n.Load() > 0
}

// hostAddress is a non-loopback IPv4 address of this host, or "".
func hostAddress() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
			return n.IP.String()
		}
	}
	return ""
}

// An engine's network follows the mission's: with network open it
// reaches an outside address (a listener on the host's own non-loopback
// address, through slirp4netns's NAT), with network none it does not;
// under both it never reaches a listener on the host's loopback (directly
// or through slirp's 10.0.2.2), and under both its model call goes
// through the forwarder to the metering proxy, carrying the real key the
// engine never had, and is metered.
func TestCommandEngineNetwork(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		t.Skip("network open needs /dev/net/tun")
	}
	ip := hostAddress()
	if ip == "" {
		t.Skip("no non-loopback IPv4 address on this host for the outbound control")
	}
	for _, network := range []string{"none", "open"} {
		t.Run(network, func(t *testing.T) {
			t.Parallel()
			storetest.Each(t, func(t *testing.T, db storetest.DB) {
				t.Parallel()
				lo, ext := listenCount(t, "127.0.0.1"), listenCount(t, ip)
				e := newEnv(t, db)
				calls := e.withProxy(t)
				in := e.commandInput("net")
				in.Objective += " dial:127.0.0.1:" + lo.port() + " dial:10.0.2.2:" + lo.port() + " dial:" + net.JoinHostPort(ip, ext.port())
				in.Model, in.Network = "script:spend", network
				_, rid := e.mission(in, kernel.Budget{})
				e.start()
				_, out := e.wait(rid, kernel.StatusDone)
				report := e.hostGit(e.repo, "show", out.Commit+":net.txt")
				if !strings.Contains(report, "model: 200") || out.Spend.Calls != 1 || calls() != 1 {
					t.Fatalf("model call not made and metered through the proxy: spend %+v; engine's report:\n%s", out.Spend, report)
				}
				if want := network == "open"; ext.reachedWithin(map[bool]time.Duration{true: 5 * time.Second, false: 0}[want]) != want {
					t.Errorf("outside address %s reached %v, want %v; engine's report:\n%s", ip, !want, want, report)
				}
				if lo.n.Load() != 0 {
					t.Errorf("host loopback reached; engine's report:\n%s", report)
				}
			})
		})
	}
}
