package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/aos-run/aos/internal/sandbox"
)

// ReadArtifactMaxLimit is the most bytes one read_artifact call returns.
const ReadArtifactMaxLimit = 12000

// ReadArtifact reads part of a stored artifact, such as a truncated output.
type ReadArtifact struct{}

type readArtifactInput struct {
	Name   string `json:"name"`
	Offset *int   `json:"offset"`
	Limit  *int   `json:"limit"`
}

func (in readArtifactInput) validate() error {
	switch {
	case in.Name == "":
		return errors.New("name is required")
	case in.Offset != nil && *in.Offset < 0:
		return errors.New("offset must be >= 0")
	case in.Limit != nil && (*in.Limit < 1 || *in.Limit > ReadArtifactMaxLimit):
		return fmt.Errorf("limit must be between 1 and %d", ReadArtifactMaxLimit)
	}
	return nil
}

// Name implements Tool.
func (ReadArtifact) Name() string { return "read_artifact" }

// Description implements Tool.
func (ReadArtifact) Description() string {
	return "Read part of a stored artifact (for example a long tool output that was truncated), by byte offset and limit."
}

// Schema implements Tool.
func (ReadArtifact) Schema() json.RawMessage {
	return mustJSON(object(
		str("name", "The artifact name given in the truncation note."),
		optInt("offset", "Byte offset to start at (default 0)."),
		optInt("limit", fmt.Sprintf("Bytes to read, at most %d (default %d).", ReadArtifactMaxLimit, ReadArtifactMaxLimit)),
	))
}

// Validate implements Tool.
func (t ReadArtifact) Validate(input json.RawMessage) error {
	_, err := parse[readArtifactInput](t.Name(), input)
	return err
}

// Effect implements Tool.
func (ReadArtifact) Effect(json.RawMessage) Effect { return EffectRead }

// Risk implements Tool.
func (ReadArtifact) Risk(json.RawMessage, sandbox.Network) Risk { return RiskRead }

// ParallelSafe implements Tool.
func (ReadArtifact) ParallelSafe() bool { return true }

// Run implements Tool.
func (t ReadArtifact) Run(ctx context.Context, tc *Context, input json.RawMessage) (Result, error) {
	in, err := parse[readArtifactInput](t.Name(), input)
	if err != nil {
		return fail("%v", err), nil
	}
	if tc.Artifacts == nil {
		return Result{}, errors.New("tool: read_artifact: no artifact store")
	}
	data, err := tc.Artifacts.Get(ctx, in.Name)
	if err != nil {
		return fail("artifact %q: %v", in.Name, err), nil
	}
	off, limit := deref(in.Offset, 0), deref(in.Limit, ReadArtifactMaxLimit)
	if off > len(data) {
		return fail("offset %d is past the end (%d bytes)", off, len(data)), nil
	}
	// Snap to UTF-8 boundaries.
	for off < len(data) && !utf8.RuneStart(data[off]) {
		off++
	}
	end := min(off+limit, len(data))
	for end < len(data) && end > off && !utf8.RuneStart(data[end]) {
		end--
	}
	var b strings.Builder
	b.Write(data[off:end])
	if end < len(data) {
		fmt.Fprintf(&b, "\n[bytes %d-%d of %d; continue with offset %d]", off, end, len(data), end)
	} else {
		fmt.Fprintf(&b, "\n[bytes %d-%d of %d; end of artifact]", off, end, len(data))
	}
	return Result{OK: true, Output: b.String(), Trust: TrustUntrusted}, nil
}

// DescribeForApproval implements Tool.
func (t ReadArtifact) DescribeForApproval(input json.RawMessage) Approval {
	in, _ := decode[readArtifactInput](t.Name(), input)
	return Approval{Title: "Read artifact " + in.Name, Detail: fmt.Sprintf("offset %d", deref(in.Offset, 0))}
}
