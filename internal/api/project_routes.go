package api

import (
	"net/http"

	"github.com/aos-run/aos/internal/mission"
)

// projectRoutes are the routes of projects and of the owner's
// notifications.
func (s *Server) projectRoutes() []Route {
	r, w := mission.ScopeRead, mission.ScopeWrite
	return []Route{
		{Method: "GET", Pattern: "/projects", Scope: r, Resp: []mission.Project{}, handle: s.listProjects},
		{Method: "POST", Pattern: "/projects", Scope: w, Req: mission.CreateProjectRequest{}, Resp: mission.Project{}, Status: 201, Errors: []int{409, 502, 504}, handle: s.createProject},
		{Method: "GET", Pattern: "/projects/{id}", Scope: r, Resp: mission.Project{}, handle: s.getProject},
		{Method: "PATCH", Pattern: "/projects/{id}", Scope: w, Req: mission.UpdateProjectRequest{}, Resp: mission.Project{}, handle: s.updateProject},
		{Method: "DELETE", Pattern: "/projects/{id}", Scope: w, Status: 204, Errors: []int{409}, handle: s.deleteProject},
		{Method: "GET", Pattern: "/notifications", Scope: r, Query: NotificationsQuery{}, Resp: []mission.Notification{}, handle: s.listNotifications},
		{Method: "POST", Pattern: "/notifications/read", Scope: w, Req: mission.MarkReadRequest{}, Resp: mission.MarkReadResult{}, handle: s.markNotificationsRead},
	}
}

func (s *Server) listProjects(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	ps, err := s.svc.ListProjects(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ps)
	return nil
}

func (s *Server) createProject(w http.ResponseWriter, r *http.Request, p mission.Principal) error {
	var req mission.CreateProjectRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	pr, err := s.svc.CreateProject(r.Context(), p.Actor(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, pr)
	return nil
}

func (s *Server) getProject(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	pr, err := s.svc.GetProject(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, pr)
	return nil
}

func (s *Server) updateProject(w http.ResponseWriter, r *http.Request, p mission.Principal) error {
	var req mission.UpdateProjectRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	pr, err := s.svc.UpdateProject(r.Context(), p.Actor(), r.PathValue("id"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, pr)
	return nil
}

func (s *Server) deleteProject(w http.ResponseWriter, r *http.Request, p mission.Principal) error {
	if err := s.svc.DeleteProject(r.Context(), p.Actor(), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) listNotifications(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	limit, err := queryInt(r, "limit")
	if err != nil {
		return err
	}
	var unread bool
	switch r.URL.Query().Get("unread") {
	case "", "false":
	case "true":
		unread = true
	default:
		return &apiError{status: http.StatusBadRequest, code: codeInvalidQuery, msg: "unread must be true or false"}
	}
	ns, err := s.svc.ListNotifications(r.Context(), mission.ListNotificationsRequest{UnreadOnly: unread, Limit: intOr(limit, 0)})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ns)
	return nil
}

func (s *Server) markNotificationsRead(w http.ResponseWriter, r *http.Request, p mission.Principal) error {
	var req mission.MarkReadRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	res, err := s.svc.MarkNotificationsRead(r.Context(), p.Actor(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
