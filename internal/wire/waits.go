package wire

import (
	"encoding/json"
)

// Wait is a durable wait for the owner as presented.
type Wait struct {
	ID         string          `json:"id"`
	RunID      string          `json:"runId"`
	MissionID  string          `json:"missionId"`
	StepSeq    int             `json:"stepSeq"`
	Kind       string          `json:"kind" enum:"approval,question"`
	Payload    json.RawMessage `json:"payload"`
	Status     string          `json:"status" enum:"pending,resolved,expired,cancelled"`
	Resolution json.RawMessage `json:"resolution,omitempty"`
	Actor      string          `json:"actor,omitempty"`
	ResolveBy  int64           `json:"resolveBy,omitempty"`
	CreatedAt  int64           `json:"createdAt"`
	ResolvedAt int64           `json:"resolvedAt,omitempty"`
}

// Resolution answers a wait: Approved (with Remember and Reason) for an
// approval, Answer for a question.
type Resolution struct {
	Approved *bool  `json:"approved,omitempty"`
	Remember bool   `json:"remember,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Answer   string `json:"answer,omitempty"`
}
