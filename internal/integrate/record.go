// Package integrate applies verified change sets (internal/backend's
// content-addressed change-set records) to a target branch of a project,
// in order, one at a time (seed 002 S19). Each attempt records the
// expected and observed before-fingerprints (the target's commit), the
// outcome and the after-fingerprint; a conflict, a failed validation or an
// unverified change set rolls back (the target ref is never moved) and
// leaves a typed blocker with evidence, and the queue stops there until
// the owner retries or skips it. The records (IntegrationRecord and
// IntegrationStatus of the seed) live in a revisioned, checksummed host
// state file (internal/hoststate) and survive restarts: an attempt cut
// off between its journal entry and its end is reconciled from the
// target ref, so a change set lands exactly once.
//
// The owner's checked-out working tree is never modified: the merge is
// computed without a work tree (git merge-tree --write-tree), the commit
// is made with git commit-tree, and the target ref moves by a
// compare-and-swap (git update-ref NEW OLD); a target branch checked out
// in any work tree is refused.
//
// It imports gitx and hoststate only: the caller loads change sets (from
// the kernel's artifacts) through Options.Load.
package integrate

import (
	"encoding/json"
	"time"
)

// StateSchema names the state file's format.
const StateSchema = "aos.integration.v1"

// ChangeSetSchema is the change-set record format this package integrates
// (internal/backend's ChangeSetSchema).
const ChangeSetSchema = "aos.change-set.v1"

// ItemState is where one change set stands in its queue.
type ItemState string

// The item states (the seed's IntegrationStatus).
const (
	StateQueued      ItemState = "queued"
	StateIntegrating ItemState = "integrating"
	StateIntegrated  ItemState = "integrated"
	StateBlocked     ItemState = "blocked"
	StateSkipped     ItemState = "skipped"
)

// BlockerCode classifies why an item stopped its queue.
type BlockerCode string

// The blocker codes.
const (
	// BlockConflict: the change set does not merge onto the target.
	BlockConflict BlockerCode = "conflict"
	// BlockValidation: the merged commit failed validation.
	BlockValidation BlockerCode = "validation_failed"
	// BlockNotVerified: the change set is not a verified one (a refusal,
	// secret findings, a failed verification, no commit).
	BlockNotVerified BlockerCode = "not_verified"
	// BlockTargetMoved: the target branch is not where aos left it.
	BlockTargetMoved BlockerCode = "target_moved"
	// BlockUnreadable: the change set could not be loaded or decoded, or
	// its commit is not in the repository.
	BlockUnreadable BlockerCode = "change_set_unreadable"
)

// Blocker is what stops a queue at an item, with its evidence.
type Blocker struct {
	Code    BlockerCode `json:"code"`
	Message string      `json:"message"`
	// Files are the conflicted paths of a conflict.
	Files []string `json:"files,omitempty"`
	// Recovery says what the owner can do.
	Recovery string `json:"recovery"`
}

// Attempt is one integration attempt of an item (the seed's
// IntegrationRecord).
type Attempt struct {
	N int `json:"n"`
	// ExpectedBefore is the target commit aos last left (or found at the
	// first attempt); ObservedBefore what the target was at this attempt.
	ExpectedBefore string `json:"expectedBefore"`
	ObservedBefore string `json:"observedBefore"`
	// Candidate is the commit made for this attempt (its parent is
	// ObservedBefore), before the target moved to it.
	Candidate string `json:"candidate,omitempty"`
	// Outcome is integrated, conflict, validation_failed, not_verified,
	// target_moved, change_set_unreadable or interrupted.
	Outcome string `json:"outcome,omitempty"`
	// After is the target commit after a successful attempt.
	After   string    `json:"after,omitempty"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended,omitzero"`
}

// Item is one change set in a queue.
type Item struct {
	Ordinal   int       `json:"ordinal"`
	ChangeSet string    `json:"changeSet"` // SHA-256 of the record
	MissionID string    `json:"missionId,omitempty"`
	Commit    string    `json:"commit,omitempty"`
	State     ItemState `json:"state"`
	Blocker   *Blocker  `json:"blocker,omitempty"`
	Attempts  []Attempt `json:"attempts"`
	Queued    time.Time `json:"queued"`
}

// Queue is the ordered integration queue of one target branch of one
// repository.
type Queue struct {
	Repo   string `json:"repo"`
	Target string `json:"target"`
	// Tip is the target commit as aos last left it ("" until the first
	// attempt reads it).
	Tip   string `json:"tip"`
	Next  int    `json:"next"`
	Items []Item `json:"items"`
	// Dropped counts finished items removed by retention.
	Dropped int `json:"dropped,omitempty"`
}

// state is the host state file's content.
type state struct {
	Schema string            `json:"schema"`
	Queues map[string]*Queue `json:"queues"`
}

func queueKey(repo, target string) string { return repo + "\x00" + target }

func decodeState(raw json.RawMessage) (*state, error) {
	s := &state{Schema: StateSchema, Queues: map[string]*Queue{}}
	if len(raw) == 0 {
		return s, nil
	}
	if err := json.Unmarshal(raw, s); err != nil {
		return nil, &Error{Code: CodeCorrupt, Msg: "decode the integration state: " + err.Error()}
	}
	if s.Schema != StateSchema {
		return nil, &Error{Code: CodeCorrupt, Msg: "the integration state has schema " + s.Schema + ", want " + StateSchema}
	}
	if s.Queues == nil {
		s.Queues = map[string]*Queue{}
	}
	return s, nil
}

// changeSet is the part of a change-set record integration reads.
type changeSet struct {
	Schema       string            `json:"schema"`
	MissionID    string            `json:"missionId"`
	Branch       string            `json:"branch"`
	BaseCommit   string            `json:"baseCommit"`
	Commit       string            `json:"commit"`
	Refusal      string            `json:"refusal"`
	Findings     []json.RawMessage `json:"findings"`
	Verification []struct {
		Label   string `json:"label"`
		Allowed bool   `json:"allowed"`
		Ran     bool   `json:"ran"`
		Passed  bool   `json:"passed"`
	} `json:"verification"`
}

// verified returns why cs is not a verified change set, or "".
func (cs *changeSet) unverified() string {
	switch {
	case cs.Schema != ChangeSetSchema:
		return "schema " + cs.Schema + ", want " + ChangeSetSchema
	case cs.Commit == "":
		return "it has no commit"
	case cs.Refusal != "":
		return "its verification refused it: " + cs.Refusal
	case len(cs.Findings) > 0:
		return "its verification found possible secrets"
	}
	for _, v := range cs.Verification {
		if v.Ran && !v.Passed {
			return "its verification command " + v.Label + " failed"
		}
	}
	return ""
}
