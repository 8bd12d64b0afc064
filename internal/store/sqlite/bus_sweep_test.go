package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/sqlite"
)

// longDB returns a database path under a fresh TMPDIR too long for its
// sockets to sit next to it, so its bus directory is under TMPDIR.
func longDB(t *testing.T) (tmp, db string) {
	t.Helper()
	tmp, err := os.MkdirTemp("", "aosb") // short: sockets must fit in sockaddr_un
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	t.Setenv("TMPDIR", tmp) // the fallback bus dir is under os.TempDir, the one every process of the database agrees on
	return tmp, filepath.Join(tmp, strings.Repeat("d", 80), "aos.db")
}

func busDirs(t *testing.T, tmp string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(tmp, "aos-events-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 5 s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestBusDirIsDerivedAndRemovedOnCleanExit: two stores of one database
// agree on one directory under TMPDIR, derived from the path (the same
// after a reopen), and once their subscriptions end and they close,
// nothing is left under TMPDIR.
func TestBusDirIsDerivedAndRemovedOnCleanExit(t *testing.T) {
	tmp, db := longDB(t)
	ss := open(t, db, 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var subs []<-chan []byte
	for _, s := range ss {
		for _, ch := range []string{store.ChannelEvents, store.ChannelWork} {
			sub, err := s.Subscribe(ctx, ch)
			if err != nil {
				t.Fatal(err)
			}
			subs = append(subs, sub)
		}
	}
	if got := busDirs(t, tmp); len(got) != 1 || got[0] != ss[0].BusDir() || ss[1].BusDir() != got[0] {
		t.Fatalf("bus dirs %v, stores say %s and %s", got, ss[0].BusDir(), ss[1].BusDir())
	}
	again, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if again.BusDir() != ss[0].BusDir() {
		t.Fatalf("reopened store's bus dir %s, want %s", again.BusDir(), ss[0].BusDir())
	}
	_ = again.Close()
	cancel()
	for _, sub := range subs {
		for range sub {
		}
	}
	for _, s := range ss {
		_ = s.Close()
	}
	waitFor(t, "bus dir removed after a clean exit", func() bool { return len(busDirs(t, tmp)) == 0 })
}

// TestStaleBusDirsAreSweptAtOpen: the directory a killed process left
// (its socket bound, then closed without unlinking) is removed by the next
// Open of any database; a directory with a live reader, one others may
// enter, and one holding a regular file are left alone.
func TestStaleBusDirsAreSweptAtOpen(t *testing.T) {
	tmp, db := longDB(t)
	mk := func(name string, mode os.FileMode) string {
		d := filepath.Join(tmp, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, mode); err != nil {
			t.Fatal(err)
		}
		return d
	}
	bind := func(dir string, keep bool) {
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_DGRAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: filepath.Join(dir, store.ChannelEvents+"-0123456789abcdef.sock")}); err != nil {
			t.Fatal(err)
		}
		if keep {
			t.Cleanup(func() { _ = syscall.Close(fd) })
		} else {
			_ = syscall.Close(fd) // what SIGKILL leaves
		}
	}
	dead := mk("aos-events-00000000000000d1", 0o700)
	bind(dead, false)
	empty := mk("aos-events-00000000000000d2", 0o700)
	live := mk("aos-events-00000000000000a1", 0o700)
	bind(live, true)
	open := mk("aos-events-00000000000000a2", 0o755)
	bind(open, false)
	other := mk("aos-events-00000000000000a3", 0o700)
	if err := os.WriteFile(filepath.Join(other, "note"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	for _, d := range []string{dead, empty} {
		if _, err := os.Lstat(d); !os.IsNotExist(err) {
			t.Errorf("stale %s still there: %v", d, err)
		}
	}
	for _, d := range []string{live, open, other} {
		if _, err := os.Lstat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
	if got := len(socks(t, live)); got != 1 {
		t.Errorf("live dir has %d sockets, want 1", got)
	}
}
