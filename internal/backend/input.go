package backend

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/aos-run/aos/internal/kernel"
)

// LogicName is the kernel logic name of external-engine missions.
const LogicName = "aos.backend"

// LocalLogicName is the same logic for a mission `aos run --engine` runs in
// its own process: only that process and `aos resume` register it, so a
// plain worker sharing the data dir never claims it (as engine.LocalLogicName).
const LocalLogicName = LogicName + ".local"

// Input is an external-engine mission's root run input. Its JSON names
// match the built-in loop's input (engine.Input) so that one mission
// creation serves both; Engine says which engine runs it.
type Input struct {
	Objective  string   `json:"objective"`
	Criteria   []string `json:"criteria,omitempty"`
	Boundaries string   `json:"boundaries,omitempty"`
	// Workspace is the mission's worktree: a linked git worktree pinned at
	// Base on branch aos/<mission id8>.
	Workspace string `json:"workspace"`
	// GitDir is the worktree's admin dir, recorded when the worktree was
	// made; empty reads it from the worktree's .git file at setup, before
	// the engine runs.
	GitDir string `json:"gitDir,omitempty"`
	// Base is the base commit; empty takes the worktree's HEAD at setup.
	Base      string `json:"base,omitempty"`
	ProjectID string `json:"projectId,omitempty"`
	// Engine is command:/abs/path, codex, claude or openclaw.
	Engine string `json:"engine"`
	// Model is the model the engine's calls are metered for.
	Model   string `json:"model,omitempty"`
	Network string `json:"network,omitempty"`
	// Verify are the mission's criteria commands, re-run by aos.
	Verify []Verification `json:"verify,omitempty"`
	// VerifyAllow are allowlisted command prefixes from project config,
	// on top of the owner's policy allow rules.
	VerifyAllow []string `json:"verifyAllow,omitempty"`
	// TimeoutSec bounds the engine's run (default 3600 s, and the wall
	// budget).
	TimeoutSec int64 `json:"timeoutSec,omitempty"`
}

// Validate checks an input before a mission is created.
func (in *Input) Validate() error {
	bad := func(msg string) error { return &kernel.Error{Code: kernel.CodeInvalidInput, Seq: -1, Msg: msg} }
	switch {
	case strings.TrimSpace(in.Objective) == "":
		return bad("objective is required")
	case len(in.Objective) > 64<<10:
		return bad("objective is longer than 64 KiB")
	case in.Workspace == "" || !filepath.IsAbs(in.Workspace):
		return bad("workspace must be an absolute path")
	case len(in.Criteria) > 20:
		return bad("at most 20 criteria")
	case len(in.Verify) > MaxVerifications:
		return bad(fmt.Sprintf("at most %d verification commands", MaxVerifications))
	case in.TimeoutSec < 0:
		return bad("timeout must not be negative")
	}
	if _, err := ParseEngine(in.Engine); err != nil {
		return bad(err.Error())
	}
	switch in.Network {
	case "", "none", "open":
	default:
		return bad("network must be none or open")
	}
	for i := range in.Verify {
		if err := in.Verify[i].validate(); err != nil {
			return bad(fmt.Sprintf("verify %d: %s", i+1, err))
		}
	}
	return nil
}

// EngineSpec is a parsed engine name.
type EngineSpec struct {
	// Kind is command, codex, claude or openclaw.
	Kind string
	// Path is the executable of a command engine.
	Path string
}

// Name is how the engine is named in trailers and events.
func (e EngineSpec) Name() string {
	if e.Kind == "command" {
		return "command:" + e.Path
	}
	return e.Kind
}

// ParseEngine parses an external engine's name (builtin is not one):
// codex, claude, openclaw, or command:PATH with an absolute, clean path
// free of control characters (a name is printed to terminals and pages).
func ParseEngine(s string) (EngineSpec, error) {
	if p, ok := strings.CutPrefix(s, "command:"); ok {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p || strings.IndexFunc(p, unicode.IsControl) >= 0 {
			return EngineSpec{}, fmt.Errorf("engine command:%s: the path must be absolute and clean", clip(p, 200))
		}
		return EngineSpec{Kind: "command", Path: p}, nil
	}
	switch s {
	case "codex", "claude", "openclaw":
		return EngineSpec{Kind: s}, nil
	}
	return EngineSpec{}, fmt.Errorf("engine %q is not command:PATH, codex, claude or openclaw", clip(s, 80))
}

func decodeInput(raw json.RawMessage) (Input, error) {
	var in Input
	if err := json.Unmarshal(raw, &in); err != nil {
		return in, fmt.Errorf("backend: decode mission input: %w", err)
	}
	return in, in.Validate()
}

func (in *Input) branch(missionID string) string {
	if len(missionID) > 8 {
		missionID = missionID[:8]
	}
	return "aos/" + missionID
}
