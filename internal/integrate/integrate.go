package integrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aos-run/aos/internal/gitx"
	"github.com/aos-run/aos/internal/hoststate"
)

// Code classifies the package's errors; Error.Is matches on it.
type Code string

// Error codes.
const (
	CodeInvalid    Code = "invalid"     // bad input: a target, an id
	CodeNotFound   Code = "not_found"   // no such item
	CodeCheckedOut Code = "checked_out" // the target is checked out in a work tree
	CodeCorrupt    Code = "corrupt"     // the state's content is not what this build writes
	CodeState      Code = "invalid_state"
)

// Error is the package's typed failure.
type Error struct {
	Code Code
	Msg  string
}

// Error returns "integrate: <code>: <message>".
func (e *Error) Error() string { return "integrate: " + string(e.Code) + ": " + e.Msg }

// Is matches another *Error by code.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code
}

// Hooks are test kill points; nil in production.
type Hooks struct {
	// BeforeMove runs after the attempt is journaled, before the target
	// ref moves; an error ends Run there, as a crash would.
	BeforeMove func() error
	// AfterMove runs after the ref moved, before the outcome is
	// journaled; an error ends Run there.
	AfterMove func() error
}

// Options configure an Integrator.
type Options struct {
	// Repo is the project (gitx.Open'd: its config audited).
	Repo *gitx.Repo
	// Target is the branch change sets land on (a name under refs/heads).
	Target string
	// State is the host state file the records live in.
	State *hoststate.Store
	// Load returns a change-set record's bytes by its SHA-256.
	Load func(ctx context.Context, sha string) ([]byte, error)
	// Validate, when set, checks a candidate commit before the target
	// moves to it; an error is a validation_failed blocker.
	Validate func(ctx context.Context, commit string) error
	// Retain is how many finished (integrated or skipped) items a queue
	// keeps; 0 means 100. Blocked and pending items are always kept.
	Retain int
	// Now is the clock; time.Now when nil.
	Now   func() time.Time
	Hooks Hooks
}

// Integrator integrates change sets onto one target branch of one repo.
type Integrator struct {
	o Options
}

var branchName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$`) })

var hexSHA = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{64}$`) })

