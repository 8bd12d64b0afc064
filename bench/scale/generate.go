package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/aos-run/aos/internal/store"
)

// template is everything one real mission wrote: its mission row, runs,
// steps, events and audit records, read back through the store.
type template struct {
	mission store.Mission
	runs    []store.Run
	steps   map[string][]store.Step // by run id
	events  []store.Event
	audit   []store.AuditRecord
}

func readTemplate(ctx context.Context, st store.Store, missionID string) (*template, error) {
	t := &template{steps: map[string][]store.Step{}}
	var err error
	if t.mission, err = st.GetMission(ctx, missionID); err != nil {
		return nil, fmt.Errorf("read mission: %w", err)
	}
	if t.runs, err = st.ListRunsByMission(ctx, missionID); err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	for _, r := range t.runs {
		ss, err := st.ListSteps(ctx, r.ID, -1, 100000)
		if err != nil {
			return nil, fmt.Errorf("read steps: %w", err)
		}
		t.steps[r.ID] = ss
	}
	for after := int64(0); ; {
		es, err := st.ListEvents(ctx, store.ListEventsParams{After: after, MissionID: missionID, Limit: 1000})
		if err != nil {
			return nil, fmt.Errorf("read events: %w", err)
		}
		if len(es) == 0 {
			break
		}
		t.events = append(t.events, es...)
		after = es[len(es)-1].ID
	}
	as, err := st.ListAudit(ctx, store.ListAuditParams{Limit: 1000})
	if err != nil {
		return nil, fmt.Errorf("read audit: %w", err)
	}
	for i := len(as) - 1; i >= 0; i-- {
		if as[i].Target == missionID {
			t.audit = append(t.audit, as[i])
		}
	}
	return t, nil
}

func (t *template) stepCount() int {
	n := 0
	for _, ss := range t.steps {
		n += len(ss)
	}
	return n
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// clone writes one copy of the template as a new mission created at
// `at` (ms), with every id the template's rows and payloads name replaced,
// in one transaction, through the store's own inserts: the rows a real
// run of the same script would have written. A failed copy (every tenth,
// by its index) ends "failed", so a status filter has something to find.
func (t *template) clone(ctx context.Context, st store.Store, i int, at int64) error {
	ids := map[string]string{t.mission.ID: newID()}
	for _, r := range t.runs {
		ids[r.ID] = newID()
	}
	swap := func(b []byte) []byte {
		for old, nu := range ids {
			b = bytes.ReplaceAll(b, []byte(old), []byte(nu))
		}
		return b
	}
	shift := at - t.mission.CreatedAt
	sh := func(v int64) int64 {
		if v == 0 {
			return 0
		}
		return v + shift
	}
	status := t.mission.Status
	if i%10 == 9 {
		status = "failed"
	}
	return st.Tx(ctx, func(q store.Queries) error {
		m := t.mission
		m.ID, m.RootRunID = ids[m.ID], ids[m.RootRunID]
		m.Spec, m.Result = swap(bytes.Clone(m.Spec)), swap(bytes.Clone(m.Result))
		m.Status = status
		m.CreatedAt, m.UpdatedAt, m.EndedAt = sh(m.CreatedAt), sh(m.UpdatedAt), sh(m.EndedAt)
		if err := q.InsertMission(ctx, m); err != nil {
			return fmt.Errorf("insert mission: %w", err)
		}
		for _, r := range t.runs {
			old := r.ID
			r.ID, r.MissionID = ids[r.ID], m.ID
			if r.ParentRunID != "" {
				r.ParentRunID = ids[r.ParentRunID]
			}
			r.Input, r.Result, r.Usage = swap(bytes.Clone(r.Input)), swap(bytes.Clone(r.Result)), swap(bytes.Clone(r.Usage))
			if r.ParentRunID == "" {
				r.Status = status
			}
			r.LeaseOwner, r.LeaseExpiresAt, r.Holder = "", 0, store.LeaseHolder{}
			r.CreatedAt, r.UpdatedAt, r.StartedAt, r.EndedAt = sh(r.CreatedAt), sh(r.UpdatedAt), sh(r.StartedAt), sh(r.EndedAt)
			if err := q.InsertRun(ctx, r); err != nil {
				return fmt.Errorf("insert run: %w", err)
			}
			for _, s := range t.steps[old] {
				s.RunID = r.ID
				s.Request, s.Result, s.Error = swap(bytes.Clone(s.Request)), swap(bytes.Clone(s.Result)), swap(bytes.Clone(s.Error))
				s.StartedAt, s.EndedAt = sh(s.StartedAt), sh(s.EndedAt)
				if err := q.InsertStep(ctx, s); err != nil {
					return fmt.Errorf("insert step: %w", err)
				}
			}
		}
		for _, e := range t.events {
			e.MissionID = m.ID
			if e.RunID != "" {
				e.RunID = ids[e.RunID]
			}
			e.Payload = swap(bytes.Clone(e.Payload))
			e.CreatedAt = sh(e.CreatedAt)
			if _, err := q.InsertEvent(ctx, e); err != nil {
				return fmt.Errorf("insert event: %w", err)
			}
		}
		for _, a := range t.audit {
			a.Target, a.At, a.Detail = m.ID, sh(a.At), swap(bytes.Clone(a.Detail))
			if _, err := q.InsertAudit(ctx, a); err != nil {
				return fmt.Errorf("insert audit: %w", err)
			}
		}
		return nil
	})
}

// generate writes copies from index `from` up to `to` (exclusive), the
// i-th created at at(i), with `par` writers.
func (t *template) generate(ctx context.Context, st store.Store, from, to int, at func(int) int64, par int) error {
	var next atomic.Int64
	next.Store(int64(from))
	var wg sync.WaitGroup
	errs := make(chan error, par)
	for range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= to || ctx.Err() != nil {
					return
				}
				if err := t.clone(ctx, st, i, at(i)); err != nil {
					errs <- fmt.Errorf("copy %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}
