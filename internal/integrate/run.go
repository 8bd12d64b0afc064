package integrate

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aos-run/aos/internal/gitx"
)

// Run integrates the queue's items in order until it is empty or an item
// blocks (a blocked item stops the queue: later items wait for the owner's
// retry or skip). An attempt cut off by a crash is reconciled first from
// the target ref. It returns the queue as left.
func (in *Integrator) Run(ctx context.Context) (Queue, error) {
	if err := in.checkTarget(ctx); err != nil {
		return Queue{}, err
	}
	for {
		q, err := in.Status(ctx)
		if err != nil {
			return q, err
		}
		it, ok := nextItem(q)
		if !ok {
			return q, nil
		}
		switch it.State {
		case StateBlocked:
			return q, nil
		case StateIntegrating:
			if err := in.reconcile(ctx, it); err != nil {
				return q, err
			}
		case StateQueued:
			if err := in.attempt(ctx, q, it); err != nil {
				return q, err
			}
		}
	}
}

// nextItem returns the first item that is not finished.
func nextItem(q Queue) (Item, bool) {
	for _, it := range q.Items {
		if it.State != StateIntegrated && it.State != StateSkipped {
			return it, true
		}
	}
	return Item{}, false
}

// finish records an attempt's end: the item's state, its blocker, the
// attempt's outcome and after-fingerprint, and the queue's tip.
func (in *Integrator) finish(ctx context.Context, ordinal int, st ItemState, b *Blocker, outcome, after string) error {
	_, err := in.update(ctx, func(q *Queue) error {
		for i := range q.Items {
			it := &q.Items[i]
			if it.Ordinal != ordinal {
				continue
			}
			it.State, it.Blocker = st, b
			if n := len(it.Attempts); n > 0 {
				a := &it.Attempts[n-1]
				a.Outcome, a.After, a.Ended = outcome, after, in.o.Now().UTC()
			}
			if after != "" {
				q.Tip = after
			}
			return nil
		}
		return &Error{Code: CodeNotFound, Msg: fmt.Sprintf("item %d left the queue", ordinal)}
	})
	return err
}

// block ends the current attempt of item ordinal with a blocker.
func (in *Integrator) block(ctx context.Context, ordinal int, code BlockerCode, msg string, files []string) error {
	rec := "fix it and run aos integrate retry " + fmt.Sprint(ordinal) + ", or aos integrate skip " + fmt.Sprint(ordinal)
	if code == BlockTargetMoved {
		rec = "check the target branch, then aos integrate retry " + fmt.Sprint(ordinal) + " (adopts its current commit) or aos integrate skip " + fmt.Sprint(ordinal)
	}
	return in.finish(ctx, ordinal, StateBlocked, &Blocker{Code: code, Message: msg, Files: files, Recovery: rec}, string(code), "")
}

// begin journals a new attempt of item ordinal (expected and observed
// before-fingerprints; the candidate once it exists).
func (in *Integrator) begin(ctx context.Context, ordinal int, a Attempt, st ItemState, cs *changeSet) error {
	_, err := in.update(ctx, func(q *Queue) error {
		for i := range q.Items {
			it := &q.Items[i]
			if it.Ordinal != ordinal {
				continue
			}
			if it.State != StateQueued {
				return &Error{Code: CodeState, Msg: fmt.Sprintf("item %d is %s, not queued: another aos integrate runs", ordinal, it.State)}
			}
			a.N = len(it.Attempts) + 1
			it.Attempts = append(it.Attempts, a)
			it.State = st
			if cs != nil {
				it.MissionID, it.Commit = cs.MissionID, cs.Commit
			}
			if q.Tip == "" {
				q.Tip = a.ObservedBefore
			}
			return nil
		}
		return &Error{Code: CodeNotFound, Msg: fmt.Sprintf("item %d left the queue", ordinal)}
	})
	return err
}

