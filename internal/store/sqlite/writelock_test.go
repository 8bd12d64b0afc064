package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/sqlite"
)

func migrated(t *testing.T) (*sqlite.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "aos.db")
	s := open(t, path, 1)[0]
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, path
}

// TestTxWaitsForAnotherProcessWriteLock: a transaction first takes the
// flock on <db>.writelock, which every aos process on the database shares:
// while another process holds it, Tx waits (here until its ctx ends)
// although SQLite's own lock is free; once it is released, Tx runs.
func TestTxWaitsForAnotherProcessWriteLock(t *testing.T) {
	s, path := migrated(t)
	f, err := os.OpenFile(path+".writelock", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("no write lock file beside the database: %v", err)
	}
	t.Cleanup(func() { _ = f.Close() })
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	ran := false
	err = s.Tx(ctx, func(q store.Queries) error { ran = true; return nil })
	if !errors.Is(err, context.DeadlineExceeded) || ran {
		t.Fatalf("Tx while another process holds the write lock: ran %v, %v; want it to wait until its ctx ended", ran, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := s.Tx(context.Background(), func(q store.Queries) error { return q.PutSetting(context.Background(), "k", []byte(`1`), 1) }); err != nil {
		t.Fatalf("Tx after the release: %v", err)
	}
	// And while a Tx of ours is open, another process cannot take it.
	inside, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.Tx(context.Background(), func(store.Queries) error { close(inside); <-release; return nil })
	}()
	<-inside
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("flock while a Tx is open: %v, want EWOULDBLOCK", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestReadsDoNotQueueBehindAWriteTransaction: the API's reads (a mission
// listing, an events replay, a token check) answer while a write
// transaction of the same process is open, instead of waiting for the
// single write connection.
func TestReadsDoNotQueueBehindAWriteTransaction(t *testing.T) {
	s, _ := migrated(t)
	bg := context.Background()
	if err := s.InsertMission(bg, store.Mission{ID: "m1", Title: "t", Spec: []byte(`{}`), Status: "queued", RootRunID: "r1", CreatedAt: 1, UpdatedAt: 1}); err != nil {
		t.Fatal(err)
	}
	inside, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // a failed check must not leave the transaction open
	done := make(chan error, 1)
	go func() {
		done <- s.Tx(bg, func(q store.Queries) error {
			if err := q.PutSetting(bg, "k", []byte(`1`), 1); err != nil {
				return err
			}
			close(inside)
			<-release
			return nil
		})
	}()
	<-inside
	reads := make(chan error, 1)
	go func() {
		ms, err := s.ListMissions(bg, store.ListMissionsParams{Limit: 10})
		if err == nil && len(ms) != 1 {
			err = fmt.Errorf("ListMissions: %d missions, want 1", len(ms))
		}
		if err == nil {
			_, err = s.ListEvents(bg, store.ListEventsParams{Limit: 10})
		}
		if _, terr := s.GetAPITokenByHash(bg, "nope"); err == nil && !errors.Is(terr, store.ErrNotFound) {
			err = fmt.Errorf("GetAPITokenByHash: %v", terr)
		}
		reads <- err
	}()
	select {
	case err := <-reads:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the reads waited 5 s for the open write transaction")
	}
	ctx := bg
	// The uncommitted write is not visible to the readers; committed, it is.
	if _, err := s.GetSetting(ctx, "k"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("uncommitted setting read: %v", err)
	}
	unblock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if v, err := s.GetSetting(bg, "k"); err != nil || string(v) != "1" {
		t.Fatalf("setting after commit: %s, %v", v, err)
	}
}

// TestEveryTransactionTakesTheWriteLock: the store's multi-statement
// writes of the shared code (mission creation, claim, a run's end), the
// audit insert, the periodic writes (a worker's lease renewal and its row, a server's
// preparation leases), a
// prune and Tx itself all wait for the write lock another
// process holds, instead of going to SQLite's lock (free here) and,
// under load, to its sleeping busy handler. Released, each runs.
func TestEveryTransactionTakesTheWriteLock(t *testing.T) {
	s, path := migrated(t)
	f, err := os.OpenFile(path+".writelock", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	// A long-ended mission gives PruneHistory something to prune.
	if err := s.InsertMission(context.Background(), store.Mission{ID: "old", Title: "t", Spec: []byte(`{}`), Status: "done", RootRunID: "r0", CreatedAt: 1, UpdatedAt: 1, EndedAt: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.InsertAudit(context.Background(), store.AuditRecord{At: 1, Actor: "owner", Action: "mission.create", Target: "old", Detail: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	// A queued run for ClaimStart to find under the lock (a claim that
	// finds nothing takes no lock: TestClaimFindingNothingTakesNoWriteLock);
	// created after "r", so the claim after the release takes "r".
	if err := s.InsertMissionRun(context.Background(), store.Mission{ID: "q", Title: "t", Spec: []byte(`{}`), Status: "queued", RootRunID: "rq", CreatedAt: 2, UpdatedAt: 2},
		store.Run{ID: "rq", MissionID: "q", Logic: "l", Status: "queued", CreatedAt: 2, UpdatedAt: 2}, nil); err != nil {
		t.Fatal(err)
	}
	var fence store.Fence
	m := store.Mission{ID: "m", Title: "t", Status: "queued", RootRunID: "r", CreatedAt: 1, UpdatedAt: 1}
	r := store.Run{ID: "r", MissionID: "m", Logic: "l", Status: "queued", CreatedAt: 1, UpdatedAt: 1}
	audit := store.AuditRecord{At: 1, Actor: "owner", Action: "mission.create", Target: "m", Detail: []byte(`{}`)}
	writes := []struct {
		name string
		fn   func(ctx context.Context) error
	}{
		{"InsertMissionRun", func(ctx context.Context) error {
			return s.InsertMissionRun(ctx, m, r, &audit, store.Event{MissionID: "m", RunID: "r", Kind: "mission.created", Payload: []byte(`{}`), CreatedAt: 1})
		}},
		{"ClaimStart", func(ctx context.Context) error {
			run, _, err := s.ClaimStart(ctx, store.ClaimRunParams{WorkerID: "w", Now: 5, LeaseUntil: 50})
			fence = store.Fence{RunID: run.ID, Owner: "w", Token: run.FencingToken}
			return err
		}},
		{"RenewLeases", func(ctx context.Context) error {
			got, err := s.RenewLeases(ctx, store.RenewLeasesParams{Owner: "w", Held: []store.LeaseRef{{RunID: fence.RunID, Token: fence.Token}}, LeaseUntil: 60})
			if err == nil && len(got) != 1 {
				err = fmt.Errorf("renewed %+v, want the claimed run", got)
			}
			return err
		}},
		{"RenewAgentOperationLeases", func(ctx context.Context) error {
			_, err := s.RenewAgentOperationLeases(ctx, "srv", 60)
			return err
		}},
		{"UpsertWorker", func(ctx context.Context) error {
			return s.UpsertWorker(ctx, store.Worker{ID: "w", Version: "v", Hostname: "h", StartedAt: 1, LastSeen: 6})
		}},
		{"EndRun", func(ctx context.Context) error {
			return s.EndRun(ctx, store.SetRunStateParams{Fence: fence, Status: "done", EndedAt: 9, Now: 9},
				store.UpdateMissionStatusParams{ID: "m", Status: "done", EndedAt: 9, Now: 9},
				store.Event{MissionID: "m", RunID: "r", Kind: "run.completed", Payload: []byte(`{}`), CreatedAt: 9})
		}},
		{"InsertAudit", func(ctx context.Context) error { _, err := s.InsertAudit(ctx, audit); return err }},
		{"PruneHistory", func(ctx context.Context) error {
			res, err := s.PruneHistory(ctx, store.PruneParams{EventsBefore: 2, AuditBefore: 2, Now: 10})
			if err == nil && res.Missions != 1 {
				err = fmt.Errorf("pruned %+v, want the old mission", res)
			}
			return err
		}},
		{"Tx", func(ctx context.Context) error {
			return s.Tx(ctx, func(q store.Queries) error { return q.PutSetting(ctx, "k", []byte(`1`), 1) })
		}},
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	for _, w := range writes {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := w.fn(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s while another process holds the write lock: %v, want it to wait until its ctx ended", w.name, err)
		}
	}
	if _, err := s.GetMission(context.Background(), "m"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a mission was written under another process's write lock: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	for _, w := range writes {
		if err := w.fn(context.Background()); err != nil {
			t.Fatalf("%s after the release: %v", w.name, err)
		}
	}
	if got, err := s.GetMission(context.Background(), "m"); err != nil || got.Status != "done" {
		t.Fatalf("mission after the writes: %+v, %v; want done", got, err)
	}
}

// TestClaimFindingNothingTakesNoWriteLock: a claim attempt with no run to
// claim (most of a worker's attempts: one after each run it ran, one per
// poll) answers not found while another process holds the write lock,
// instead of waiting for it; one with a run to claim waits.
func TestClaimFindingNothingTakesNoWriteLock(t *testing.T) {
	s, path := migrated(t)
	bg := context.Background()
	// Not claimable: done, queued for later, leased until later.
	for _, r := range []store.Run{
		{ID: "done", Status: "done"},
		{ID: "later", Status: "queued", WakeAt: 100},
		{ID: "leased", Status: "running", LeaseOwner: "w0", LeaseExpiresAt: 100, FencingToken: 1},
	} {
		r.MissionID, r.Logic, r.CreatedAt, r.UpdatedAt = "m"+r.ID, "l", 1, 1
		if err := s.InsertMissionRun(bg, store.Mission{ID: r.MissionID, Title: "t", Spec: []byte(`{}`), Status: "queued", RootRunID: r.ID, CreatedAt: 1, UpdatedAt: 1}, r, nil); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.OpenFile(path+".writelock", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	claim := func(now int64, within time.Duration) error {
		ctx, cancel := context.WithTimeout(bg, within)
		defer cancel()
		_, _, err := s.ClaimStart(ctx, store.ClaimRunParams{WorkerID: "w", Now: now, LeaseUntil: now + 50})
		return err
	}
	// A claim that waited for the lock would wait past any deadline (the
	// lock is held until the release below), so a generous one fails it
	// all the same, and a slow read (-race, a loaded machine) does not.
	if err := claim(10, 10*time.Second); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("claim with nothing to claim, under another process's write lock: %v, want not found without waiting for the lock", err)
	}
	// At 200 the queued run is due and the lease has expired: both are
	// claimable, and the claim waits for the lock.
	if err := claim(200, 200*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("claim with a run to claim, under another process's write lock: %v, want it to wait until its ctx ended", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := claim(200, 10*time.Second); err != nil {
		t.Fatalf("claim after the release: %v", err)
	}
}

// TestWriteLockTakesTurnsBetweenProcesses: a process that releases the
// write lock while another waits for it does not take it straight back
// with its next transaction (which a released flock allows: the waiter
// is only woken, and the releaser is already running): the waiter goes
// first. Two handles on one database stand for two processes (each has
// its own flocks).
func TestWriteLockTakesTurnsBetweenProcesses(t *testing.T) {
	s, path := migrated(t)
	other := open(t, path, 1)[0]
	bg := context.Background()
	var mu sync.Mutex
	var order []string
	record := func(who string) func(store.Queries) error {
		return func(store.Queries) error { mu.Lock(); order = append(order, who); mu.Unlock(); return nil }
	}
	inside, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	ours := make(chan error, 1)
	go func() {
		// Two transactions back to back, as a worker commits steps.
		err := s.Tx(bg, func(q store.Queries) error { close(inside); <-release; return record("s1")(q) })
		if err == nil {
			err = s.Tx(bg, record("s2"))
		}
		ours <- err
	}()
	<-inside
	waited := make(chan error, 1)
	go func() { waited <- other.Tx(bg, record("other")) }()
	waitForBlockedFlock(t, path+".writelock")
	unblock()
	for _, c := range []chan error{ours, waited} {
		if err := <-c; err != nil {
			t.Fatal(err)
		}
	}
	if got := fmt.Sprint(order); got != "[s1 other s2]" {
		t.Fatalf("transactions ran in the order %s, want [s1 other s2]: the waiting process goes before the releaser's next one", got)
	}
}

// waitForBlockedFlock waits until /proc/locks shows a process blocked on
// the flock of path.
func waitForBlockedFlock(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	suffix := fmt.Sprintf(":%d", fi.Sys().(*syscall.Stat_t).Ino)
	deadline := time.Now().Add(5 * time.Second)
	last := ""
	for time.Now().Before(deadline) {
		b, err := os.ReadFile("/proc/locks")
		if err != nil {
			t.Skipf("no /proc/locks: %v", err)
		}
		last = string(b)
		for _, line := range strings.Split(last, "\n") {
			f := strings.Fields(line)
			if len(f) >= 7 && f[1] == "->" && f[2] == "FLOCK" && strings.HasSuffix(f[6], suffix) {
				return
			}
		}
		time.Sleep(2 * time.Millisecond) // polling /proc/locks, with a deadline
	}
	t.Fatalf("nobody blocked on the flock of %s after 5 s; /proc/locks:\n%s", path, last)
}
