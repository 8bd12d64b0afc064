package tool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
)

type editFileInput struct {
	Path       string `json:"path"`
	OldString  string `json:"oldString"`
	NewString  string `json:"newString"`
	ReplaceAll *bool  `json:"replaceAll"`
}

func (in editFileInput) validate() error {
	switch {
	case in.Path == "":
		return errors.New("path is required")
	case strings.ContainsRune(in.Path, 0):
		return errors.New("path contains a NUL byte")
	case in.OldString == "":
		return errors.New("oldString is required (use write_file to create a file)")
	case in.OldString == in.NewString:
		return errors.New("oldString and newString are the same")
	}
	return nil
}

// EditFile returns the edit_file tool: an exact string replacement that
// fails when the string is absent or not unique (unless replaceAll), and
// when the file changed since this run last read or wrote it.
func EditFile() Tool {
	return &def[editFileInput]{
		name: "edit_file",
		description: "Replace an exact string in a workspace file. oldString must occur exactly once unless replaceAll is true; " +
			"include surrounding lines to make it unique. Read the file first: the edit fails if the file changed since you last read it.",
		schema: mustJSON(object(
			str("path", "File path, relative to the workspace."),
			str("oldString", "The exact text to replace."),
			str("newString", "The replacement text."),
			optBool("replaceAll", "Replace every occurrence (default false)."),
		)),
		effect:   always[editFileInput](EffectIdempotentWrite),
		risk:     riskAlways[editFileInput](RiskWorkspaceWrite),
		run:      runEditFile,
		approval: approveEdit,
	}
}

func approveEdit(in editFileInput) Approval {
	return Approval{Title: "Edit " + in.Path, Detail: fmt.Sprintf("replace %d characters with %d", len(in.OldString), len(in.NewString)),
		Diff: simpleDiff(in.Path, in.OldString, in.NewString)}
}

func runEditFile(_ context.Context, tc *Context, in editFileInput) (Result, error) {
	r, err := resolveWritable(tc.Workspace, in.Path)
	if err != nil {
		return fail("%v", err), nil
	}
	data, err := os.ReadFile(r.Abs)
	if err != nil {
		return fail("%s: %v (use write_file to create a file)", in.Path, errors.Unwrap(err)), nil
	}
	if msg := stale(tc, r.Rel, data, true); msg != "" {
		return fail("%s", msg), nil
	}
	if isBinary(data) {
		return fail("%s looks like a binary file; edit_file edits text only", in.Path), nil
	}
	before := string(data)
	n := strings.Count(before, in.OldString)
	switch {
	case n == 0:
		return fail("oldString not found in %s; read the file and copy the text exactly", in.Path), nil
	case n > 1 && !deref(in.ReplaceAll, false):
		return fail("oldString occurs %d times in %s; add surrounding lines to make it unique, or set replaceAll", n, in.Path), nil
	}
	count := 1
	if deref(in.ReplaceAll, false) {
		count = n
	}
	after := strings.Replace(before, in.OldString, in.NewString, count)
	if err := writeAtomic(r.Abs, []byte(after)); err != nil {
		return Result{}, fmt.Errorf("tool: edit_file %s: %w", r.Rel, err)
	}
	return Result{
		OK:           true,
		Output:       fmt.Sprintf("edited %s: %d replacement(s)", r.Rel, count),
		FileStateOut: map[string]string{r.Rel: sum([]byte(after))},
		Diff:         simpleDiff(r.Rel, before, after),
	}, nil
}
