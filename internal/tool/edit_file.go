package tool

import (
	"context"
	"errors"
	"fmt"
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
// when the file changed since this run last read or wrote it, unless the
// change is this very edit (a call replayed after a crash between its
// rename and its journal record): then it succeeds without writing.
func EditFile() Tool {
	return reconcilable[editFileInput]{
		def: &def[editFileInput]{
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
		},
		reconcile: reconcileEditFile,
	}
}

func approveEdit(in editFileInput) Approval {
	return Approval{Title: "Edit " + in.Path, Detail: fmt.Sprintf("replace %d characters with %d", len(in.OldString), len(in.NewString)),
		Diff: simpleDiff(in.Path, in.OldString, in.NewString)}
}

func runEditFile(_ context.Context, tc *Context, in editFileInput) (Result, error) {
	w, err := openWorkspace(tc.Workspace)
	if err != nil {
		return Result{}, err
	}
	defer func() { _ = w.Close() }()
	t, err := openWriteTarget(w, tc.Workspace, in.Path)
	if err != nil {
		return failErr(err)
	}
	defer t.Close()
	if !t.pre.exists {
		return fail("%s: no such file (use write_file to create a file)", in.Path), nil
	}
	if msg := stale(tc, t.rel, t.pre.data, true); msg != "" {
		if before, ok := editApplied(string(t.pre.data), tc.FileState[t.rel], in); ok {
			return Result{OK: true, Output: fmt.Sprintf("edited %s: the file already holds this edit; nothing to write", t.rel),
				FileStateOut: map[string]string{t.rel: sum(t.pre.data)}, Diff: simpleDiff(t.rel, before, string(t.pre.data))}, nil
		}
		return fail("%s", msg), nil
	}
	if isBinary(t.pre.data) {
		return fail("%s looks like a binary file; edit_file edits text only", in.Path), nil
	}
	before := string(t.pre.data)
	after, count, msg := applyEdit(before, in)
	if msg != "" {
		return fail("%s", msg), nil
	}
	if err := t.write(w, []byte(after)); err != nil {
		return writeFailed("edit_file", t.rel, err)
	}
	return Result{
		OK:           true,
		Output:       fmt.Sprintf("edited %s: %d replacement(s)", t.rel, count),
		FileStateOut: map[string]string{t.rel: sum([]byte(after))},
		Diff:         simpleDiff(t.rel, before, after),
	}, nil
}

// applyEdit applies in to before, or says why it cannot.
func applyEdit(before string, in editFileInput) (after string, count int, msg string) {
	n := strings.Count(before, in.OldString)
	switch {
	case n == 0:
		return "", 0, fmt.Sprintf("oldString not found in %s; read the file and copy the text exactly", in.Path)
	case n > 1 && !deref(in.ReplaceAll, false):
		return "", 0, fmt.Sprintf("oldString occurs %d times in %s; add surrounding lines to make it unique, or set replaceAll", n, in.Path)
	}
	count = 1
	if deref(in.ReplaceAll, false) {
		count = n
	}
	return strings.Replace(before, in.OldString, in.NewString, count), count, ""
}

// editMaxCandidates bounds the pre-images editApplied tries.
const editMaxCandidates = 4096

// editApplied reports whether current is the result of applying in to the
// pre-image whose sha256 is preSum (the content this run last read or
// wrote), and returns that pre-image. It rebuilds candidate pre-images by
// putting oldString back where newString occurs; only a candidate with
// the exact recorded hash, which the edit turns into exactly current,
// counts, so a yes is certain. A no may be a false negative (newString
// also occurred before the edit): then the staleness message stands.
func editApplied(current, preSum string, in editFileInput) (string, bool) {
	if preSum == "" || preSum == sum([]byte(current)) {
		return "", false
	}
	check := func(cand string) bool {
		if sum([]byte(cand)) != preSum {
			return false
		}
		after, _, msg := applyEdit(cand, in)
		return msg == "" && after == current
	}
	if deref(in.ReplaceAll, false) && in.NewString != "" {
		cand := strings.ReplaceAll(current, in.NewString, in.OldString)
		return cand, check(cand)
	}
	tried := 0
	for i := 0; i <= len(current)-len(in.NewString) && tried < editMaxCandidates; i++ {
		if !strings.HasPrefix(current[i:], in.NewString) {
			continue
		}
		tried++
		cand := current[:i] + in.OldString + current[i+len(in.NewString):]
		if check(cand) {
			return cand, true
		}
	}
	return "", false
}

// reconcileEditFile: done when the file holds this edit applied to what
// the run last saw; not done when it still holds what the run last saw;
// unknown otherwise.
func reconcileEditFile(_ context.Context, tc *Context, in editFileInput) (Reconciliation, error) {
	w, err := openWorkspace(tc.Workspace)
	if err != nil {
		return Reconciliation{State: ReconcileUnknown}, err
	}
	defer func() { _ = w.Close() }()
	t, err := openWriteTarget(w, tc.Workspace, in.Path)
	if err != nil || !t.pre.exists {
		if t != nil {
			t.Close()
		}
		return Reconciliation{State: ReconcileUnknown}, nil
	}
	defer t.Close()
	last := tc.FileState[t.rel]
	if last != "" && last == sum(t.pre.data) {
		return Reconciliation{State: ReconcileNotDone}, nil
	}
	if _, ok := editApplied(string(t.pre.data), last, in); ok {
		return Reconciliation{State: ReconcileDone, Output: fmt.Sprintf("edited %s: the file holds this edit", t.rel),
			FileStateOut: map[string]string{t.rel: sum(t.pre.data)}}, nil
	}
	return Reconciliation{State: ReconcileUnknown}, nil
}
