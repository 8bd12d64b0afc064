package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Codes the client adds to the server's (internal/api/errors.go and the
// mission service's error codes).
const (
	// CodeBadServer: the server URL is malformed.
	CodeBadServer = "bad_server_url"
	// CodeBadResponse: the server answered an error without a JSON error
	// body (a proxy, or not an aos server).
	CodeBadResponse = "bad_response"
)

// Error is an error answer of the server: its HTTP status and the code and
// message of its {"error":{code,message}} body.
type Error struct {
	Status  int
	Code    string
	Message string
	// Guidance says what to do next, when the server gave it (the agent
	// service's errors).
	Guidance string
	// RetryAfter is the answer's Retry-After (whole seconds), when a
	// throttled request (429) may be retried; 0 when absent.
	RetryAfter time.Duration
}

// Error returns "client: <code>: <message> (HTTP <status>)".
func (e *Error) Error() string {
	s := "client: " + e.Code
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	return s
}

// IsAuth reports whether the server refused the credential (401) or its
// scope (403).
func (e *Error) IsAuth() bool {
	return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden
}

// IsNotFound reports a 404.
func (e *Error) IsNotFound() bool { return e.Status == http.StatusNotFound }

// UnreachableError says the server could not be reached or the exchange
// broke off (connection refused, DNS, timeout, reset).
type UnreachableError struct {
	Server string
	Err    error
}

// Error returns "client: server <url> unreachable: <cause>".
func (e *UnreachableError) Error() string {
	return "client: server " + e.Server + " unreachable: " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *UnreachableError) Unwrap() error { return e.Err }

// decodeError turns an error response into *Error.
func decodeError(method, path string, status int, data []byte, hdr http.Header) error {
	e := decodeBody(method, path, status, data)
	if n, err := strconv.Atoi(strings.TrimSpace(hdr.Get("Retry-After"))); err == nil && n > 0 {
		e.RetryAfter = time.Duration(n) * time.Second
	}
	return e
}

func decodeBody(method, path string, status int, data []byte) *Error {
	var body struct {
		Error struct {
			Code     string `json:"code"`
			Message  string `json:"message"`
			Guidance string `json:"guidance"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &body); err != nil || body.Error.Code == "" {
		msg := strings.TrimSpace(string(data))
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		if msg == "" {
			msg = http.StatusText(status)
		}
		return &Error{Status: status, Code: CodeBadResponse, Message: method + " " + path + ": " + msg}
	}
	return &Error{Status: status, Code: body.Error.Code, Message: body.Error.Message, Guidance: body.Error.Guidance}
}

// AsError returns err's *Error, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
