package wire

import (
	"encoding/json"
)

// Run is a run as presented.
type Run struct {
	ID              string          `json:"id"`
	MissionID       string          `json:"missionId"`
	ParentRunID     string          `json:"parentRunId,omitempty"`
	Logic           string          `json:"logic"`
	Status          string          `json:"status" enum:"queued,running,waiting,done,partial,blocked,failed,budget_exhausted,cancelled"`
	CancelRequested bool            `json:"cancelRequested"`
	Budget          Budget          `json:"budget"`
	Usage           json.RawMessage `json:"usage"`
	SpentUSD        float64         `json:"spentUsd"`
	Turns           int             `json:"turns"`
	Result          json.RawMessage `json:"result,omitempty"`
	Error           string          `json:"error,omitempty"`
	CreatedAt       int64           `json:"createdAt"`
	UpdatedAt       int64           `json:"updatedAt"`
	StartedAt       int64           `json:"startedAt,omitempty"`
	EndedAt         int64           `json:"endedAt,omitempty"`
}
