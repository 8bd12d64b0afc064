package wire

import (
	"encoding/json"
)

// Event is a timeline event as presented. Transient events (model.delta,
// engine.event, live copies of step events) carry ID -1 and no Seq.
type Event struct {
	ID        int64           `json:"id"`
	MissionID string          `json:"missionId"`
	RunID     string          `json:"runId"`
	Seq       *int            `json:"seq"`
	Kind      string          `json:"kind"`
	Payload   json.RawMessage `json:"payload"`
	Trust     string          `json:"trust,omitempty"`
	CreatedAt int64           `json:"createdAt"`
}
