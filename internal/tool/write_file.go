package tool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

type writeFileInput struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

func (in writeFileInput) validate() error {
	if in.Path == "" {
		return errors.New("path is required")
	}
	return nil
}

// WriteFile returns the write_file tool: it creates or replaces a file
// atomically (temp file and rename), creating parent directories.
func WriteFile() Tool {
	return &def[writeFileInput]{
		name:        "write_file",
		description: "Create or replace a file in the workspace with the given content (atomic). To change part of an existing file, prefer edit_file.",
		schema: mustJSON(object(
			str("path", "File path, relative to the workspace."),
			str("content", "The complete new content."),
		)),
		effect: always[writeFileInput](EffectIdempotentWrite),
		risk:   riskAlways[writeFileInput](RiskWorkspaceWrite),
		run:    runWriteFile,
		approval: func(in writeFileInput) Approval {
			return Approval{Title: "Write " + in.Path, Detail: fmt.Sprintf("%d bytes", len(in.Content)), Diff: simpleDiff(in.Path, "", in.Content)}
		},
	}
}

func runWriteFile(_ context.Context, tc *Context, in writeFileInput) (Result, error) {
	r, err := resolveWritable(tc.Workspace, in.Path)
	if err != nil {
		return fail("%v", err), nil
	}
	old, err := os.ReadFile(r.Abs)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fail("%s: %v", in.Path, errors.Unwrap(err)), nil
	}
	if fi, err := os.Stat(r.Abs); err == nil && fi.IsDir() {
		return fail("%s is a directory", in.Path), nil
	}
	if msg := stale(tc, r.Rel, old, exists); msg != "" {
		return fail("%s", msg), nil
	}
	if err := writeAtomic(r.Abs, []byte(in.Content)); err != nil {
		return Result{}, fmt.Errorf("tool: write_file %s: %w", r.Rel, err)
	}
	verb := "created"
	if exists {
		verb = "replaced"
	}
	return Result{
		OK:           true,
		Output:       fmt.Sprintf("%s %s (%d bytes)", verb, r.Rel, len(in.Content)),
		FileStateOut: map[string]string{r.Rel: sum([]byte(in.Content))},
		Diff:         simpleDiff(r.Rel, string(old), in.Content),
	}, nil
}