// attempt integrates one queued item.
func (in *Integrator) attempt(ctx context.Context, q Queue, it Item) error {
	observed, err := in.rev(ctx, "refs/heads/"+in.o.Target)
	if err != nil {
		return err
	}
	expected := q.Tip
	if expected == "" {
		expected = observed
	}
	a := Attempt{ExpectedBefore: expected, ObservedBefore: observed, Started: in.o.Now().UTC()}
	cs, why := in.load(ctx, it.ChangeSet)
	if why == "" && cs.unverified() != "" {
		if err := in.begin(ctx, it.Ordinal, a, StateQueued, cs); err != nil {
			return err
		}
		return in.block(ctx, it.Ordinal, BlockNotVerified, "the change set is not verified: "+cs.unverified(), nil)
	}
	if why == "" {
		if r, err := in.o.Repo.Run(ctx, gitx.Cmd{Args: []string{"cat-file", "-e", cs.Commit + "^{commit}"}}); err != nil || r.Code != 0 {
			why = "its commit " + cs.Commit + " is not in the repository"
		}
	}
	if why != "" {
		if err := in.begin(ctx, it.Ordinal, a, StateQueued, cs); err != nil {
			return err
		}
		return in.block(ctx, it.Ordinal, BlockUnreadable, why, nil)
	}
	if expected != observed {
		if err := in.begin(ctx, it.Ordinal, a, StateQueued, cs); err != nil {
			return err
		}
		return in.block(ctx, it.Ordinal, BlockTargetMoved, fmt.Sprintf("the target %s is at %s, not at %s where aos left it", in.o.Target, short(observed), short(expected)), nil)
	}
	tree, conflicts, err := in.merge(ctx, observed, cs.Commit)
	if err != nil {
		return err
	}
	if conflicts != nil {
		if err := in.begin(ctx, it.Ordinal, a, StateQueued, cs); err != nil {
			return err
		}
		return in.block(ctx, it.Ordinal, BlockConflict, fmt.Sprintf("the change set conflicts with %s in %d file(s); the target was not changed", in.o.Target, len(conflicts)), conflicts)
	}
	if a.Candidate, err = in.commit(ctx, tree, observed, it.ChangeSet, cs); err != nil {
		return err
	}
	if err := in.begin(ctx, it.Ordinal, a, StateIntegrating, cs); err != nil {
		return err
	}
	if in.o.Validate != nil {
		if verr := in.o.Validate(ctx, a.Candidate); verr != nil {
			return in.rollback(ctx, it.Ordinal, BlockValidation, "validation of the merged commit failed: "+clip(verr.Error(), 500))
		}
	}
	return in.move(ctx, it.Ordinal, a)
}

