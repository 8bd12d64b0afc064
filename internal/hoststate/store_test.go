package hoststate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv("AOS_TEST_CHILD") == "crash-before-rename" {
		crashChild()
		return
	}
	goleak.VerifyTestMain(m)
}

// crashChild writes a new revision and SIGKILLs itself between the temp
// file's fsync and the rename.
func crashChild() {
	s, err := Open(os.Getenv("AOS_TEST_DIR"), "state", Hooks{AfterTempWrite: func() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL) }})
	if err != nil {
		os.Exit(3)
	}
	if _, err := s.CompareAndSwap(context.Background(), 1, json.RawMessage(`{"n":2}`)); err != nil {
		os.Exit(4)
	}
	os.Exit(5) // the hook did not fire
}

func mustStore(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir, "state", Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRoundTripAndRestart(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "host")
	ctx := context.Background()
	s := mustStore(t, dir)
	if snap, err := s.Load(ctx); err != nil || snap.Revision != 0 || snap.State != nil {
		t.Fatalf("empty store: %+v %v", snap, err)
	}
	for i := 1; i <= 3; i++ {
		rev, err := s.CompareAndSwap(ctx, uint64(i-1), json.RawMessage(fmt.Sprintf(`{"n": %d}`, i)))
		if err != nil || rev != uint64(i) {
			t.Fatalf("CAS %d: rev %d, %v", i, rev, err)
		}
	}
	// A new instance (a restarted aos) reads exactly what was written.
	snap, err := mustStore(t, dir).Load(ctx)
	if err != nil || snap.Revision != 3 || string(snap.State) != `{"n":3}` {
		t.Fatalf("after restart: %+v %v", snap, err)
	}
	if _, err := s.CompareAndSwap(ctx, 2, json.RawMessage(`{}`)); !errors.Is(err, ErrRevisionConflict) {
		t.Fatalf("stale CAS: %v, want revision_conflict", err)
	}
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("state dir mode: %v %v", fi.Mode(), err)
	}
}

// TestTamperKeepsEvidence: a corrupted byte, a truncated file, a future
// schema, a malformed envelope are typed failures; Load, CAS, Update and
// a device claim all leave the file byte for byte as it was.
func TestTamperKeepsEvidence(t *testing.T) {
	t.Parallel()
	valid := func(t *testing.T, dir string) []byte {
		s := mustStore(t, dir)
		if _, err := s.CompareAndSwap(context.Background(), 0, json.RawMessage(`{"device":null,"x":"hello"}`)); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "state.json"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cases := []struct {
		name   string
		mangle func([]byte) []byte
		want   error
	}{
		{"corrupted byte", func(b []byte) []byte { return bytes.Replace(b, []byte("hello"), []byte("hellp"), 1) }, ErrCorrupt},
		{"revision bumped", func(b []byte) []byte { return bytes.Replace(b, []byte(`"revision":1`), []byte(`"revision":2`), 1) }, ErrCorrupt},
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }, ErrMalformed},
		{"empty", func([]byte) []byte { return nil }, ErrMalformed},
		{"future schema", func(b []byte) []byte { return bytes.Replace(b, []byte(`"schema":1`), []byte(`"schema":2`), 1) }, ErrUnsupportedSchema},
		{"unknown field", func(b []byte) []byte { return bytes.Replace(b, []byte(`{"schema"`), []byte(`{"extra":1,"schema"`), 1) }, ErrMalformed},
		{"trailing data", func(b []byte) []byte { return append(b, []byte(`{}`)...) }, ErrMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			bad := tc.mangle(valid(t, dir))
			path := filepath.Join(dir, "state.json")
			if err := os.WriteFile(path, bad, 0o600); err != nil {
				t.Fatal(err)
			}
			s := mustStore(t, dir)
			ctx := context.Background()
			_, err := s.Load(ctx)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Load: %v, want %v", err, tc.want)
			}
			if bytes.Contains([]byte(err.Error()), []byte(dir)) {
				t.Fatalf("error names the private path: %v", err)
			}
			if _, err := s.CompareAndSwap(ctx, 1, json.RawMessage(`{}`)); !errors.Is(err, tc.want) {
				t.Fatalf("CAS over evidence: %v", err)
			}
			if _, err := s.Update(ctx, func(Snapshot) (json.RawMessage, error) { return json.RawMessage(`{}`), nil }); !errors.Is(err, tc.want) {
				t.Fatalf("Update over evidence: %v", err)
			}
			if _, err := ClaimDevice(ctx, s, Claim{Owner: "t", PID: os.Getpid(), Duration: time.Second, Now: time.Now()}); !errors.Is(err, tc.want) {
				t.Fatalf("claim over evidence: %v", err)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, bad) {
				t.Fatalf("the evidence was changed:\n%q\nwas\n%q", got, bad)
			}
		})
	}
}

// TestCrashBetweenTempWriteAndRename: a writer SIGKILLed after its temp
// file's fsync and before the rename leaves the previous revision whole;
// the next writer cleans the temp file and goes on from it.
func TestCrashBetweenTempWriteAndRename(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	s := mustStore(t, dir)
	if _, err := s.CompareAndSwap(ctx, 0, json.RawMessage(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "AOS_TEST_CHILD=crash-before-rename", "AOS_TEST_DIR="+dir)
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die by SIGKILL at the kill point: %v", err)
	}
	temps, _ := filepath.Glob(filepath.Join(dir, ".state.tmp-*"))
	if len(temps) != 1 {
		t.Fatalf("want the crashed writer's temp file, got %v", temps)
	}
	snap, err := s.Load(ctx)
	if err != nil || snap.Revision != 1 || string(snap.State) != `{"n":1}` {
		t.Fatalf("after the crash: %+v %v", snap, err)
	}
	if rev, err := s.CompareAndSwap(ctx, 1, json.RawMessage(`{"n":2}`)); err != nil || rev != 2 {
		t.Fatalf("CAS after the crash: %d %v", rev, err)
	}
	if temps, _ := filepath.Glob(filepath.Join(dir, ".state.tmp-*")); len(temps) != 0 {
		t.Fatalf("temp files left: %v", temps)
	}
}

// TestCASRace: instances racing read-modify-write by CAS lose no update:
// every increment lands exactly once and revisions have no gap.
func TestCASRace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	const workers, each = 4, 15
	var wg sync.WaitGroup
	conflicts := make([]int, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := mustStore(t, dir) // an instance of its own
			for range each {
				for {
					snap, err := s.Load(ctx)
					if err != nil {
						t.Error(err)
						return
					}
					var v struct{ N int }
					if snap.State != nil {
						_ = json.Unmarshal(snap.State, &v)
					}
					_, err = s.CompareAndSwap(ctx, snap.Revision, json.RawMessage(fmt.Sprintf(`{"N":%d}`, v.N+1)))
					if err == nil {
						break
					}
					if !errors.Is(err, ErrRevisionConflict) {
						t.Error(err)
						return
					}
					conflicts[w]++
				}
			}
		}()
	}
	wg.Wait()
	snap, err := mustStore(t, dir).Load(ctx)
	if err != nil || snap.Revision != workers*each || string(snap.State) != fmt.Sprintf(`{"N":%d}`, workers*each) {
		t.Fatalf("after the race: %+v %v", snap, err)
	}
	t.Logf("conflicts seen per instance: %v", conflicts)
}
