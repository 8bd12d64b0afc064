package kernel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// Issue 11: an owner's "run it" authorizes ONE execution attempt. Each case
// starts from a run killed after step 5's effect (no probe), so its resume
// asks; then it crashes again around the answer.

func (c *chaosRun) answer(t *testing.T, w store.Wait, answer string) {
	t.Helper()
	if _, err := c.b.k.ResolveWait(context.Background(), w.ID, map[string]string{"answer": answer}, "owner"); err != nil {
		t.Fatal(err)
	}
}

func (c *chaosRun) waits(t *testing.T) []store.Wait {
	t.Helper()
	ws, err := c.b.db.Store.ListWaits(context.Background(), store.ListWaitsParams{RunID: c.rid})
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// firstQuestion kills the run after step 5's effect and resumes it up to
// the reconcile question, which it returns.
func (c *chaosRun) firstQuestion(t *testing.T) store.Wait {
	t.Helper()
	if err := c.child(t, "5:after_exec"); !killedBySignal(err) {
		t.Fatalf("not killed at 5:after_exec: %v", err)
	}
	if err := c.child(t, ""); err != nil {
		t.Fatal(err)
	}
	return c.b.pendingWait(c.rid)
}

func (c *chaosRun) nu(t *testing.T) int { return countLines(t, filepath.Join(c.dir, "nu.log"), "") }

func TestReconcileRerunThenCrashAsksAgain(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		for _, tc := range []struct {
			name     string
			kill     string // where the run dies after the owner said "run it"
			wantNU   int    // effects after that crash
			askAgain bool
		}{
			// The re-run's effect landed, then the process died before its
			// result: a new uncertainty, a new question.
			{"during_rerun", "5:after_exec", 2, true},
			// The answer was consumed (attempt 1 started), nothing ran yet:
			// aos cannot know that, so it asks again.
			{"after_attempt_started", "5:after_intent", 1, true},
			// Killed before the answer was consumed: the answer still holds,
			// the step runs once, with no new question.
			{"before_attempt_started", "5:before_intent", 1, false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c := newChaosRun(t, storetest.New(t, db.Driver))
				w1 := c.firstQuestion(t)
				c.answer(t, w1, kernel.ReconcileRerun)
				if err := c.child(t, tc.kill); !killedBySignal(err) {
					t.Fatalf("not killed at %s after the answer: %v", tc.kill, err)
				}
				if n := c.nu(t); n != tc.wantNU {
					t.Fatalf("after the second crash the effect happened %d times, want %d", n, tc.wantNU)
				}
				if err := c.child(t, ""); err != nil {
					t.Fatal(err)
				}
				if !tc.askAgain {
					if got := c.result(t); got.Status != kernel.StatusDone {
						t.Fatalf("status = %s %s, want done", got.Status, got.Error)
					}
					if n := c.nu(t); n != 2 {
						t.Errorf("effect happened %d times, want 2 (the original and the one authorized re-run)", n)
					}
					if ws := c.waits(t); len(ws) != 1 {
						t.Errorf("%d waits, want the one question", len(ws))
					}
					return
				}
				if got := c.result(t); got.Status != kernel.StatusWaiting {
					t.Fatalf("status = %s %s, want waiting on a new question (the used answer must not authorize another run)", got.Status, got.Error)
				}
				if n := c.nu(t); n != tc.wantNU {
					t.Fatalf("effect happened %d times before the new question, want %d: an unasked re-run", n, tc.wantNU)
				}
				w2 := c.b.pendingWait(c.rid)
				var p struct {
					Reconcile bool   `json:"reconcile"`
					Attempt   int    `json:"attempt"`
					Known     string `json:"known"`
				}
				if err := json.Unmarshal(w2.Payload, &p); err != nil || w2.ID == w1.ID || !p.Reconcile || p.Attempt != 1 || w2.Attempt != 1 {
					t.Fatalf("second question %s = %s (attempt %d), first %s; want a new question about attempt 1", w2.ID, w2.Payload, w2.Attempt, w1.ID)
				}
				if ws := c.waits(t); len(ws) != 2 {
					t.Fatalf("%d waits, want 2", len(ws))
				}
				// Answer truthfully this time.
				answer := kernel.ReconcileRan
				if tc.wantNU == 1 {
					answer = kernel.ReconcileRerun
				}
				c.answer(t, w2, answer)
				if err := c.child(t, ""); err != nil {
					t.Fatal(err)
				}
				if got := c.result(t); got.Status != kernel.StatusDone {
					t.Fatalf("final status = %s %s, want done", got.Status, got.Error)
				}
				if n := c.nu(t); n != 2 {
					t.Errorf("effect happened %d times, want 2", n)
				}
			})
		}
	})
}

func TestReconcileKillWhileQuestionPending(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		c := newChaosRun(t, storetest.New(t, db.Driver))
		w := c.firstQuestion(t)
		// A worker that stays up while the question is pending, killed.
		c.resumes++
		ch := startChild(t, "chaos", append(c.env, "AOS_TEST_STAY=1", "AOS_TEST_CLOCK_OFFSET=600s")...)
		waitFor(t, 20*time.Second, "the worker to see the waiting run", func() (bool, string) {
			ws, err := c.b.db.Store.ListWorkers(context.Background())
			for _, w := range ws {
				if strings.HasSuffix(w.ID, fmt.Sprintf("-%d", ch.cmd.Process.Pid)) {
					return true, ""
				}
			}
			return false, fmt.Sprint(ws, err)
		})
		_ = ch.cmd.Process.Signal(syscall.SIGKILL)
		if err := ch.wait(t, 20*time.Second); !killedBySignal(err) {
			t.Fatalf("worker not killed: %v", err)
		}
		c.answer(t, w, kernel.ReconcileRerun)
		if err := c.child(t, ""); err != nil {
			t.Fatal(err)
		}
		if got := c.result(t); got.Status != kernel.StatusDone {
			t.Fatalf("status = %s %s, want done", got.Status, got.Error)
		}
		if n := c.nu(t); n != 2 {
			t.Errorf("effect happened %d times, want 2", n)
		}
		if ws := c.waits(t); len(ws) != 1 {
			t.Errorf("%d waits, want the one question", len(ws))
		}
	})
}
