package api

import (
	"context"
	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/wire"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aos-run/aos/internal/auth"
	"github.com/aos-run/aos/internal/console"
	"github.com/aos-run/aos/internal/device"
	"github.com/aos-run/aos/internal/metrics"
	"github.com/aos-run/aos/internal/mission"
)

// Prefix is where the API lives.
const Prefix = wire.Prefix

// Options configure a Server.
type Options struct {
	// OriginPatterns are the extra Origins (host patterns, as
	// github.com/coder/websocket matches them) allowed to open the events
	// WebSocket; the server's own host is always allowed, and a request
	// without Origin (not a browser) is too.
	OriginPatterns []string
	// AuthRecheck is how often an open WebSocket re-validates its token
	// (30 s by default); a revoked token closes the socket with 4401.
	AuthRecheck time.Duration
	// SendBuffer is how many events may wait for a slow WebSocket client
	// before it is dropped (1024 by default).
	SendBuffer int
	// Logger receives request failures; never a secret or a body.
	Logger *slog.Logger
	// Auth is the owner-security service: browser sessions, setup, login
	// and passkeys. Without it only API tokens authenticate and the
	// /auth routes answer 503.
	Auth *auth.Service
	// TrustedProxies are the reverse proxies (AOS_TRUSTED_PROXIES) whose
	// X-Forwarded-For and X-Forwarded-Proto are believed.
	TrustedProxies []netip.Prefix
	// Metrics, when set, is served on GET /metrics (see metricsRoute) and
	// receives the API's own figures; nil serves no metrics.
	Metrics *metrics.Metrics
	// Agents is the Store and agent service (seed 000); nil answers its
	// routes with UNSUPPORTED_CAPABILITY.
	Agents *agent.Service
	// Devices is the paired-device service (pairing, the device channel);
	// nil answers 503 on the device routes.
	Devices *device.Service
}

// Server is the HTTP API over a mission service.
type Server struct {
	svc       *mission.Service
	opts      Options
	mux       *http.ServeMux
	routes    []Route
	hub       *hub
	wsClients atomic.Int64
}

// Route is one entry of the route table. Every route but the public ones
// requires a credential (an API token or an owner session) holding Scope.
type Route struct {
	Method  string
	Pattern string // under Prefix, with {name} wildcards
	Scope   string // mission.ScopeRead, ScopeWrite or ScopeOwner; "" when Public
	Public  bool
	// Device marks the device channel: no owner credential opens it; its
	// handler authenticates a device token itself, and a device token
	// opens nothing else.
	Device bool
	// Req and Resp are zero values of the body types the handler decodes
	// and writes (nil when none); /openapi.json is generated from them.
	Req, Resp any
	// Query is the zero value of a struct whose fields tagged
	// `query:"name"` are the query parameters the handler reads (nil when
	// none); /openapi.json documents them.
	Query any
	// Status is the success status (200 when 0).
	Status int
	// Errors are the error statuses the route can answer beyond those
	// every route of its kind can (openapi.go's errorStatuses).
	Errors []int
	// WebSocket marks the route that upgrades to a WebSocket (101).
	WebSocket bool
	handle    func(w http.ResponseWriter, r *http.Request, p mission.Principal) error
}

// New returns a server over svc.
func New(svc *mission.Service, opts Options) *Server {
	if opts.AuthRecheck <= 0 {
		opts.AuthRecheck = 30 * time.Second
	}
	if opts.SendBuffer <= 0 {
		opts.SendBuffer = 1024
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Auth != nil {
		// Browsers on the public origin may open the events socket.
		if u, err := auth.ParseOrigin(opts.Auth.PublicOrigin()); err == nil {
			opts.OriginPatterns = append(slices.Clone(opts.OriginPatterns), u.Host)
		}
	}
	s := &Server{svc: svc, opts: opts, mux: http.NewServeMux(), hub: newHub(svc, opts.SendBuffer, opts.Metrics)}
	s.routes = s.table()
	for _, rt := range s.routes {
		s.mux.Handle(rt.Method+" "+Prefix+rt.Pattern, s.wrap(rt))
	}
	s.mountMetrics()
	// Anything else under the prefix: authenticate first, so the shape of
	// the API is not probed anonymously, then 404.
	s.mux.Handle(Prefix+"/", s.wrap(Route{Scope: mission.ScopeRead, handle: func(http.ResponseWriter, *http.Request, mission.Principal) error {
		return &apiError{status: http.StatusNotFound, code: codeRouteNotFound, msg: "no such route"}
	}}))
	// Everything outside the API is the web console (its own headers).
	s.mux.Handle("/", console.Handler())
	return s
}

// Routes returns the route table.
func (s *Server) Routes() []Route { return append([]Route(nil), s.routes...) }

// WSClients returns how many event sockets are open.
func (s *Server) WSClients() int { return int(s.wsClients.Load()) }

// ServeHTTP serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	s.mux.ServeHTTP(w, r)
}