// rollback ends an integrating attempt whose target has not moved with a
// blocker (the candidate commit is left unreferenced).
func (in *Integrator) rollback(ctx context.Context, ordinal int, code BlockerCode, msg string) error {
	_, err := in.update(ctx, func(q *Queue) error {
		for i := range q.Items {
			if q.Items[i].Ordinal == ordinal && q.Items[i].State == StateIntegrating {
				q.Items[i].State = StateQueued // block() expects an attempt to end
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return in.block(ctx, ordinal, code, msg, nil)
}

// move moves the target from the attempt's observed commit to its
// candidate by compare-and-swap, then records the outcome.
func (in *Integrator) move(ctx context.Context, ordinal int, a Attempt) error {
	if h := in.o.Hooks.BeforeMove; h != nil {
		if err := h(); err != nil {
			return err
		}
	}
	r, err := in.o.Repo.Run(ctx, gitx.Cmd{Args: []string{"update-ref", "-m", "aos integrate", "refs/heads/" + in.o.Target, a.Candidate, a.ObservedBefore}})
	if err != nil {
		return fmt.Errorf("integrate: move %s: %w", in.o.Target, err)
	}
	if r.Code != 0 {
		return in.rollback(ctx, ordinal, BlockTargetMoved, fmt.Sprintf("the target %s moved while integrating: %s", in.o.Target, clip(r.Combined, 300)))
	}
	if h := in.o.Hooks.AfterMove; h != nil {
		if err := h(); err != nil {
			return err
		}
	}
	return in.finish(ctx, ordinal, StateIntegrated, nil, "integrated", a.Candidate)
}

// reconcile settles an attempt a crash cut off, from where the target is:
// at the candidate, it landed; at the observed commit, it did not and is
// retried; elsewhere, the target moved under it.
func (in *Integrator) reconcile(ctx context.Context, it Item) error {
	a := it.Attempts[len(it.Attempts)-1]
	tip, err := in.rev(ctx, "refs/heads/"+in.o.Target)
	if err != nil {
		return err
	}
	switch tip {
	case a.Candidate:
		return in.finish(ctx, it.Ordinal, StateIntegrated, nil, "integrated", a.Candidate)
	case a.ObservedBefore:
		return in.finish(ctx, it.Ordinal, StateQueued, nil, "interrupted", "")
	}
	return in.rollback(ctx, it.Ordinal, BlockTargetMoved, fmt.Sprintf("an interrupted attempt left %s at %s, neither its base %s nor its commit %s",
		in.o.Target, short(tip), short(a.ObservedBefore), short(a.Candidate)))
}

// load reads and decodes a change set; a reason it cannot be used is the
// second result.
func (in *Integrator) load(ctx context.Context, sha string) (*changeSet, string) {
	body, err := in.o.Load(ctx, sha)
	if err != nil {
		return nil, "load the change set: " + clip(err.Error(), 300)
	}
	var cs changeSet
	if err := json.Unmarshal(body, &cs); err != nil {
		return nil, "decode the change set: " + clip(err.Error(), 300)
	}
	if !isHex(cs.Commit) && cs.Commit != "" {
		return nil, "its commit is not a commit id"
	}
	return &cs, ""
}

// merge merges commit onto onto without a work tree; conflicts lists the
// conflicted paths (nil when it merged cleanly).
func (in *Integrator) merge(ctx context.Context, onto, commit string) (tree string, conflicts []string, err error) {
	r, err := in.o.Repo.Run(ctx, gitx.Cmd{Args: []string{"merge-tree", "--write-tree", "--name-only", "--no-messages", onto, commit}})
	if err != nil {
		return "", nil, fmt.Errorf("integrate: merge: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	switch r.Code {
	case 0:
		return lines[0], nil, nil
	case 1:
		files := []string{}
		for _, l := range lines[1:] {
			if l = strings.TrimSpace(l); l != "" && len(files) < 100 {
				files = append(files, l)
			}
		}
		return "", files, nil
	}
	return "", nil, fmt.Errorf("integrate: merge-tree exit %d: %s", r.Code, clip(r.Combined, 300))
}

// commit makes the integration commit: tree on parent, naming the change
// set and its mission in trailers.
func (in *Integrator) commit(ctx context.Context, tree, parent, sha string, cs *changeSet) (string, error) {
	env, err := in.o.Repo.IdentityEnv(ctx)
	if err != nil {
		return "", err
	}
	msg := fmt.Sprintf("Integrate change set %s\n\nAos-Change-Set: %s\nAos-Mission: %s\nAos-Source-Commit: %s\n", sha[:12], sha, cs.MissionID, cs.Commit)
	r, err := in.o.Repo.Run(ctx, gitx.Cmd{Args: []string{"commit-tree", tree, "-p", parent, "-F", "-"}, Stdin: msg, Env: env})
	if err != nil {
		return "", fmt.Errorf("integrate: commit: %w", err)
	}
	if r.Code != 0 {
		return "", fmt.Errorf("integrate: commit-tree exit %d: %s", r.Code, clip(r.Combined, 300))
	}
	return strings.TrimSpace(r.Stdout), nil
}

func isHex(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func short(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
