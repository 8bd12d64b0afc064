package store

import "context"

// PruneParams says what PruneHistory may remove. A cutoff of 0 prunes
// nothing of that kind.
type PruneParams struct {
	// EventsBefore: the events of every mission that ended before it
	// (Unix ms), and whose runs have all ended, are deleted.
	EventsBefore int64
	// AuditBefore: the audit records whose target is a mission that ended
	// before it are deleted.
	AuditBefore int64
	// Limit bounds the missions handled per call (one transaction each).
	Limit int
	// Now is recorded as the prune's time.
	Now int64
}

// PruneResult counts what PruneHistory removed.
type PruneResult struct {
	Missions int // missions whose events or audit records were pruned
	Events   int64
	Audit    int64
}

// Pruner removes the history of long-ended missions: their events and
// audit records. It never touches missions, runs, steps, waits or
// artifacts, so a mission's outcome and its journal stay. Both drivers
// implement it.
type Pruner interface {
	// PruneHistory prunes at most p.Limit missions and reports what it
	// removed; call it again while it returns Missions == p.Limit.
	PruneHistory(ctx context.Context, p PruneParams) (PruneResult, error)
	// EventsPrunedThrough returns the highest event position retention has
	// removed: of missionID's events, or of all events when missionID is
	// "". A reader whose cursor is below it may have missed events and
	// must resync; 0 means nothing was pruned.
	EventsPrunedThrough(ctx context.Context, missionID string) (int64, error)
}
