package api

import (
	"net/http"
	"time"

	"github.com/aos-run/aos/internal/mission"
)

func (s *Server) listArtifacts(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	as, err := s.svc.ListArtifacts(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, as)
	return nil
}

// downloadArtifact serves an artifact's bytes as an attachment: always
// application/octet-stream with nosniff, so that no browser renders tool
// output (which may carry HTML or scripts) in the console's origin.
func (s *Server) downloadArtifact(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	f, a, err := s.svc.OpenArtifact(r.Context(), r.PathValue("sha256"))
	if err != nil {
		return err
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Disposition", `attachment; filename="`+mission.DownloadName(r.URL.Query().Get("name"), a.Name)+`"`)
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Cache-Control", "private, no-store")
	http.ServeContent(w, r, "", time.UnixMilli(a.CreatedAt), f)
	return nil
}

func (s *Server) listModels(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	ms, err := s.svc.ListModels(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ms)
	return nil
}

func (s *Server) getSettings(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	st, err := s.svc.GetSettings(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

func (s *Server) putSettings(w http.ResponseWriter, r *http.Request, p mission.Principal) error {
	var req mission.Settings
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	st, err := s.svc.PutSettings(r.Context(), p.Actor(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}
