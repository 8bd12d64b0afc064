package api

import (
	"github.com/aos-run/aos/internal/wire"
	"net/http"

	"github.com/aos-run/aos/internal/mission"
)

// table is the route table: the single list the mux, the auth test and the
// OpenAPI document (GET /openapi.json) are built from.
func (s *Server) table() []Route {
	r, w := mission.ScopeRead, mission.ScopeWrite
	return append([]Route{
		{Method: "GET", Pattern: "/health", Public: true, Resp: Health{}, handle: s.health},
		{Method: "GET", Pattern: "/openapi.json", Scope: r, Resp: map[string]any{}, handle: s.openAPI},
		{Method: "GET", Pattern: "/missions", Scope: r, Query: MissionsQuery{}, Resp: []mission.Mission{}, handle: s.listMissions},
		{Method: "POST", Pattern: "/missions", Scope: w, Req: mission.CreateRequest{}, Resp: mission.Mission{}, Status: 201, Errors: []int{404, 409, 429, 502, 503}, handle: s.createMission},
		{Method: "GET", Pattern: "/missions/{id}", Scope: r, Resp: mission.Mission{}, handle: s.getMission},
		{Method: "POST", Pattern: "/missions/{id}/cancel", Scope: w, Req: Empty{}, Resp: mission.Mission{}, Errors: []int{409}, handle: s.cancelMission},
		{Method: "POST", Pattern: "/missions/{id}/retry", Scope: w, Req: Empty{}, Resp: mission.Mission{}, Status: 201, Errors: []int{409, 429, 502, 503}, handle: s.retryMission},
		{Method: "GET", Pattern: "/missions/{id}/runs", Scope: r, Resp: []mission.Run{}, handle: s.listRuns},
		{Method: "GET", Pattern: "/runs/{id}", Scope: r, Resp: mission.Run{}, handle: s.getRun},
		{Method: "GET", Pattern: "/runs/{id}/steps", Scope: r, Query: StepsQuery{}, Resp: []mission.Step{}, handle: s.listSteps},
		{Method: "POST", Pattern: "/runs/{id}/message", Scope: w, Req: MessageRequest{}, Resp: MessageResponse{}, Status: 201, Errors: []int{409}, handle: s.postMessage},
		{Method: "GET", Pattern: "/runs/{id}/artifacts", Scope: r, Resp: []mission.Artifact{}, handle: s.listArtifacts},
		{Method: "GET", Pattern: "/artifacts/{sha256}", Scope: r, Query: ArtifactQuery{}, Resp: []byte{}, handle: s.downloadArtifact},
		{Method: "GET", Pattern: "/waits", Scope: r, Query: WaitsQuery{}, Resp: []mission.Wait{}, handle: s.listWaits},
		{Method: "POST", Pattern: "/waits/{id}/resolve", Scope: w, Req: mission.Resolution{}, Resp: mission.Wait{}, Errors: []int{409}, handle: s.resolveWait},
		{Method: "GET", Pattern: "/policy/rules", Scope: r, Query: RulesQuery{}, Resp: []mission.Rule{}, handle: s.listRules},
		{Method: "POST", Pattern: "/policy/rules", Scope: w, Req: mission.AddRuleRequest{}, Resp: mission.Rule{}, Status: 201, Errors: []int{404}, handle: s.addRule},
		{Method: "DELETE", Pattern: "/policy/rules/{id}", Scope: w, Status: 204, handle: s.deleteRule},
		{Method: "GET", Pattern: "/spend", Scope: r, Resp: mission.Spend{}, handle: s.spend},
		{Method: "GET", Pattern: "/models", Scope: r, Resp: []mission.Model{}, handle: s.listModels},
		{Method: "GET", Pattern: "/settings", Scope: r, Resp: mission.Settings{}, handle: s.getSettings},
		{Method: "PUT", Pattern: "/settings", Scope: w, Req: mission.Settings{}, Resp: mission.Settings{}, handle: s.putSettings},
		{Method: "GET", Pattern: "/system/status", Scope: r, Resp: mission.Status{}, handle: s.status},
		{Method: "GET", Pattern: "/system/audit", Scope: r, Query: AuditQuery{}, Resp: []mission.AuditEntry{}, handle: s.audit},
		{Method: "GET", Pattern: "/events", Scope: r, Query: EventsQuery{}, WebSocket: true, handle: s.events},
	}, append(append(append(s.authRoutes(), s.projectRoutes()...), s.agentRoutes()...), append(s.deviceRoutes(), s.revealRoutes()...)...)...)
}

// Health is GET /health's body.
type Health struct {
	OK      bool   `json:"ok"`
	Version string `json:"version"`
	Agent   string `json:"agent"`
}

