package script

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Assertion is a check on the request a turn answers. Exactly one field is
// set. A failed assertion answers HTTP 400 with a message that names it.
type Assertion struct {
	// LastToolResultContains: the last result of the latest tool-result
	// batch contains this text.
	LastToolResultContains string `yaml:"last_tool_result_contains" json:"last_tool_result_contains"`
	// LastToolResultError: the last tool result is (true) or is not
	// (false) marked as an error.
	LastToolResultError *bool `yaml:"last_tool_result_error" json:"last_tool_result_error"`
	// ToolResults: the latest batch holds exactly this many results.
	ToolResults *int `yaml:"tool_results" json:"tool_results"`
	// LastUserContains: the last user text contains this text.
	LastUserContains string `yaml:"last_user_contains" json:"last_user_contains"`
	// FirstUserContains: the first user text contains this text.
	FirstUserContains string `yaml:"first_user_contains" json:"first_user_contains"`
	// SystemContains: the system prompt contains this text.
	SystemContains string `yaml:"system_contains" json:"system_contains"`
	// TranscriptContains: some message or tool result contains this text.
	TranscriptContains string `yaml:"transcript_contains" json:"transcript_contains"`
	// HasTool: a tool with this name is offered.
	HasTool string `yaml:"has_tool" json:"has_tool"`
	// SystemMessage: a mid-conversation system message (or an operator
	// note in a user message) contains this text.
	OperatorNoteContains string `yaml:"operator_note_contains" json:"operator_note_contains"`
}

func (a Assertion) fields() int {
	n := 0
	for _, set := range []bool{a.LastToolResultContains != "", a.LastToolResultError != nil, a.ToolResults != nil,
		a.LastUserContains != "", a.FirstUserContains != "", a.SystemContains != "", a.TranscriptContains != "",
		a.HasTool != "", a.OperatorNoteContains != ""} {
		if set {
			n++
		}
	}
	return n
}

func (a Assertion) validate() error {
	if a.fields() != 1 {
		return errors.New("an assertion sets exactly one check")
	}
	return nil
}

// String names the assertion as it is written in a script.
func (a Assertion) String() string {
	switch {
	case a.LastToolResultContains != "":
		return fmt.Sprintf("last_tool_result_contains %q", a.LastToolResultContains)
	case a.LastToolResultError != nil:
		return fmt.Sprintf("last_tool_result_error %v", *a.LastToolResultError)
	case a.ToolResults != nil:
		return fmt.Sprintf("tool_results %d", *a.ToolResults)
	case a.LastUserContains != "":
		return fmt.Sprintf("last_user_contains %q", a.LastUserContains)
	case a.FirstUserContains != "":
		return fmt.Sprintf("first_user_contains %q", a.FirstUserContains)
	case a.SystemContains != "":
		return fmt.Sprintf("system_contains %q", a.SystemContains)
	case a.TranscriptContains != "":
		return fmt.Sprintf("transcript_contains %q", a.TranscriptContains)
	case a.HasTool != "":
		return fmt.Sprintf("has_tool %q", a.HasTool)
	case a.OperatorNoteContains != "":
		return fmt.Sprintf("operator_note_contains %q", a.OperatorNoteContains)
	}
	return "empty assertion"
}

// Check returns nil if c satisfies a, else an error that names a and says
// what was seen.
func (a Assertion) Check(c *Conversation) error {
	last := func() (ToolResultView, bool) {
		rs := c.LastToolResults()
		if len(rs) == 0 {
			return ToolResultView{}, false
		}
		return rs[len(rs)-1], true
	}
	fail := func(seen string) error {
		if len(seen) > 200 {
			seen = seen[:200] + "…"
		}
		return fmt.Errorf("assertion failed: %s (saw %q)", a, seen)
	}
	switch {
	case a.LastToolResultContains != "":
		r, ok := last()
		if !ok {
			return fail("no tool result")
		}
		if !strings.Contains(r.Content, a.LastToolResultContains) {
			return fail(r.Content)
		}
	case a.LastToolResultError != nil:
		r, ok := last()
		if !ok {
			return fail("no tool result")
		}
		if r.IsError != *a.LastToolResultError {
			return fail(fmt.Sprintf("is_error=%v", r.IsError))
		}
	case a.ToolResults != nil:
		if n := len(c.LastToolResults()); n != *a.ToolResults {
			return fail(fmt.Sprintf("%d results", n))
		}
	case a.LastUserContains != "":
		if t := c.LastUserText(); !strings.Contains(t, a.LastUserContains) {
			return fail(t)
		}
	case a.FirstUserContains != "":
		if t := c.FirstUserText(); !strings.Contains(t, a.FirstUserContains) {
			return fail(t)
		}
	case a.SystemContains != "":
		if !strings.Contains(c.System, a.SystemContains) {
			return fail(c.System)
		}
	case a.TranscriptContains != "":
		if !strings.Contains(c.allText(), a.TranscriptContains) {
			return fail("not in transcript")
		}
	case a.HasTool != "":
		if !slices.Contains(c.Tools, a.HasTool) {
			return fail(strings.Join(c.Tools, ","))
		}
	case a.OperatorNoteContains != "":
		for _, m := range c.Messages {
			if (m.Role == "system" || (m.Role == "user" && strings.Contains(m.Text, "operator"))) &&
				strings.Contains(m.Text, a.OperatorNoteContains) {
				return nil
			}
		}
		return fail("no operator note")
	}
	return nil
}
