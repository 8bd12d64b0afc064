// Package clients owns the daemon's client processes (seed 002 S15): local
// programs such as a desktop viewer or the console in an app window,
// declared with a launch and restart policy. The daemon is their only
// owner: it starts, stops and focuses them, restarts a crashed one by
// policy, and routes a detail request from one client kind to another by
// starting or focusing it. Clients never control each other: each speaks
// only to the daemon, over its own stdin (commands) and stdout (lines).
//
// The line protocol: a client prints "ready" when it is connected; the
// daemon writes "focus" and "detail <json>" lines to it; a client asks for
// a detail elsewhere by printing "detail <kind> <json>". A client that
// exits or crashes never stops the daemon.
//
// It imports nothing of aos.
package clients

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sync"
	"time"
)

// State is a client's lifecycle state.
type State string

// The states.
const (
	StateStopped   State = "stopped"
	StateStarting  State = "starting"
	StateConnected State = "connected"
	StateCrashed   State = "crashed"
)

// Restart policies.
const (
	RestartNever   = "never"
	RestartOnCrash = "on-crash"
)

// Spec declares one client kind (from the user-local configuration).
type Spec struct {
	// Kind names the client (viewer, console, …): [a-z][a-z0-9-]{0,31}.
	Kind string `json:"kind"`
	// Argv is the program (an absolute path) and its arguments.
	Argv []string `json:"argv"`
	// Restart is never or on-crash (default on-crash).
	Restart string `json:"restart,omitempty"`
	// MaxRestarts bounds the restarts after crashes (default 5).
	MaxRestarts int `json:"maxRestarts,omitempty"`
	// DetailTo lists the kinds this client may route details to.
	DetailTo []string `json:"detailTo,omitempty"`
}

// Status is a client's state as the daemon tracks it.
type Status struct {
	Kind     string `json:"kind"`
	State    State  `json:"state"`
	PID      int    `json:"pid,omitempty"`
	Restarts int    `json:"restarts"`
	// LastExit describes the last exit (code or signal), if any.
	LastExit string `json:"lastExit,omitempty"`
}

// Code classifies the package's errors.
type Code string

// Error codes.
const (
	CodeInvalid      Code = "invalid"       // a bad spec or request
	CodeUnknownKind  Code = "unknown_kind"  // no client of that kind is declared
	CodeInvalidState Code = "invalid_state" // e.g. focus of a client that is not connected
	CodeNotAllowed   Code = "not_allowed"   // a detail route the spec does not declare
)

// Error is the package's typed failure.
type Error struct {
	Code Code
	Msg  string
}

// Error returns "clients: <code>: <message>".
func (e *Error) Error() string { return "clients: " + string(e.Code) + ": " + e.Msg }

// Is matches another *Error by code.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code
}

var kindRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`) })

// validate checks specs and fills defaults.
func validate(specs []Spec) (map[string]Spec, error) {
	out := map[string]Spec{}
	for _, s := range specs {
		if !kindRE().MatchString(s.Kind) {
			return nil, &Error{Code: CodeInvalid, Msg: fmt.Sprintf("client kind %q: want [a-z][a-z0-9-]{0,31}", s.Kind)}
		}
		if _, dup := out[s.Kind]; dup {
			return nil, &Error{Code: CodeInvalid, Msg: "client kind " + s.Kind + " is declared twice"}
		}
		if len(s.Argv) == 0 || !filepath.IsAbs(s.Argv[0]) {
			return nil, &Error{Code: CodeInvalid, Msg: "client " + s.Kind + ": argv must start with an absolute program path"}
		}
		switch s.Restart {
		case "":
			s.Restart = RestartOnCrash
		case RestartNever, RestartOnCrash:
		default:
			return nil, &Error{Code: CodeInvalid, Msg: "client " + s.Kind + ": restart must be never or on-crash"}
		}
		if s.MaxRestarts < 0 {
			return nil, &Error{Code: CodeInvalid, Msg: "client " + s.Kind + ": maxRestarts must not be negative"}
		}
		if s.MaxRestarts == 0 {
			s.MaxRestarts = 5
		}
		out[s.Kind] = s
	}
	for _, s := range out {
		for _, k := range s.DetailTo {
			if _, ok := out[k]; !ok || k == s.Kind {
				return nil, &Error{Code: CodeInvalid, Msg: fmt.Sprintf("client %s: detailTo names %q, not another declared kind", s.Kind, k)}
			}
		}
	}
	return out, nil
}

// backoff is the wait before restart n (1-based): 100 ms doubling, at
// most 5 s.
func backoff(n int) time.Duration {
	d := 100 * time.Millisecond
	for i := 1; i < n && d < 5*time.Second; i++ {
		d *= 2
	}
	return min(d, 5*time.Second)
}
