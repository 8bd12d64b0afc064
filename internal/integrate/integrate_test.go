package integrate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/gitx"
	"github.com/aos-run/aos/internal/hoststate"
	"github.com/aos-run/aos/internal/integrate"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store/storetest"
)

// fixture is a project with an owner's checkout on main, a target branch
// aos/integration, and change sets stored as kernel artifacts on a real
// database.
type fixture struct {
	t       *testing.T
	dir     string
	repo    *gitx.Repo
	k       *kernel.Kernel
	state   *hoststate.Store
	base    string
	dataDir string
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func newFixture(t *testing.T, driver string) *fixture {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "app")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q")
	write(t, dir, "a.txt", "one\ntwo\nthree\n")
	write(t, dir, "b.txt", "bee\n")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-qm", "base")
	base := git(t, dir, "rev-parse", "HEAD")
	git(t, dir, "branch", "aos/integration")
	dataDir := t.TempDir()
	repo, err := gitx.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := hoststate.Open(filepath.Join(dataDir, "integration"), "integrations", hoststate.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, dir: dir, repo: repo, k: kernel.New(storetest.New(t, driver).Store, kernel.Options{DataDir: dataDir}),
		state: st, base: base, dataDir: dataDir}
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// changeSet commits edits on a mission branch from the base (in a linked
// worktree, as missions do) and stores its change-set record; it returns
// the record's SHA-256.
func (f *fixture) changeSet(mission string, edits map[string]string, mods ...func(map[string]any)) string {
	t := f.t
	t.Helper()
	wt := filepath.Join(t.TempDir(), mission)
	git(t, f.dir, "worktree", "add", "-q", "-b", "aos/"+mission, wt, f.base)
	for name, content := range edits {
		write(t, wt, name, content)
	}
	git(t, wt, "add", ".")
	git(t, wt, "commit", "-qm", "mission "+mission)
	commit := git(t, wt, "rev-parse", "HEAD")
	git(t, f.dir, "worktree", "remove", "--force", wt)
	rec := map[string]any{"schema": "aos.change-set.v1", "missionId": mission, "runId": "r-" + mission, "engine": "command",
		"branch": "aos/" + mission, "baseCommit": f.base, "commit": commit, "files": []any{}, "writeSet": []string{},
		"verification": []map[string]any{{"label": "tests", "argv": []string{"true"}, "allowed": true, "ran": true, "passed": true}}, "engineStatus": "done"}
	for _, m := range mods {
		m(rec)
	}
	body, _ := json.Marshal(rec)
	sha, _, err := f.k.PutArtifact(context.Background(), bytes.NewReader(body), kernel.ArtifactMeta{Name: "change-set.json", Mime: "application/json", StepSeq: -1})
	if err != nil {
		t.Fatal(err)
	}
	return sha
}

func (f *fixture) integrator(mods ...func(*integrate.Options)) *integrate.Integrator {
	f.t.Helper()
	o := integrate.Options{Repo: f.repo, Target: "aos/integration", State: f.state,
		Load: func(ctx context.Context, sha string) ([]byte, error) {
			file, _, err := f.k.OpenArtifact(ctx, sha)
			if err != nil {
				return nil, err
			}
			defer file.Close()
			return io.ReadAll(file)
		}}
	for _, m := range mods {
		m(&o)
	}
	in, err := integrate.New(o)
	if err != nil {
		f.t.Fatal(err)
	}
	return in
}

// ownerUntouched checks the owner's checkout: HEAD, branch and a clean
// status, as they were.
func (f *fixture) ownerUntouched() {
	f.t.Helper()
	if head := git(f.t, f.dir, "rev-parse", "HEAD"); head != f.base {
		f.t.Errorf("owner's HEAD moved to %s", head)
	}
	if br := git(f.t, f.dir, "symbolic-ref", "HEAD"); br != "refs/heads/main" {
		f.t.Errorf("owner's branch is %s", br)
	}
	if st := git(f.t, f.dir, "status", "--porcelain"); st != "" {
		f.t.Errorf("owner's tree changed:\n%s", st)
	}
}

func drivers(t *testing.T, fn func(t *testing.T, driver string)) {
	for _, d := range []string{"sqlite", "postgres"} {
		t.Run(d, func(t *testing.T) { t.Parallel(); fn(t, d) })
	}
}

// TestOrderedIntegration: two verified change sets from two missions land
// on the target in order, each attempt recorded with its before and after
// fingerprints; a third that conflicts with the first is rolled back (the
// target does not move) and leaves a conflict blocker naming the file; the
// owner's checkout is untouched; a skip lets the queue go on.
func TestOrderedIntegration(t *testing.T) {
	drivers(t, func(t *testing.T, driver string) {
		f := newFixture(t, driver)
		ctx := context.Background()
		cs1 := f.changeSet("m1", map[string]string{"a.txt": "ONE\ntwo\nthree\n"})
		cs2 := f.changeSet("m2", map[string]string{"b.txt": "BEE\n", "c.txt": "new\n"})
		cs3 := f.changeSet("m3", map[string]string{"a.txt": "uno\ntwo\nthree\n"})
		cs4 := f.changeSet("m4", map[string]string{"d.txt": "dee\n"})
		in := f.integrator()
		if _, err := in.Enqueue(ctx, cs1, cs2, cs3, cs4); err != nil {
			t.Fatal(err)
		}
		q, err := in.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		states := []integrate.ItemState{}
		for _, it := range q.Items {
			states = append(states, it.State)
		}
		want := []integrate.ItemState{integrate.StateIntegrated, integrate.StateIntegrated, integrate.StateBlocked, integrate.StateQueued}
		if !equal(states, want) {
			t.Fatalf("states %v, want %v", states, want)
		}
		i1, i2, i3 := q.Items[0], q.Items[1], q.Items[2]
		a1, a2 := i1.Attempts[0], i2.Attempts[0]
		if a1.ExpectedBefore != f.base || a1.ObservedBefore != f.base || a2.ObservedBefore != a1.After || a2.ExpectedBefore != a1.After || a1.Outcome != "integrated" {
			t.Errorf("fingerprints: %+v then %+v", a1, a2)
		}
		tip := git(t, f.dir, "rev-parse", "aos/integration")
		if tip != a2.After || q.Tip != tip {
			t.Errorf("target at %s, want the second's after %s (queue tip %s)", tip, a2.After, q.Tip)
		}
		// In order: the second's commit has the first's as its parent.
		if parent := git(t, f.dir, "rev-parse", tip+"^"); parent != a1.After {
			t.Errorf("the second integration's parent is %s, want the first's %s", parent, a1.After)
		}
		if got := git(t, f.dir, "show", tip+":a.txt"); got != "ONE\ntwo\nthree" {
			t.Errorf("a.txt on the target = %q", got)
		}
		if got := git(t, f.dir, "show", tip+":c.txt"); got != "new" {
			t.Errorf("c.txt on the target = %q", got)
		}
		if !strings.Contains(git(t, f.dir, "log", "-1", "--format=%B", tip), "Aos-Change-Set: "+cs2) {
			t.Errorf("the integration commit does not name its change set")
		}
		if i3.Blocker == nil || i3.Blocker.Code != integrate.BlockConflict || !equal(i3.Blocker.Files, []string{"a.txt"}) ||
			i3.Attempts[0].Outcome != "conflict" || i3.Attempts[0].After != "" || !strings.Contains(i3.Blocker.Recovery, "aos integrate skip 3") {
			t.Errorf("conflict item %+v (blocker %+v)", i3, i3.Blocker)
		}
		f.ownerUntouched()

		// Status is durable: a new integrator (a restart) reads the same.
		again, err := f.integrator().Status(ctx)
		if err != nil || len(again.Items) != 4 || again.Items[2].State != integrate.StateBlocked {
			t.Fatalf("status after restart: %+v, %v", again, err)
		}
		// The blocked item holds the queue until the owner resolves it.
		if _, err := in.Skip(ctx, 3); err != nil {
			t.Fatal(err)
		}
		q, err = in.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if q.Items[2].State != integrate.StateSkipped || q.Items[3].State != integrate.StateIntegrated {
			t.Errorf("after skip: %+v", q.Items)
		}
		if got := git(t, f.dir, "rev-parse", "aos/integration^"); got != tip {
			t.Errorf("the fourth landed on %s, want on the second's %s", got, tip)
		}
		f.ownerUntouched()
	})
}

// TestRollbacks: an unverified change set and one whose merged commit
// fails validation block, and the target does not move.
func TestRollbacks(t *testing.T) {
	drivers(t, func(t *testing.T, driver string) {
		f := newFixture(t, driver)
		ctx := context.Background()
		failed := f.changeSet("m1", map[string]string{"a.txt": "x\n"}, func(r map[string]any) {
			r["verification"] = []map[string]any{{"label": "tests", "allowed": true, "ran": true, "passed": false}}
		})
		bad := f.changeSet("m2", map[string]string{"bad.txt": "bad\n"})
		in := f.integrator(func(o *integrate.Options) {
			o.Validate = func(ctx context.Context, commit string) error {
				r, err := f.repo.Run(ctx, gitx.Cmd{Args: []string{"cat-file", "-e", commit + ":bad.txt"}})
				if err == nil && r.Code == 0 {
					return errors.New("bad.txt must not land")
				}
				return nil
			}
		})
		if _, err := in.Enqueue(ctx, failed, bad); err != nil {
			t.Fatal(err)
		}
		q, err := in.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if b := q.Items[0].Blocker; b == nil || b.Code != integrate.BlockNotVerified || !strings.Contains(b.Message, "tests") {
			t.Fatalf("unverified: %+v", q.Items[0])
		}
		if _, err := in.Skip(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if q, err = in.Run(ctx); err != nil {
			t.Fatal(err)
		}
		it := q.Items[1]
		if it.Blocker == nil || it.Blocker.Code != integrate.BlockValidation || it.Attempts[0].Candidate == "" || it.Attempts[0].After != "" {
			t.Fatalf("validation: %+v", it)
		}
		if tip := git(t, f.dir, "rev-parse", "aos/integration"); tip != f.base {
			t.Errorf("the target moved to %s after rollbacks", tip)
		}
		f.ownerUntouched()
	})
}

// TestRestartMidIntegration: a crash after the attempt is journaled and
// before the ref moves, and one after the ref moved and before the outcome
// is journaled, each end with the change set landed exactly once.
func TestRestartMidIntegration(t *testing.T) {
	crash := errors.New("crash")
	for _, point := range []string{"before move", "after move"} {
		t.Run(point, func(t *testing.T) {
			drivers(t, func(t *testing.T, driver string) {
				f := newFixture(t, driver)
				ctx := context.Background()
				cs := f.changeSet("m1", map[string]string{"a.txt": "ONE\n"})
				in := f.integrator(func(o *integrate.Options) {
					if point == "before move" {
						o.Hooks.BeforeMove = func() error { return crash }
					} else {
						o.Hooks.AfterMove = func() error { return crash }
					}
				})
				if _, err := in.Enqueue(ctx, cs); err != nil {
					t.Fatal(err)
				}
				if _, err := in.Run(ctx); !errors.Is(err, crash) {
					t.Fatalf("run: %v, want the crash", err)
				}
				q, err := f.integrator().Status(ctx)
				if err != nil || q.Items[0].State != integrate.StateIntegrating {
					t.Fatalf("after the crash: %+v, %v", q.Items, err)
				}
				q, err = f.integrator().Run(ctx)
				if err != nil {
					t.Fatal(err)
				}
				it := q.Items[0]
				if it.State != integrate.StateIntegrated {
					t.Fatalf("after restart: %+v", it)
				}
				tip := git(t, f.dir, "rev-parse", "aos/integration")
				if parent := git(t, f.dir, "rev-parse", tip+"^"); parent != f.base {
					t.Errorf("landed more than once: %s's parent is %s, want the base", tip, parent)
				}
				last := it.Attempts[len(it.Attempts)-1]
				if last.After != tip || q.Tip != tip {
					t.Errorf("attempts %+v, tip %s", it.Attempts, tip)
				}
				if point == "before move" && (len(it.Attempts) != 2 || it.Attempts[0].Outcome != "interrupted") {
					t.Errorf("before move: attempts %+v, want an interrupted one then the landing", it.Attempts)
				}
				if point == "after move" && len(it.Attempts) != 1 {
					t.Errorf("after move: attempts %+v, want the one that landed", it.Attempts)
				}
			})
		})
	}
}

// TestRetentionAndRefusals: finished items beyond Retain are dropped
// (blocked ones kept); a target checked out in a work tree and a target
// moved behind aos's back are refused.
func TestRetentionAndRefusals(t *testing.T) {
	drivers(t, func(t *testing.T, driver string) {
		f := newFixture(t, driver)
		ctx := context.Background()
		var shas []string
		for _, m := range []string{"m1", "m2", "m3"} {
			shas = append(shas, f.changeSet(m, map[string]string{m + ".txt": m + "\n"}))
		}
		in := f.integrator(func(o *integrate.Options) { o.Retain = 1 })
		if _, err := in.Enqueue(ctx, shas...); err != nil {
			t.Fatal(err)
		}
		q, err := in.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(q.Items) != 1 || q.Items[0].Ordinal != 3 || q.Dropped != 2 {
			t.Errorf("retention 1: items %+v dropped %d, want only the third, 2 dropped", q.Items, q.Dropped)
		}

		// The target moved behind aos's back: blocked, not overwritten.
		git(t, f.dir, "branch", "-f", "aos/integration", f.base)
		late := f.changeSet("m4", map[string]string{"m4.txt": "x\n"})
		if _, err := in.Enqueue(ctx, late); err != nil {
			t.Fatal(err)
		}
		q, err = in.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		it := q.Items[len(q.Items)-1]
		if it.Blocker == nil || it.Blocker.Code != integrate.BlockTargetMoved {
			t.Fatalf("moved target: %+v", it)
		}
		if tip := git(t, f.dir, "rev-parse", "aos/integration"); tip != f.base {
			t.Errorf("target overwritten to %s", tip)
		}
		if _, err := in.Retry(ctx, it.Ordinal); err != nil {
			t.Fatal(err)
		}
		if q, err = in.Run(ctx); err != nil || q.Items[len(q.Items)-1].State != integrate.StateIntegrated {
			t.Fatalf("retry after adopting the moved target: %+v, %v", q.Items, err)
		}

		// The owner's checked-out branch is never a target.
		main := f.integrator(func(o *integrate.Options) { o.Target = "main" })
		if _, err := main.Enqueue(ctx, late); !errors.Is(err, &integrate.Error{Code: integrate.CodeCheckedOut}) {
			t.Errorf("checked-out target: %v", err)
		}
		f.ownerUntouched()
	})
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
