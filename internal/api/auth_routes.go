package api

import (
	"github.com/aos-run/aos/internal/wire"
	"io"
	"net/http"

	"github.com/aos-run/aos/internal/auth"
	"github.com/aos-run/aos/internal/mission"
)

// authRoutes are the owner-security routes: setup, login, logout, passkeys
// and API token management (docs/API.md, "Owner security").
func (s *Server) authRoutes() []Route {
	o := mission.ScopeOwner
	return []Route{
		{Method: "GET", Pattern: "/auth/status", Public: true, Errors: []int{503}, Resp: AuthStatus{}, handle: s.authStatus},
		{Method: "POST", Pattern: "/auth/setup/begin", Public: true, Req: SetupBeginRequest{}, Resp: auth.SetupSecret{}, Errors: []int{401, 409, 429, 503}, handle: s.setupBegin},
		{Method: "POST", Pattern: "/auth/setup/complete", Public: true, Req: SetupCompleteRequest{}, Resp: LoginResponse{}, Errors: []int{401, 409, 429, 503}, handle: s.setupComplete},
		{Method: "POST", Pattern: "/auth/login", Public: true, Req: LoginRequest{}, Resp: LoginResponse{}, Errors: []int{401, 409, 429, 503}, handle: s.login},
		{Method: "POST", Pattern: "/auth/logout", Scope: mission.ScopeRead, Req: Empty{}, Status: 204, Errors: []int{503}, handle: s.logout},
		{Method: "POST", Pattern: "/auth/webauthn/register/begin", Scope: o, Req: Empty{}, Errors: []int{503}, Resp: map[string]any{}, handle: s.passkeyRegisterBegin},
		{Method: "POST", Pattern: "/auth/webauthn/register/finish", Scope: o, Query: PasskeyNameQuery{}, Req: map[string]any{}, Errors: []int{409, 503}, Resp: auth.Passkey{}, Status: 201, handle: s.passkeyRegisterFinish},
		{Method: "GET", Pattern: "/auth/webauthn/credentials", Scope: o, Errors: []int{503}, Resp: []auth.Passkey{}, handle: s.listPasskeys},
		{Method: "DELETE", Pattern: "/auth/webauthn/credentials/{id}", Scope: o, Errors: []int{503}, Status: 204, handle: s.deletePasskey},
		{Method: "POST", Pattern: "/auth/webauthn/login/begin", Public: true, Req: Empty{}, Errors: []int{409, 429, 503}, Resp: map[string]any{}, handle: s.passkeyLoginBegin},
		{Method: "POST", Pattern: "/auth/webauthn/login/finish", Public: true, Req: map[string]any{}, Errors: []int{401, 409, 429, 503}, Resp: LoginResponse{}, handle: s.passkeyLoginFinish},
		{Method: "GET", Pattern: "/tokens", Scope: o, Resp: []mission.Token{}, handle: s.listTokens},
		{Method: "POST", Pattern: "/tokens", Scope: o, Req: CreateTokenRequest{}, Resp: mission.NewToken{}, Status: 201, handle: s.createToken},
		{Method: "DELETE", Pattern: "/tokens/{id}", Scope: o, Status: 204, handle: s.revokeToken},
		{Method: "DELETE", Pattern: "/tokens/current", Scope: mission.ScopeRead, Status: 204, handle: s.revokeCurrentToken},
	}
}

// Branding names the product in the console.
type Branding struct {
	Agent       string `json:"agent"`
	ProductName string `json:"productName"`
	AgentName   string `json:"agentName"`
}

// AuthStatus is GET /auth/status's body.
type AuthStatus struct {
	SetupRequired bool     `json:"setupRequired"`
	Authenticated bool     `json:"authenticated"`
	CSRFToken     string   `json:"csrfToken,omitempty"`
	Passkeys      int      `json:"passkeys"`
	Branding      Branding `json:"branding"`
}

// SetupBeginRequest is wire.SetupBeginRequest, its JSON form on the API.
type SetupBeginRequest = wire.SetupBeginRequest

// SetupCompleteRequest is wire.SetupCompleteRequest, its JSON form on the API.
type SetupCompleteRequest = wire.SetupCompleteRequest

// LoginRequest is POST /auth/login's body.
type LoginRequest struct {
	Password string `json:"password"`
	TOTPCode string `json:"totpCode"`
}

// LoginResponse answers a login or setup; the session is in the cookie.
type LoginResponse struct {
	CSRFToken string `json:"csrfToken"`
}

// CreateTokenRequest is POST /tokens's body.
type CreateTokenRequest struct {
	Name   string   `json:"name"`
	Scopes []string `json:"scopes"`
}

var errNoAuth = &apiError{status: http.StatusServiceUnavailable, code: "unavailable", msg: "owner security is not configured on this server"}

func (s *Server) authSvc() (*auth.Service, error) {
	if s.opts.Auth == nil {
		return nil, errNoAuth
	}
	return s.opts.Auth, nil
}

