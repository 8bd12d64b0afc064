package api

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/aos-run/aos/internal/auth"
	"github.com/aos-run/aos/internal/device"
	"github.com/aos-run/aos/internal/mission"
)

// API error codes the API adds to the service's own.
const (
	codeInvalidJSON   = "invalid_json"
	codeBodyTooLarge  = "body_too_large"
	codeInvalidQuery  = "invalid_input"
	codeRouteNotFound = "not_found"
	codeInternal      = "internal"
	codeCSRF          = "csrf"
)

// authStatus maps each auth error code to an HTTP status.
var authStatus = map[auth.Code]int{
	auth.CodeInvalidInput: http.StatusBadRequest,
	auth.CodeUnauthorized: http.StatusUnauthorized,
	auth.CodeConflict:     http.StatusConflict,
	auth.CodeNotFound:     http.StatusNotFound,
	auth.CodeThrottled:    http.StatusTooManyRequests,
	// Passkeys are not configured on this server (an IP origin).
	auth.CodeUnavailable: http.StatusServiceUnavailable,
	// Login before setup: the request is fine, the server's state is not.
	auth.CodeSetupRequired: http.StatusConflict,
	// The caller is authenticated but its session is too old for this
	// (adding a passkey): not 401, which would say the session is bad.
	auth.CodeReauthRequired: http.StatusForbidden,
}

// deviceStatus maps each device error code to an HTTP status.
var deviceStatus = map[device.Code]int{
	device.CodeInvalidInput: http.StatusBadRequest,
	device.CodeUnauthorized: http.StatusUnauthorized,
	device.CodeNotFound:     http.StatusNotFound,
	device.CodeThrottled:    http.StatusTooManyRequests,
}

// statusOf maps each service error code to an HTTP status.
var statusOf = map[mission.Code]int{
	mission.CodeInvalidInput: http.StatusBadRequest,
	mission.CodeNotFound:     http.StatusNotFound,
	mission.CodeConflict:     http.StatusConflict,
	// The wait was answered (or expired) meanwhile: the request was valid
	// but the state moved on, which is what 409 says.
	mission.CodeWaitNotPending: http.StatusConflict,
	mission.CodeRunEnded:       http.StatusConflict,
	// The daily cap is the owner's own rate limit: the same request
	// succeeds tomorrow (UTC) or after the cap is raised, hence 429, not
	// 402 (reserved) or 403 (the caller may do this, just not now).
	mission.CodeDailyCap:     http.StatusTooManyRequests,
	mission.CodeUnauthorized: http.StatusUnauthorized,
	mission.CodeForbidden:    http.StatusForbidden,
	// git failing is usually the remote's doing (unreachable, refused
	// authentication, no such repository): the server could not get a
	// valid answer from upstream, which is what 502 says.
	mission.CodeGitFailed: http.StatusBadGateway,
	// A model whose endpoint is not configured or does not answer (a local
	// server that is not running): the request is well formed, the service
	// it needs is not there now, which is what 503 says.
	mission.CodeModelUnavailable: http.StatusServiceUnavailable,
	// Events after the cursor were pruned by retention: what the client
	// asked for is gone for good, which is what 410 says.
	mission.CodeCursorExpired: http.StatusGone,
}

// apiError is an error the API itself raises (bad JSON, a bad query).
type apiError struct {
	status int
	code   string
	msg    string
}

// Error describes the refusal.
func (e *apiError) Error() string { return "api: " + e.code + ": " + e.msg }

// errorBody is every error response's shape.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		// Guidance says what to do next (agent service errors only).
		Guidance string `json:"guidance,omitempty"`
	} `json:"error"`
}

// writeError presents err. A service or API error shows its code and safe
// message; anything else is a 500 whose text stays in the log.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	var body errorBody
	status := http.StatusInternalServerError
	var ae *apiError
	var me *mission.Error
	var au *auth.Error
	var de *device.Error
	switch {
	case errors.As(err, &de) && deviceStatus[de.Code] != 0:
		status, body.Error.Code, body.Error.Message = deviceStatus[de.Code], string(de.Code), de.Msg
		if de.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.FormatInt(int64((de.RetryAfter+time.Second-1)/time.Second), 10))
		}
	case errors.As(err, &au) && authStatus[au.Code] != 0:
		status, body.Error.Code, body.Error.Message = authStatus[au.Code], string(au.Code), au.Msg
		if au.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.FormatInt(int64((au.RetryAfter+time.Second-1)/time.Second), 10))
		}
	case isAgentError(err):
		status, body, _ = agentError(err)
	case errors.As(err, &ae):
		status, body.Error.Code, body.Error.Message = ae.status, ae.code, ae.msg
	case errors.As(err, &me) && statusOf[me.Code] != 0:
		status, body.Error.Code, body.Error.Message = statusOf[me.Code], string(me.Code), me.Msg
	default:
		body.Error.Code, body.Error.Message = codeInternal, "internal error"
		log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err.Error())
	}
	if body.Error.Message == "" {
		body.Error.Message = http.StatusText(status)
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="aos"`)
	}
	writeJSON(w, status, body)
}

func isAgentError(err error) bool { _, _, ok := agentError(err); return ok }
