package mission

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/wire"
)

// Event is wire.Event, its JSON form on the API.
type Event = wire.Event

// eventView presents a persisted event, removing the provider's native
// response from a model_call's step.completed result.
func eventView(e store.Event) Event {
	return Event{ID: e.ID, MissionID: e.MissionID, RunID: e.RunID, Seq: e.Seq, Kind: e.Kind, Payload: payloadView(e.Kind, e.Payload), Trust: e.Trust, CreatedAt: e.CreatedAt}
}

// payloadView is an event's payload as presented: a model_call's
// step.completed without the provider's native response. Persisted events
// and their live copies (kernel.StepSpec.LiveAnnounce) pass through it.
func payloadView(kind string, p []byte) []byte {
	if kind != "step.completed" || !bytes.Contains(p, []byte(`"native"`)) {
		return p
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(p, &m) != nil || string(m["kind"]) != `"model_call"` {
		return p
	}
	r, ok := m["result"]
	if !ok {
		return p
	}
	m["result"] = WithoutNative(r)
	b, err := json.Marshal(m)
	if err != nil {
		return p
	}
	return b
}

// transientView presents a transient event, as eventView a persisted one.
func transientView(te kernel.TransientEvent, now int64) (Event, error) {
	p, err := json.Marshal(te.Payload)
	if err != nil {
		return Event{}, err
	}
	return Event{ID: -1, MissionID: te.MissionID, RunID: te.RunID, Kind: te.Kind, Payload: payloadView(te.Kind, p), CreatedAt: now}, nil
}

// ReplayEvents returns persisted events with id > after (of one mission
// when missionID is set), oldest first, at most limit. When retention has
// pruned events after `after` it returns an error of code
// CodeCursorExpired wrapping a *CursorExpiredError: never a silent gap.
func (s *Service) ReplayEvents(ctx context.Context, after int64, missionID string, limit int) ([]Event, error) {
	if after < 0 || limit < 1 || limit > 10000 {
		return nil, invalid("cursor must be ≥ 0 and limit 1..10000")
	}
	if err := s.checkCursor(ctx, after, missionID); err != nil {
		return nil, err
	}
	es, err := s.st.ListEvents(ctx, store.ListEventsParams{After: after, MissionID: missionID, Limit: limit})
	if err != nil {
		return nil, translate("replay events", err)
	}
	out := make([]Event, 0, len(es))
	for _, e := range es {
		out = append(out, eventView(e))
	}
	return out, nil
}

// LatestEventID returns the newest persisted event's id, 0 when none.
func (s *Service) LatestEventID(ctx context.Context) (int64, error) {
	id, err := s.st.LatestEventID(ctx)
	if err != nil {
		return 0, translate("latest event id", err)
	}
	return id, nil
}

// ListenEvents calls fn for every persisted event with id > cursor, then
// for each new one as it commits, until ctx ends or fn fails.
func (s *Service) ListenEvents(ctx context.Context, cursor int64, missionID string, fn func(Event) error) error {
	return s.k.ListenEvents(ctx, cursor, missionID, func(e store.Event) error { return fn(eventView(e)) })
}

// SubscribeTransient returns this process's transient events (model.delta,
// live copies of step events) of one mission (all when missionID is empty), with ID -1, until ctx ends.
// A subscriber that falls behind loses events; it never slows a run.
func (s *Service) SubscribeTransient(ctx context.Context, missionID string) <-chan Event {
	in := s.k.SubscribeTransient(ctx)
	out := make(chan Event, 256)
	go func() {
		defer close(out)
		for te := range in {
			if missionID != "" && te.MissionID != missionID {
				continue
			}
			e, err := transientView(te, s.now().UnixMilli())
			if err != nil {
				continue
			}
			select {
			case out <- e:
			default:
			}
		}
	}()
	return out
}
