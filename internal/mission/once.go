package mission

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
)

// missionIDKey is the context key of a mission id derived from a
// caller's idempotency key (CreateMissionOnce).
type missionIDKey struct{}

// keyedMissionID returns the id CreateMissionOnce derived, or "".
func keyedMissionID(ctx context.Context) string {
	id, _ := ctx.Value(missionIDKey{}).(string)
	return id
}

// KeyedMissionID returns the mission id CreateMissionOnce derives from
// key: a UUID (version 8, from SHA-256) that is the same for the same key.
func KeyedMissionID(key string) string {
	b := sha256.Sum256([]byte("aos.mission-once\x00" + key))
	b[6] = b[6]&0x0f | 0x80
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// CreateMissionOnce is CreateMission keyed by key (a front end's command
// id): the mission's id is derived from key, so a repeat returns the
// mission the first call made, with replayed set, instead of a second one.
// The mission's row is the command's durable outcome, written in the
// kernel's one transaction with its root run and its created event: a
// crash between creating the mission and recording the command can no
// longer leave a created mission behind an unknown outcome. A mission of
// that id whose creation failed never existed, so a repeat creates it.
func (s *Service) CreateMissionOnce(ctx context.Context, actor Actor, key string, req CreateRequest) (m Mission, replayed bool, err error) {
	if key == "" {
		return Mission{}, false, invalid("an idempotency key is required")
	}
	id := KeyedMissionID(key)
	m, err = s.GetMission(ctx, id)
	if err == nil {
		return m, true, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return Mission{}, false, err
	}
	m, err = s.CreateMission(context.WithValue(ctx, missionIDKey{}, id), actor, req)
	if err != nil {
		// A concurrent repeat of the same key, or a retried insert whose
		// first commit landed, made the mission meanwhile: the insert of
		// its id failed, and the mission is the command's outcome.
		if made, gerr := s.GetMission(ctx, id); gerr == nil {
			return made, true, nil
		}
		return Mission{}, false, err
	}
	return m, false, nil
}
