package sqlite_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/sqlite"
)

// open opens n separate Stores on one database file, as n processes would.
func open(t *testing.T, path string, n int) []*sqlite.Store {
	t.Helper()
	var out []*sqlite.Store
	for range n {
		s, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		out = append(out, s)
	}
	return out
}

func socks(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.sock"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func next(t *testing.T, ch <-chan []byte) string {
	t.Helper()
	select {
	case p := <-ch:
		return string(p)
	case <-time.After(5 * time.Second):
		t.Fatal("no payload within 5 s")
		return ""
	}
}

// TestBusDirIsPrivateAndSocketsAreUnlinked: the socket directory sits next
// to a short database path with mode 0700; a subscription's socket file is
// removed when its ctx ends.
func TestBusDirIsPrivateAndSocketsAreUnlinked(t *testing.T) {
	dir, err := os.MkdirTemp("", "aosbus")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	s := open(t, filepath.Join(dir, "aos.db"), 1)[0]
	ctx, cancel := context.WithCancel(context.Background())
	sub, err := s.Subscribe(ctx, store.ChannelEvents)
	if err != nil {
		t.Fatal(err)
	}
	busDir := filepath.Join(dir, "aos.db.events")
	if s.BusDir() != busDir {
		t.Fatalf("BusDir = %s, want %s", s.BusDir(), busDir)
	}
	if fi, err := os.Stat(busDir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("bus dir: %v, %v; want mode 0700", fi.Mode(), err)
	}
	if n := len(socks(t, busDir)); n != 1 {
		t.Fatalf("%d sockets while subscribed, want 1", n)
	}
	cancel()
	for range sub {
	}
	if n := len(socks(t, busDir)); n != 0 {
		t.Fatalf("%d sockets after the subscription ended, want 0", n)
	}
}

// TestLongDatabasePathFallsBackToShortPrivateDir: when a socket path next
// to the database would not fit in sockaddr_un, both instances agree on a
// short private directory under os.TempDir, and publishing works; a
// fallback directory that others may enter is refused.
func TestLongDatabasePathFallsBackToShortPrivateDir(t *testing.T) {
	long := filepath.Join(t.TempDir(), strings.Repeat("d", 80), "aos.db")
	ss := open(t, long, 2)
	dir := ss[0].BusDir()
	if filepath.Dir(dir) != filepath.Clean(os.TempDir()) || dir != ss[1].BusDir() {
		t.Fatalf("bus dirs %s and %s, want one dir under %s", dir, ss[1].BusDir(), os.TempDir())
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub, err := ss[1].Subscribe(ctx, store.ChannelEvents)
	if err != nil {
		t.Fatal(err)
	}
	if err := ss[0].Publish(ctx, store.ChannelEvents, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if got := next(t, sub); got != "hello" {
		t.Fatalf("got %q", got)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := ss[1].Subscribe(ctx, store.ChannelEvents); err == nil || !strings.Contains(err.Error(), "not a private directory") {
		t.Fatalf("subscribe in a mode 0755 dir: %v, want a refusal", err)
	}
	if err := ss[0].Publish(ctx, store.ChannelEvents, []byte("x")); err == nil {
		t.Fatal("publish into a mode 0755 dir succeeded")
	}
}

// TestStaleSocketIsRemovedAndDoesNotBreakPublishing: a socket file whose
// process died (bound, then closed without unlinking, which is what
// SIGKILL leaves) is removed by the next Publish, and a live subscriber
// still gets the payload.
func TestStaleSocketIsRemovedAndDoesNotBreakPublishing(t *testing.T) {
	dir, err := os.MkdirTemp("", "aosbus")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	ss := open(t, filepath.Join(dir, "aos.db"), 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub, err := ss[1].Subscribe(ctx, store.ChannelEvents)
	if err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(ss[0].BusDir(), store.ChannelEvents+"-dead00000000dead.sock")
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: stale}); err != nil {
		t.Fatal(err)
	}
	_ = syscall.Close(fd)
	for i := range 3 {
		if err := ss[0].Publish(ctx, store.ChannelEvents, fmt.Appendf(nil, "p%d", i)); err != nil {
			t.Fatalf("publish %d with a stale socket present: %v", i, err)
		}
		if got := next(t, sub); got != fmt.Sprintf("p%d", i) {
			t.Fatalf("payload %d = %q", i, got)
		}
	}
	if _, err := os.Lstat(stale); !os.IsNotExist(err) {
		t.Fatalf("stale socket still there: %v", err)
	}
	if _, removed := ss[0].BusStats(); removed != 1 {
		t.Fatalf("stale sockets removed = %d, want 1", removed)
	}
}

// TestStalledSubscriberCostsThePublisherLittle: 10,000 payloads published
// at a subscriber socket that nobody reads finish within a deadline (its
// full queue drops, counted), and a reading subscriber keeps receiving.
func TestStalledSubscriberCostsThePublisherLittle(t *testing.T) {
	dir, err := os.MkdirTemp("", "aosbus")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	ss := open(t, filepath.Join(dir, "aos.db"), 3)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A subscriber process that stopped (SIGSTOP, a hung process): its
	// socket is bound in the directory and nobody reads it.
	if _, err := ss[1].Subscribe(ctx, store.ChannelEvents); err != nil { // makes the directory
		t.Fatal(err)
	}
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: filepath.Join(ss[1].BusDir(), store.ChannelEvents+"-5700000000000000.sock")}); err != nil {
		t.Fatal(err)
	}
	live, err := ss[2].Subscribe(ctx, store.ChannelEvents)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i := range 10000 {
		if err := ss[0].Publish(ctx, store.ChannelEvents, fmt.Appendf(nil, "p%d", i)); err != nil {
			t.Fatal(err)
		}
		if i%100 == 0 { // a reader that keeps up with a paced publisher
			for len(live) > 0 {
				<-live
			}
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("10,000 publishes took %s with a stalled subscriber", d)
	}
	if dropped, _ := ss[0].BusStats(); dropped == 0 {
		t.Fatal("no drop counted for the stalled subscriber")
	}
	if err := ss[0].Publish(ctx, store.ChannelEvents, []byte("last")); err != nil {
		t.Fatal(err)
	}
	for got := ""; got != "last"; {
		got = next(t, live)
	}
}

// TestSocketOfAKilledProcessIsRemoved: a subscriber process killed with
// SIGKILL leaves its socket file behind; the next Publish removes it and
// still reaches a live subscriber.
func TestSocketOfAKilledProcessIsRemoved(t *testing.T) {
	dir, err := os.MkdirTemp("", "aosbus")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	path := filepath.Join(dir, "aos.db")
	ss := open(t, path, 2)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "AOS_TEST_CHILD=subscriber", "AOS_TEST_DB="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		t.Fatalf("child said %q", line)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	left := socks(t, ss[0].BusDir())
	if len(left) != 1 {
		t.Fatalf("%d socket files after the kill, want the child's 1", len(left))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub, err := ss[1].Subscribe(ctx, store.ChannelEvents)
	if err != nil {
		t.Fatal(err)
	}
	if err := ss[0].Publish(ctx, store.ChannelEvents, []byte("after")); err != nil {
		t.Fatalf("publish with a dead subscriber's socket present: %v", err)
	}
	if got := next(t, sub); got != "after" {
		t.Fatalf("got %q", got)
	}
	if _, err := os.Lstat(left[0]); !os.IsNotExist(err) {
		t.Fatalf("the killed process's socket is still there: %v", err)
	}
}
