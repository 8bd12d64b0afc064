package backend

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"unicode/utf8"
)

// Schema names of seed 004's runtime contract.
const (
	RequestSchema = "aios.online-agent.runtime-request.v1"
	ResultSchema  = "aios.online-agent.runtime-result.v1"
)

// Runtime result statuses.
const (
	StatusCompleted = "COMPLETED"
	StatusBlocked   = "BLOCKED"
	StatusFailed    = "FAILED"
)

// Bounds on what an engine may return.
const (
	MaxResultBytes       = 256 << 10
	MaxSummaryBytes      = 16 << 10
	MaxVerifications     = 16
	MaxArgv              = 64
	MaxArgBytes          = 4 << 10
	MaxLabelBytes        = 200
	MaxEvidenceBytes     = 64 << 10
	MaxVerifyTimeoutSec  = 1800
	DefaultVerifyTimeout = 600
)

// RuntimeRequest is what an engine receives on stdin.
type RuntimeRequest struct {
	Schema             string   `json:"schema"`
	MissionID          string   `json:"mission_id"`
	Goal               string   `json:"goal"`
	Instructions       string   `json:"instructions,omitempty"`
	SuccessCriteria    []string `json:"success_criteria"`
	Worktree           string   `json:"worktree"`
	BaseCommit         string   `json:"base_commit"`
	Branch             string   `json:"branch"`
	Network            string   `json:"network"`
	VerificationPolicy string   `json:"verification_policy"`
	// ModelBaseURL is the metering proxy's URL when the run has one; the
	// engine authenticates with the credential in its environment.
	ModelBaseURL string `json:"model_base_url,omitempty"`
}

// Verification is one command an engine asks aos to re-run.
type Verification struct {
	Label          string   `json:"label"`
	Argv           []string `json:"argv"`
	Cwd            string   `json:"cwd,omitempty"`
	TimeoutSeconds int      `json:"timeout_seconds,omitempty"`
}

// RuntimeResult is what an engine prints on stdout.
type RuntimeResult struct {
	Schema       string          `json:"schema"`
	Status       string          `json:"status"`
	Summary      string          `json:"summary"`
	Verification []Verification  `json:"verification"`
	Evidence     json.RawMessage `json:"evidence,omitempty"`
}

// ResultError is a runtime result that failed validation: a typed failure
// shown to the owner, never a crash. Reason never repeats more than a short,
// sanitized excerpt of what the engine wrote.
type ResultError struct {
	Reason string
}

func (e *ResultError) Error() string { return "backend: malformed runtime result: " + e.Reason }

// ErrMalformedResult matches any *ResultError with errors.Is.
var ErrMalformedResult = &ResultError{}

// Is matches any *ResultError.
func (e *ResultError) Is(target error) bool { _, ok := target.(*ResultError); return ok }

func badResult(format string, args ...any) error {
	return &ResultError{Reason: fmt.Sprintf(format, args...)}
}

// ParseResult decodes and validates an engine's stdout strictly: exactly
// one JSON object of the result schema, no unknown fields, bounded sizes,
// valid UTF-8, relative verification directories inside the worktree.
func ParseResult(out []byte) (RuntimeResult, error) {
	var r RuntimeResult
	if len(out) > MaxResultBytes {
		return r, badResult("stdout is %d bytes, more than %d", len(out), MaxResultBytes)
	}
	if len(bytes.TrimSpace(out)) == 0 {
		return r, badResult("stdout is empty")
	}
	if !utf8.Valid(out) {
		return r, badResult("stdout is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return RuntimeResult{}, badResult("not a runtime result object: %s", clip(err.Error(), 200))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return RuntimeResult{}, badResult("more than one JSON value on stdout")
	}
	return r, r.Validate()
}

// Validate checks a decoded result's fields.
func (r *RuntimeResult) Validate() error {
	switch {
	case r.Schema != ResultSchema:
		return badResult("schema is %q, want %q", clip(r.Schema, 80), ResultSchema)
	case r.Status != StatusCompleted && r.Status != StatusBlocked && r.Status != StatusFailed:
		return badResult("status is %q, want COMPLETED, BLOCKED or FAILED", clip(r.Status, 40))
	case strings.TrimSpace(r.Summary) == "":
		return badResult("summary is empty")
	case len(r.Summary) > MaxSummaryBytes:
		return badResult("summary is longer than %d bytes", MaxSummaryBytes)
	case len(r.Verification) > MaxVerifications:
		return badResult("more than %d verification commands", MaxVerifications)
	case len(r.Evidence) > MaxEvidenceBytes:
		return badResult("evidence is longer than %d bytes", MaxEvidenceBytes)
	}
	if len(r.Evidence) > 0 && !bytes.HasPrefix(bytes.TrimSpace(r.Evidence), []byte("{")) && string(bytes.TrimSpace(r.Evidence)) != "null" {
		return badResult("evidence must be an object")
	}
	for i := range r.Verification {
		if err := r.Verification[i].validate(); err != nil {
			return badResult("verification %d: %s", i+1, err.Error())
		}
	}
	return nil
}

func (v *Verification) validate() error {
	switch {
	case len(v.Label) > MaxLabelBytes:
		return fmt.Errorf("label longer than %d bytes", MaxLabelBytes)
	case len(v.Argv) == 0:
		return errors.New("argv is empty")
	case len(v.Argv) > MaxArgv:
		return fmt.Errorf("argv has more than %d words", MaxArgv)
	case v.TimeoutSeconds < 0 || v.TimeoutSeconds > MaxVerifyTimeoutSec:
		return fmt.Errorf("timeout_seconds must be 0..%d", MaxVerifyTimeoutSec)
	}
	for _, a := range v.Argv {
		if len(a) > MaxArgBytes || strings.ContainsRune(a, 0) {
			return errors.New("an argument is too long or holds NUL")
		}
	}
	if v.Argv[0] == "" {
		return errors.New("argv[0] is empty")
	}
	c := v.Cwd
	if c == "" {
		c = "."
	}
	if strings.HasPrefix(c, "/") || strings.ContainsRune(c, 0) || len(c) > MaxArgBytes {
		return errors.New("cwd must be relative to the worktree")
	}
	clean := path.Clean(c)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return errors.New("cwd leaves the worktree")
	}
	for _, part := range strings.Split(clean, "/") {
		if part == ".git" {
			return errors.New("cwd is inside .git")
		}
	}
	v.Cwd = clean
	return nil
}

// clip cuts s to n bytes at a rune boundary and makes controls visible.
func clip(s string, n int) string {
	if len(s) > n {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError {
			return '?'
		}
		return r
	}, s)
}