// New returns an Integrator, after checking the target's name.
func New(o Options) (*Integrator, error) {
	if !branchName().MatchString(o.Target) || strings.Contains(o.Target, "..") || strings.HasSuffix(o.Target, ".lock") ||
		strings.HasSuffix(o.Target, "/") || strings.Contains(o.Target, "//") {
		return nil, &Error{Code: CodeInvalid, Msg: fmt.Sprintf("target %q is not a branch name", o.Target)}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Retain <= 0 {
		o.Retain = 100
	}
	return &Integrator{o: o}, nil
}

func (in *Integrator) key() string { return queueKey(in.o.Repo.Dir(), in.o.Target) }

// update runs fn on the queue under the state file's lock and writes the
// result as the next revision.
func (in *Integrator) update(ctx context.Context, fn func(q *Queue) error) (Queue, error) {
	var out Queue
	_, err := in.o.State.Update(ctx, func(snap hoststate.Snapshot) (json.RawMessage, error) {
		s, err := decodeState(snap.State)
		if err != nil {
			return nil, err
		}
		q := s.Queues[in.key()]
		if q == nil {
			q = &Queue{Repo: in.o.Repo.Dir(), Target: in.o.Target, Next: 1}
			s.Queues[in.key()] = q
		}
		if err := fn(q); err != nil {
			return nil, err
		}
		in.retain(q)
		out = *q
		out.Items = append([]Item(nil), q.Items...)
		return json.Marshal(s)
	})
	return out, err
}

// Status returns the queue as recorded, without changing anything.
func (in *Integrator) Status(ctx context.Context) (Queue, error) {
	snap, err := in.o.State.Load(ctx)
	if err != nil {
		return Queue{}, err
	}
	s, err := decodeState(snap.State)
	if err != nil {
		return Queue{}, err
	}
	if q := s.Queues[in.key()]; q != nil {
		return *q, nil
	}
	return Queue{Repo: in.o.Repo.Dir(), Target: in.o.Target, Next: 1}, nil
}

// Enqueue appends change sets (by SHA-256), in the order given, after
// those already queued. A change set already in the queue is not added
// twice.
func (in *Integrator) Enqueue(ctx context.Context, shas ...string) (Queue, error) {
	for _, sha := range shas {
		if !hexSHA().MatchString(sha) {
			return Queue{}, &Error{Code: CodeInvalid, Msg: fmt.Sprintf("%q is not a change set's SHA-256", sha)}
		}
	}
	if err := in.checkTarget(ctx); err != nil {
		return Queue{}, err
	}
	now := in.o.Now().UTC()
	return in.update(ctx, func(q *Queue) error {
		for _, sha := range shas {
			if slicesIndex(q.Items, sha) >= 0 {
				continue
			}
			q.Items = append(q.Items, Item{Ordinal: q.Next, ChangeSet: sha, State: StateQueued, Attempts: []Attempt{}, Queued: now})
			q.Next++
		}
		return nil
	})
}

func slicesIndex(items []Item, sha string) int {
	for i, it := range items {
		if it.ChangeSet == sha {
			return i
		}
	}
	return -1
}

// Retry puts a blocked item back in the queue. For a target_moved blocker
// the target's current commit is adopted as where aos left it.
func (in *Integrator) Retry(ctx context.Context, ordinal int) (Queue, error) {
	return in.resolve(ctx, ordinal, func(q *Queue, it *Item) {
		if it.Blocker != nil && it.Blocker.Code == BlockTargetMoved {
			q.Tip = ""
		}
		it.State, it.Blocker = StateQueued, nil
	})
}

// Skip takes a blocked item out of the queue for good (it stays in the
// records as skipped), so that the next one can go.
func (in *Integrator) Skip(ctx context.Context, ordinal int) (Queue, error) {
	return in.resolve(ctx, ordinal, func(_ *Queue, it *Item) { it.State = StateSkipped })
}

func (in *Integrator) resolve(ctx context.Context, ordinal int, fn func(*Queue, *Item)) (Queue, error) {
	return in.update(ctx, func(q *Queue) error {
		for i := range q.Items {
			if q.Items[i].Ordinal != ordinal {
				continue
			}
			if q.Items[i].State != StateBlocked {
				return &Error{Code: CodeState, Msg: fmt.Sprintf("item %d is %s, not blocked", ordinal, q.Items[i].State)}
			}
			fn(q, &q.Items[i])
			return nil
		}
		return &Error{Code: CodeNotFound, Msg: fmt.Sprintf("no item %d in the queue of %s", ordinal, in.o.Target)}
	})
}

// retain drops the oldest finished items beyond Retain.
func (in *Integrator) retain(q *Queue) {
	finished := 0
	for _, it := range q.Items {
		if it.State == StateIntegrated || it.State == StateSkipped {
			finished++
		}
	}
	drop := finished - in.o.Retain
	if drop <= 0 {
		return
	}
	kept := q.Items[:0]
	for _, it := range q.Items {
		if drop > 0 && (it.State == StateIntegrated || it.State == StateSkipped) {
			drop--
			q.Dropped++
			continue
		}
		kept = append(kept, it)
	}
	q.Items = kept
}

// checkTarget refuses a target that does not exist or is checked out in a
// work tree (the owner's, or a mission's): moving it would change what
// that work tree's HEAD is.
func (in *Integrator) checkTarget(ctx context.Context) error {
	if _, err := in.rev(ctx, "refs/heads/"+in.o.Target); err != nil {
		return &Error{Code: CodeInvalid, Msg: fmt.Sprintf("the target branch %s does not exist in %s (create it: git branch %s)", in.o.Target, in.o.Repo.Dir(), in.o.Target)}
	}
	wts, err := in.o.Repo.Worktrees(ctx)
	if err != nil {
		return fmt.Errorf("integrate: list work trees: %w", err)
	}
	for _, w := range wts {
		if w.Branch == "refs/heads/"+in.o.Target {
			return &Error{Code: CodeCheckedOut, Msg: fmt.Sprintf("the target branch %s is checked out in %s; aos never changes a checked-out tree: "+
				"integrate onto another branch (for example aos/integration) and merge it yourself", in.o.Target, w.Path)}
		}
	}
	return nil
}

// rev returns the commit rev names.
func (in *Integrator) rev(ctx context.Context, rev string) (string, error) {
	r, err := in.o.Repo.Run(ctx, gitx.Cmd{Args: []string{"rev-parse", "--verify", "--quiet", rev + "^{commit}"}})
	if err != nil {
		return "", err
	}
	if r.Code != 0 {
		return "", fmt.Errorf("integrate: %s is not a commit", rev)
	}
	return strings.TrimSpace(r.Stdout), nil
}

// Queues returns every queue recorded in st, or those of repo and target
// when given (a repository's path as aos integrate resolved it), without
// changing anything or running git: the control socket's
// integration.status.
func Queues(ctx context.Context, st *hoststate.Store, repo, target string) ([]Queue, error) {
	snap, err := st.Load(ctx)
	if err != nil {
		return nil, err
	}
	s, err := decodeState(snap.State)
	if err != nil {
		return nil, err
	}
	out := []Queue{}
	for _, q := range s.Queues {
		if (repo == "" || q.Repo == repo) && (target == "" || q.Target == target) {
			out = append(out, *q)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Repo != out[j].Repo {
			return out[i].Repo < out[j].Repo
		}
		return out[i].Target < out[j].Target
	})
	return out, nil
}
