package wire

// Notification is one item of the owner's inbox: something that needs them
// or that finished. It is derived from a persisted event, whose id it
// carries, so nothing extra is written when it happens.
type Notification struct {
	ID        int64  `json:"id"`
	At        int64  `json:"at"`
	Kind      string `json:"kind"`
	MissionID string `json:"missionId"`
	RunID     string `json:"runId"`
	Title     string `json:"title"`
	Body      string `json:"body"`
	Read      bool   `json:"read"`
}

// MarkReadRequest is POST /notifications/read's body: exactly one of IDs
// (notification ids) and All (true).
type MarkReadRequest struct {
	IDs []int64 `json:"ids,omitempty"`
	All *bool   `json:"all,omitempty"`
}

// MarkReadResult says how many notifications were unread and are read now.
type MarkReadResult struct {
	Marked int `json:"marked"`
}