func (s *Server) health(w http.ResponseWriter, _ *http.Request, _ mission.Principal) error {
	writeJSON(w, http.StatusOK, Health{OK: true, Version: s.svc.Version(), Agent: "aos"})
	return nil
}

func (s *Server) listMissions(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	limit, err := queryInt(r, "limit")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	ms, err := s.svc.ListMissions(r.Context(), mission.ListMissionsRequest{Status: q.Get("status"), ProjectID: q.Get("projectId"), Limit: intOr(limit, 0)})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ms)
	return nil
}

func (s *Server) createMission(w http.ResponseWriter, r *http.Request, p mission.Principal) error {
	var req mission.CreateRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	m, err := s.svc.CreateMission(r.Context(), p.Actor(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, m)
	return nil
}

func (s *Server) getMission(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	m, err := s.svc.GetMission(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, m)
	return nil
}

// Empty is wire.Empty, its JSON form on the API.
type Empty = wire.Empty

func (s *Server) cancelMission(w http.ResponseWriter, r *http.Request, p mission.Principal) error {
	if err := decodeBody(w, r, &Empty{}, true); err != nil {
		return err
	}
	m, err := s.svc.CancelMission(r.Context(), p.Actor(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, m)
	return nil
}

func (s *Server) retryMission(w http.ResponseWriter, r *http.Request, p mission.Principal) error {
	if err := decodeBody(w, r, &Empty{}, true); err != nil {
		return err
	}
	m, err := s.svc.RetryMission(r.Context(), p.Actor(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, m)
	return nil
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	rs, err := s.svc.ListRuns(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rs)
	return nil
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	run, err := s.svc.GetRun(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, run)
	return nil
}

func (s *Server) listSteps(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	after, err := queryInt(r, "after")
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit")
	if err != nil {
		return err
	}
	req := mission.ListStepsRequest{RunID: r.PathValue("id"), Limit: intOr(limit, 0)}
	if after != nil {
		a := intOr(after, -1)
		req.After = &a
	}
	steps, err := s.svc.ListSteps(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, steps)
	return nil
}

// MessageRequest is wire.MessageRequest, its JSON form on the API.
type MessageRequest = wire.MessageRequest

// MessageResponse is wire.MessageResponse, its JSON form on the API.
type MessageResponse = wire.MessageResponse

func (s *Server) postMessage(w http.ResponseWriter, r *http.Request, p mission.Principal) error {
	var req MessageRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	id, err := s.svc.PostMessage(r.Context(), p.Actor(), r.PathValue("id"), req.Text)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, MessageResponse{ID: id})
	return nil
}

func (s *Server) listWaits(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	limit, err := queryInt(r, "limit")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	ws, err := s.svc.ListWaits(r.Context(), mission.ListWaitsRequest{Status: q.Get("status"), MissionID: q.Get("missionId"), Limit: intOr(limit, 0)})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ws)
	return nil
}

func (s *Server) resolveWait(w http.ResponseWriter, r *http.Request, p mission.Principal) error {
	var req mission.Resolution
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	wt, err := s.svc.ResolveWait(r.Context(), p.Actor(), r.PathValue("id"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wt)
	return nil
}

func (s *Server) listRules(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	rs, err := s.svc.ListRules(r.Context(), r.URL.Query().Get("projectId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rs)
	return nil
}

func (s *Server) addRule(w http.ResponseWriter, r *http.Request, p mission.Principal) error {
	var req mission.AddRuleRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	rule, err := s.svc.AddRule(r.Context(), p.Actor(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, rule)
	return nil
}

func (s *Server) deleteRule(w http.ResponseWriter, r *http.Request, p mission.Principal) error {
	if err := s.svc.DeleteRule(r.Context(), p.Actor(), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) spend(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	sp, err := s.svc.Spend(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sp)
	return nil
}

func (s *Server) status(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	st := s.svc.Status(r.Context())
	st.Counts.WSClients = s.WSClients()
	writeJSON(w, http.StatusOK, st)
	return nil
}

func (s *Server) audit(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	before, err := queryInt(r, "before")
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit")
	if err != nil {
		return err
	}
	as, err := s.svc.ListAudit(r.Context(), *ptrOr(before, 0), intOr(limit, 0))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, as)
	return nil
}

func intOr(v *int64, def int) int {
	if v == nil {
		return def
	}
	// Clamp into int range; the service range-checks the value.
	if *v > 1<<31 || *v < -(1<<31) {
		return -1 << 31
	}
	return int(*v)
}

func ptrOr(v *int64, def int64) *int64 {
	if v == nil {
		return &def
	}
	return v
}
