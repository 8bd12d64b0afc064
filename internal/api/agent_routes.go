package api

import (
	"errors"
	"net/http"

	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/mission"
)

// AddPackageRequest is POST /packages' body: a local directory or a git
// URL holding a community package.
type AddPackageRequest struct {
	Source string `json:"source"`
}

// agentRoutes are the Store, package, agent, operation and turn routes of
// seed 000 for the owner (identity "owner"). A device reaches the same
// service through the device channel, never through these routes.
func (s *Server) agentRoutes() []Route {
	r, w, o := mission.ScopeRead, mission.ScopeWrite, mission.ScopeOwner
	return []Route{
		{Method: "GET", Pattern: "/store/packages", Scope: r, Resp: agent.StoreListResult{}, handle: s.storeList},
		{Method: "GET", Pattern: "/store/packages/{owner}/{name}", Scope: r, Resp: agent.StoreInspectResult{}, handle: s.storeInspect},
		{Method: "GET", Pattern: "/packages", Scope: r, Resp: []agent.Package{}, handle: s.listPackages},
		// Adding and reviewing a community package are the owner's trust
		// decisions (a reviewed package's setup runs as the owner's user).
		{Method: "POST", Pattern: "/packages", Scope: o, Req: AddPackageRequest{}, Resp: agent.Package{}, Status: 201, handle: s.addPackage},
		// 409 PACKAGE_REVIEW_REQUIRED: another version was added while
		// the review was being recorded; it is not marked reviewed.
		{Method: "POST", Pattern: "/packages/{owner}/{name}/review", Scope: o, Resp: agent.Package{}, Errors: []int{409}, handle: s.reviewPackage},
		{Method: "POST", Pattern: "/agents/prepare", Scope: w, Req: agent.PrepareRequest{}, Resp: agent.PrepareResult{}, handle: s.prepareAgent},
		{Method: "GET", Pattern: "/agents", Scope: r, Query: AgentsQuery{}, Resp: []agent.Agent{}, handle: s.listAgents},
		{Method: "GET", Pattern: "/agents/{id}", Scope: r, Resp: agent.Agent{}, handle: s.getAgent},
		{Method: "GET", Pattern: "/operations/{id}", Scope: r, Resp: agent.Operation{}, handle: s.getOperation},
		{Method: "POST", Pattern: "/turns", Scope: w, Req: agent.TurnSendRequest{}, Resp: agent.Receipt{}, handle: s.sendTurn},
		{Method: "GET", Pattern: "/receipts/{id}", Scope: r, Resp: agent.Receipt{}, handle: s.getReceipt},
	}
}

// agents returns the agent service, or UNSUPPORTED_CAPABILITY when this
// server has none.
func (s *Server) agents() (*agent.Service, error) {
	if s.opts.Agents == nil {
		return nil, &agent.Error{Code: agent.CodeUnsupportedCapability, Message: "this server has no agent service"}
	}
	return s.opts.Agents, nil
}

func (s *Server) storeList(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	a, err := s.agents()
	if err != nil {
		return err
	}
	off, err := queryInt(r, "offset")
	if err != nil {
		return err
	}
	lim, err := queryInt(r, "limit")
	if err != nil {
		return err
	}
	req := agent.StoreListRequest{Query: r.URL.Query().Get("query")}
	if off != nil {
		v := int(*off)
		req.Offset = &v
	}
	if lim != nil {
		v := int(*lim)
		req.Limit = &v
	}
	res, err := a.StoreList(r.Context(), agent.OwnerIdentity, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) storeInspect(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	a, err := s.agents()
	if err != nil {
		return err
	}
	res, err := a.StoreInspect(r.Context(), agent.OwnerIdentity, r.PathValue("owner")+"/"+r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) listPackages(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	a, err := s.agents()
	if err != nil {
		return err
	}
	ps, err := a.Packages(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ps)
	return nil
}

func (s *Server) addPackage(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	a, err := s.agents()
	if err != nil {
		return err
	}
	var req AddPackageRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	p, err := a.AddPackage(r.Context(), req.Source)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, p)
	return nil
}

func (s *Server) reviewPackage(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	a, err := s.agents()
	if err != nil {
		return err
	}
	p, err := a.ReviewPackage(r.Context(), r.PathValue("owner")+"/"+r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

func (s *Server) prepareAgent(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	a, err := s.agents()
	if err != nil {
		return err
	}
	var req agent.PrepareRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	res, err := a.Prepare(r.Context(), agent.OwnerIdentity, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) listAgents(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	a, err := s.agents()
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit")
	if err != nil {
		return err
	}
	as, err := a.ListAgents(r.Context(), r.URL.Query().Get("after"), intOr(limit, 0))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, as)
	return nil
}

func (s *Server) getAgent(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	a, err := s.agents()
	if err != nil {
		return err
	}
	ag, err := a.GetAgent(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ag)
	return nil
}

func (s *Server) getOperation(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	a, err := s.agents()
	if err != nil {
		return err
	}
	op, err := a.Operation(r.Context(), agent.OwnerIdentity, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, op)
	return nil
}

func (s *Server) sendTurn(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	a, err := s.agents()
	if err != nil {
		return err
	}
	var req agent.TurnSendRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	rc, err := a.SendTurn(r.Context(), agent.OwnerIdentity, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rc)
	return nil
}

func (s *Server) getReceipt(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	a, err := s.agents()
	if err != nil {
		return err
	}
	rc, err := a.Receipt(r.Context(), agent.OwnerIdentity, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rc)
	return nil
}

// agentStatus maps the agent service's codes to HTTP statuses; a code not
// listed is 409 (the request was understood; the machine's state refuses
// it). The body carries the seed's code unchanged, and its guidance.
var agentStatus = map[string]int{
	agent.CodeInvalidRequest:    http.StatusBadRequest,
	agent.CodeInvalidWorkspace:  http.StatusBadRequest,
	agent.CodeMachineMismatch:   http.StatusBadRequest,
	agent.CodePackageNotFound:   http.StatusNotFound,
	agent.CodeOperationNotFound: http.StatusNotFound,
	agent.CodeReceiptNotFound:   http.StatusNotFound,
	agent.CodeAgentNotFound:     http.StatusNotFound,
	agent.CodeCloneFailed:       http.StatusBadGateway,
	agent.CodeRevoked:           http.StatusForbidden,
	agent.CodeRateLimited:       http.StatusTooManyRequests,
	// The service cannot read or persist safely, or has no confirmed
	// result: the server's failure, with the seed's code kept.
	agent.CodeStorageFailed: http.StatusInternalServerError,
	agent.CodeInternal:      http.StatusInternalServerError,
	// A server built without the agent service.
	agent.CodeUnsupportedCapability: http.StatusServiceUnavailable,
}

// agentError presents an agent.Error; it reports false for other errors.
func agentError(err error) (status int, body errorBody, ok bool) {
	var ae *agent.Error
	if !errors.As(err, &ae) {
		return 0, body, false
	}
	status = agentStatus[ae.Code]
	if status == 0 {
		status = http.StatusConflict
	}
	body.Error.Code, body.Error.Message, body.Error.Guidance = ae.Code, ae.Message, ae.Guidance
	return status, body, true
}