// wrap authenticates (unless public), checks the scope and, for a request
// authenticated by the session cookie, CSRF; then presents the handler's
// error.
func (s *Server) wrap(rt Route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p mission.Principal
		if rt.Device {
			// Authenticated by the handler, with a device token only.
		} else if rt.Public {
			// No cookie authenticates a public route, but a browser on a
			// foreign origin must not drive login or setup either.
			if err := s.checkOrigin(r); err != nil {
				writeError(w, r, s.opts.Logger, err)
				return
			}
		} else {
			var err error
			p, err = s.authenticate(r.Context(), r)
			if err != nil {
				writeError(w, r, s.opts.Logger, err)
				return
			}
			if p.SessionID != "" {
				if err := s.checkCSRF(r); err != nil {
					writeError(w, r, s.opts.Logger, err)
					return
				}
			}
			if !p.Can(rt.Scope) {
				writeError(w, r, s.opts.Logger, &mission.Error{Code: mission.CodeForbidden, Msg: "the credential lacks the " + rt.Scope + " scope"})
				return
			}
		}
		if err := rt.handle(w, r, p); err != nil {
			writeError(w, r, s.opts.Logger, err)
		}
	})
}

// bearerProtocol prefixes a token offered as a WebSocket subprotocol.
const bearerProtocol = "bearer."

// authenticate reads the token from the Authorization header or, for a
// WebSocket handshake, from a "bearer.<token>" subprotocol; without one,
// the owner's session cookie.
func (s *Server) authenticate(ctx context.Context, r *http.Request) (mission.Principal, error) {
	if tok := tokenOf(r); tok != "" || r.Header.Get("Authorization") != "" || s.opts.Auth == nil {
		return s.svc.Authenticate(ctx, tok)
	}
	sid := sessionCookie(r)
	if sid == "" {
		return mission.Principal{}, mission.ErrUnauthorized
	}
	ses, err := s.opts.Auth.Authenticate(ctx, sid)
	if err != nil {
		return mission.Principal{}, err
	}
	return mission.Principal{SessionID: ses.PublicID, Scopes: mission.SessionScopes()}, nil
}

// safeMethod reports whether a method does not change state.
func safeMethod(m string) bool { return m == http.MethodGet || m == http.MethodHead }

// checkCSRF guards a cookie-authenticated mutation: it needs the session's
// X-CSRF-Token, and an Origin header, when present, must be the public
// origin.
func (s *Server) checkCSRF(r *http.Request) error {
	if safeMethod(r.Method) {
		return nil
	}
	if err := s.checkOrigin(r); err != nil {
		return err
	}
	if !auth.CheckCSRF(sessionCookie(r), r.Header.Get("X-CSRF-Token")) {
		return &apiError{status: http.StatusForbidden, code: codeCSRF, msg: "missing or wrong X-CSRF-Token"}
	}
	return nil
}

// checkOrigin refuses a mutation whose Origin header names another origin
// than the public one.
func (s *Server) checkOrigin(r *http.Request) error {
	o := r.Header.Get("Origin")
	if safeMethod(r.Method) || o == "" || s.opts.Auth == nil || o == s.opts.Auth.PublicOrigin() {
		return nil
	}
	return &apiError{status: http.StatusForbidden, code: codeCSRF, msg: "the request's Origin is not this server's public origin"}
}

// tokenOf returns a request's credential: the Authorization header's
// bearer token when the header is present (bearerHeader: "" for another
// scheme, never a fall-back), else the WebSocket subprotocol
// "bearer.<token>" (a browser cannot set headers on a WebSocket).
func tokenOf(r *http.Request) string {
	if r.Header.Get("Authorization") != "" {
		return bearerHeader(r)
	}
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); strings.HasPrefix(p, bearerProtocol) {
				return strings.TrimPrefix(p, bearerProtocol)
			}
		}
	}
	return ""
}

// bearerHeader returns the Authorization header's bearer token ("Bearer",
// in any case, then one space; the token trimmed of white space), or "".
// It is tokenOf's header rule, and all of the device socket's: a device
// authenticates with the header only, never a subprotocol.
func bearerHeader(r *http.Request) string {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}
