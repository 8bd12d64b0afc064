package api

// The query parameters of the routes that read any, as documented in
// /openapi.json (Route.Query). The handlers parse them with queryInt and
// URL.Query; a test checks every parameter a client sends is declared.

// MissionsQuery is GET /missions' query.
type MissionsQuery struct {
	Status    string `query:"status" enum:"queued,running,waiting,done,partial,blocked,failed,budget_exhausted,cancelled"`
	ProjectID string `query:"projectId"`
	Limit     int64  `query:"limit" doc:"at most this many (1..1000; default 100)"`
}

// AgentsQuery is GET /agents' query: a page of agents, oldest first.
type AgentsQuery struct {
	After string `query:"after" doc:"the page starts after this agent (its agentId); the first page without it"`
	Limit int64  `query:"limit" doc:"at most this many (1..1000; default 100); a shorter page is the last"`
}

// StepsQuery is GET /runs/{id}/steps' query.
type StepsQuery struct {
	After int64 `query:"after" doc:"only steps with seq > after"`
	Limit int64 `query:"limit" doc:"at most this many"`
}

// WaitsQuery is GET /waits' query.
type WaitsQuery struct {
	Status    string `query:"status" enum:"pending,resolved,expired,cancelled"`
	MissionID string `query:"missionId"`
	Limit     int64  `query:"limit"`
}

// RulesQuery is GET /policy/rules' query.
type RulesQuery struct {
	ProjectID string `query:"projectId" doc:"the project's rules and the global ones"`
}

// AuditQuery is GET /system/audit's query.
type AuditQuery struct {
	Before int64 `query:"before" doc:"only records with id < before (0: from the newest)"`
	Limit  int64 `query:"limit"`
}

// EventsQuery is GET /events' query.
type EventsQuery struct {
	Cursor    int64  `query:"cursor" doc:"replay persisted events with id > cursor; absent: live only"`
	MissionID string `query:"missionId" doc:"only this mission's events"`
}

// ArtifactQuery is GET /artifacts/{sha256}'s query.
type ArtifactQuery struct {
	Name string `query:"name" doc:"the download's file name (sanitized)"`
}

// NotificationsQuery is GET /notifications' query.
type NotificationsQuery struct {
	Unread bool  `query:"unread"`
	Limit  int64 `query:"limit"`
}

// PasskeyNameQuery is POST /auth/webauthn/register/finish's query.
type PasskeyNameQuery struct {
	Name string `query:"name" doc:"the passkey's name"`
}