func (s *Server) authStatus(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	a, err := s.authSvc()
	if err != nil {
		return err
	}
	st, err := a.Status(r.Context())
	if err != nil {
		return err
	}
	out := AuthStatus{SetupRequired: st.SetupRequired, Passkeys: st.Passkeys, Branding: Branding{Agent: "aos", ProductName: "Agent OS", AgentName: "Agent"}}
	if sid := sessionCookie(r); sid != "" {
		if _, err := a.Authenticate(r.Context(), sid); err == nil {
			out.Authenticated, out.CSRFToken = true, auth.CSRFToken(sid)
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) setupBegin(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	a, err := s.authSvc()
	if err != nil {
		return err
	}
	var req SetupBeginRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	sec, err := a.BeginSetup(r.Context(), clientIP(r, s.opts.TrustedProxies), req.SetupToken)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sec)
	return nil
}

func (s *Server) setupComplete(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	a, err := s.authSvc()
	if err != nil {
		return err
	}
	var req SetupCompleteRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	ns, err := a.CompleteSetup(r.Context(), clientIP(r, s.opts.TrustedProxies), req.SetupToken, req.Password, req.TOTPCode)
	if err != nil {
		return err
	}
	s.loggedIn(w, r, ns)
	return nil
}

func (s *Server) login(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	a, err := s.authSvc()
	if err != nil {
		return err
	}
	var req LoginRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	ns, err := a.Login(r.Context(), clientIP(r, s.opts.TrustedProxies), req.Password, req.TOTPCode)
	s.observeLogin("password", err)
	if err != nil {
		return err
	}
	s.loggedIn(w, r, ns)
	return nil
}

func (s *Server) loggedIn(w http.ResponseWriter, r *http.Request, ns auth.NewSession) {
	s.setSessionCookie(w, r, ns)
	writeJSON(w, http.StatusOK, LoginResponse{CSRFToken: ns.CSRFToken})
}

// session is the principal's session; a token principal has none.
func session(p mission.Principal) (auth.Session, error) {
	if p.SessionID == "" {
		return auth.Session{}, &mission.Error{Code: mission.CodeForbidden, Msg: "this route needs an owner session, not an API token"}
	}
	return auth.Session{PublicID: p.SessionID}, nil
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request, p mission.Principal) error {
	a, err := s.authSvc()
	if err != nil {
		return err
	}
	ses, err := session(p)
	if err != nil {
		return err
	}
	if err := decodeBody(w, r, &Empty{}, true); err != nil {
		return err
	}
	if err := a.Logout(r.Context(), ses); err != nil {
		return err
	}
	s.clearSessionCookies(w, r)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// fullSession is the principal's session with its login time, which the
// principal does not carry (adding a passkey needs a fresh one).
func fullSession(r *http.Request, a *auth.Service, p mission.Principal) (auth.Session, error) {
	if _, err := session(p); err != nil {
		return auth.Session{}, err
	}
	return a.Check(r.Context(), sessionCookie(r))
}

func (s *Server) passkeyRegisterBegin(w http.ResponseWriter, r *http.Request, p mission.Principal) error {
	a, err := s.authSvc()
	if err != nil {
		return err
	}
	ses, err := fullSession(r, a, p)
	if err != nil {
		return err
	}
	if err := decodeBody(w, r, &Empty{}, true); err != nil {
		return err
	}
	cc, err := a.BeginRegistration(r.Context(), ses)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, cc)
	return nil
}

// readRaw reads a body that a library parses (WebAuthn credentials).
func readRaw(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		return nil, &apiError{status: http.StatusBadRequest, code: codeBodyTooLarge, msg: "could not read the request body (at most 1 MiB)"}
	}
	return b, nil
}

func (s *Server) passkeyRegisterFinish(w http.ResponseWriter, r *http.Request, p mission.Principal) error {
	a, err := s.authSvc()
	if err != nil {
		return err
	}
	ses, err := fullSession(r, a, p)
	if err != nil {
		return err
	}
	body, err := readRaw(w, r)
	if err != nil {
		return err
	}
	pk, err := a.FinishRegistration(r.Context(), ses, r.URL.Query().Get("name"), body)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, pk)
	return nil
}

func (s *Server) listPasskeys(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	a, err := s.authSvc()
	if err != nil {
		return err
	}
	ps, err := a.ListPasskeys(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ps)
	return nil
}

func (s *Server) deletePasskey(w http.ResponseWriter, r *http.Request, p mission.Principal) error {
	a, err := s.authSvc()
	if err != nil {
		return err
	}
	ses, err := session(p)
	if err != nil {
		return err
	}
	if err := a.DeletePasskey(r.Context(), ses, r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) passkeyLoginBegin(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	a, err := s.authSvc()
	if err != nil {
		return err
	}
	if err := decodeBody(w, r, &Empty{}, true); err != nil {
		return err
	}
	ca, err := a.BeginPasskeyLogin(r.Context(), clientIP(r, s.opts.TrustedProxies))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ca)
	return nil
}

func (s *Server) passkeyLoginFinish(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	a, err := s.authSvc()
	if err != nil {
		return err
	}
	body, err := readRaw(w, r)
	if err != nil {
		return err
	}
	ns, err := a.FinishPasskeyLogin(r.Context(), clientIP(r, s.opts.TrustedProxies), body)
	s.observeLogin("passkey", err)
	if err != nil {
		return err
	}
	s.loggedIn(w, r, ns)
	return nil
}

func (s *Server) listTokens(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	ts, err := s.svc.ListTokens(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ts)
	return nil
}

func (s *Server) createToken(w http.ResponseWriter, r *http.Request, p mission.Principal) error {
	var req CreateTokenRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	t, err := s.svc.CreateToken(r.Context(), p.Actor(), req.Name, req.Scopes)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, t)
	return nil
}

// revokeCurrentToken revokes the API token the request carries, so a client
// can end its own credential (aos logout); any token may, whatever its
// scopes. A session logs out with POST /auth/logout instead.
func (s *Server) revokeCurrentToken(w http.ResponseWriter, r *http.Request, p mission.Principal) error {
	if p.TokenID == "" {
		return &mission.Error{Code: mission.CodeInvalidInput, Msg: "this request carries no API token (a session logs out with POST /auth/logout)"}
	}
	if err := s.svc.RevokeToken(r.Context(), p.Actor(), p.TokenID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request, p mission.Principal) error {
	if err := s.svc.RevokeToken(r.Context(), p.Actor(), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
