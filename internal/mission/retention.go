package mission

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/aos-run/aos/internal/store"
)

// Retention settings: the events and the audit records of a mission that
// ended more than this many days ago are pruned; its mission row, runs,
// steps (the journal and the outcome), waits and artifacts stay. 0 or
// unset keeps everything (the default).
const (
	SettingRetentionEventsDays = "retention_events_days" // integer
	SettingRetentionAuditDays  = "retention_audit_days"  // integer
)

// maxRetentionDays bounds the settings (about 100 years).
const maxRetentionDays = 36500

// pruneBatch is the number of missions pruned per store call.
const pruneBatch = 100

// PruneResult is what one PruneHistory pass removed.
type PruneResult = store.PruneResult

// PruneHistory applies the retention settings once: it prunes, in batches,
// the events and audit records of missions ended longer ago than the
// settings say. It does nothing when neither is set or the store cannot
// prune.
func (s *Service) PruneHistory(ctx context.Context) (PruneResult, error) {
	var total PruneResult
	pr, ok := s.st.(store.Pruner)
	if !ok {
		return total, nil
	}
	var evDays, auDays int
	if _, err := s.setting(ctx, SettingRetentionEventsDays, &evDays); err != nil {
		return total, err
	}
	if _, err := s.setting(ctx, SettingRetentionAuditDays, &auDays); err != nil {
		return total, err
	}
	now := s.now()
	cutoff := func(days int) int64 {
		if days <= 0 {
			return 0
		}
		return now.Add(-time.Duration(days) * 24 * time.Hour).UnixMilli()
	}
	p := store.PruneParams{EventsBefore: cutoff(evDays), AuditBefore: cutoff(auDays), Limit: pruneBatch, Now: now.UnixMilli()}
	if p.EventsBefore == 0 && p.AuditBefore == 0 {
		return total, nil
	}
	for {
		r, err := pr.PruneHistory(ctx, p)
		total.Missions += r.Missions
		total.Events += r.Events
		total.Audit += r.Audit
		if err != nil {
			return total, translate("prune history", err)
		}
		if r.Missions < pruneBatch {
			return total, nil
		}
	}
}

// RunRetention calls PruneHistory every `every` until ctx ends, logging
// what each pass removed. aos server runs it.
func (s *Service) RunRetention(ctx context.Context, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		r, err := s.PruneHistory(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("retention: prune history", "err", err.Error())
		case r.Missions > 0:
			log.Info("retention: pruned", "missions", r.Missions, "events", r.Events, "audit", r.Audit)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// CursorExpiredError says that retention pruned events after a reader's
// cursor: the reader must refetch state over REST and resume from
// LatestID. ReplayEvents returns it inside an *Error of code
// CodeCursorExpired (errors.As finds it).
type CursorExpiredError struct {
	Cursor   int64 // the reader's cursor
	Through  int64 // the highest position pruned
	LatestID int64 // where to resume
}

// Error says what was pruned.
func (e *CursorExpiredError) Error() string {
	return fmt.Sprintf("mission: %s: events up to %d were pruned by retention (cursor %d); refetch state and resume from %d",
		CodeCursorExpired, e.Through, e.Cursor, e.LatestID)
}

// checkCursor returns an *Error of code CodeCursorExpired, wrapping a
// *CursorExpiredError, when retention pruned events
// of missionID (of any mission when "") after cursor.
func (s *Service) checkCursor(ctx context.Context, cursor int64, missionID string) error {
	pr, ok := s.st.(store.Pruner)
	if !ok {
		return nil
	}
	through, err := pr.EventsPrunedThrough(ctx, missionID)
	if err != nil {
		return translate("read the events prune mark", err)
	}
	if cursor >= through {
		return nil
	}
	latest, err := s.LatestEventID(ctx)
	if err != nil {
		return err
	}
	cee := &CursorExpiredError{Cursor: cursor, Through: through, LatestID: latest}
	return &Error{Code: CodeCursorExpired, Msg: fmt.Sprintf("events up to %d were pruned by retention (cursor %d); refetch state and resume from %d",
		through, cursor, latest), Err: cee}
}
