package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/aos-run/aos/internal/store"
)

// TestSubscriptionCloseLeavesAReusedDescriptorAlone: when a subscription
// ends, its reader closes the socket; the descriptor number is then free,
// and the process's next socket gets it (in aos server: the next accepted
// connection). The subscription's closer must not shut that socket down.
// Before the fix the closer shut down the number unconditionally after
// waking the reader, and a WebSocket handshake accepted just then read EOF
// (seen as EOF on the handshake, or a socket closed with 1001 or EOF
// after a few events, by bench/scale). The hook puts the new socket in
// the window every time.
func TestSubscriptionCloseLeavesAReusedDescriptorAlone(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "aos.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	for attempt := 0; ; attempt++ {
		before := openFDs(t)
		sctx, cancel := context.WithCancel(ctx)
		sub, err := s.Subscribe(sctx, store.ChannelEvents)
		if err != nil {
			t.Fatal(err)
		}
		subFD := -1
		for fd, l := range openFDs(t) {
			if before[fd] != l && strings.HasPrefix(l, "socket:") {
				subFD = fd
			}
		}
		drained := make(chan struct{})
		go func() {
			for range sub { //nolint:revive // drain until the reader stops
			}
			close(drained)
		}()
		type result struct {
			reused bool
			err    error // the write into the new socket
		}
		res := make(chan result, 1)
		s.bus.aroundShutdown = func(shutdown func()) {
			<-drained // the reader has stopped and closed its socket
			pair, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
			if err != nil {
				shutdown()
				res <- result{err: err}
				return
			}
			defer syscall.Close(pair[0]) //nolint:errcheck
			defer syscall.Close(pair[1]) //nolint:errcheck
			shutdown()
			// A peer of a socket whose reading side is shut gets EPIPE.
			err = syscall.Sendto(pair[1], []byte("x"), syscall.MSG_NOSIGNAL|syscall.MSG_DONTWAIT, nil)
			res <- result{reused: pair[0] == subFD, err: err}
		}
		cancel()
		r := <-res
		s.bus.aroundShutdown = nil
		if !r.reused {
			// Another descriptor was opened meanwhile: the window held
			// something else; try again.
			if attempt == 20 {
				t.Fatalf("the subscription's descriptor %d was never reused by the next socket", subFD)
			}
			continue
		}
		if r.err != nil {
			t.Fatalf("the subscription's closer shut down the socket that reused its descriptor %d: write into it: %v", subFD, r.err)
		}
		return
	}
}

// openFDs returns this process's open descriptors and what each is
// ("socket:[inode]" for a socket).
func openFDs(t *testing.T) map[int]string {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("no /proc/self/fd")
	}
	if err != nil {
		t.Fatal(err)
	}
	m := map[int]string{}
	for _, e := range es {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			m[n], _ = os.Readlink("/proc/self/fd/" + e.Name())
		}
	}
	return m
}
