package api

import (
	"net/http"

	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/mission"
)

// revealRoutes are the console's reveal routes (seed 000's Desktop reveal
// mapped onto aos: internal/agent/reveal.go). They are owner routes like
// every route here: a device token opens only the device channel, so a
// reveal is never a device operation.
func (s *Server) revealRoutes() []Route {
	return []Route{
		{Method: "GET", Pattern: "/agents/reveals", Scope: mission.ScopeRead, Resp: []agent.Reveal{}, handle: s.pendingReveals},
		{Method: "POST", Pattern: "/operations/{id}/opened", Scope: mission.ScopeWrite, Req: agent.RevealOpenedRequest{}, Resp: agent.Reveal{}, handle: s.revealOpened},
	}
}

// pendingReveals answers the reveals the console has not acknowledged.
func (s *Server) pendingReveals(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	a, err := s.agents()
	if err != nil {
		return err
	}
	rs, err := a.PendingReveals(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rs)
	return nil
}

// revealOpened records the console's acknowledgement that it showed an
// operation's agent (the seed's device_prepare_opened).
func (s *Server) revealOpened(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	a, err := s.agents()
	if err != nil {
		return err
	}
	var req agent.RevealOpenedRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	rv, err := a.RevealOpened(r.Context(), r.PathValue("id"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rv)
	return nil
}
