package tool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
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
// atomically (temp file and rename), creating parent directories. A call
// whose file already holds exactly its content succeeds without writing:
// that is how a call replayed after a crash between its rename and its
// journal record finds its effect done. Reconcile says the same.
func WriteFile() Tool {
	return reconcilable[writeFileInput]{
		def: &def[writeFileInput]{
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
		},
		reconcile: reconcileWriteFile,
	}
}

func runWriteFile(_ context.Context, tc *Context, in writeFileInput) (Result, error) {
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
	content := []byte(in.Content)
	if t.pre.exists && bytes.Equal(t.pre.data, content) {
		return Result{OK: true, Output: fmt.Sprintf("%s already holds this content (%d bytes); nothing to write", t.rel, len(content)),
			FileStateOut: map[string]string{t.rel: sum(content)}}, nil
	}
	if msg := stale(tc, t.rel, t.pre.data, t.pre.exists); msg != "" {
		return fail("%s", msg), nil
	}
	if err := t.write(w, content); err != nil {
		return writeFailed("write_file", t.rel, err)
	}
	verb := "created"
	if t.pre.exists {
		verb = "replaced"
	}
	return Result{
		OK:           true,
		Output:       fmt.Sprintf("%s %s (%d bytes)", verb, t.rel, len(in.Content)),
		FileStateOut: map[string]string{t.rel: sum(content)},
		Diff:         simpleDiff(t.rel, string(t.pre.data), in.Content),
	}, nil
}

// reconcileWriteFile: done when the file holds the content; otherwise not
// done, and running the call again is safe (it only sets content).
func reconcileWriteFile(_ context.Context, tc *Context, in writeFileInput) (Reconciliation, error) {
	w, err := openWorkspace(tc.Workspace)
	if err != nil {
		return Reconciliation{State: ReconcileUnknown}, err
	}
	defer func() { _ = w.Close() }()
	t, err := openWriteTarget(w, tc.Workspace, in.Path)
	if err != nil {
		return Reconciliation{State: ReconcileNotDone}, nil // the call fails the same way when run
	}
	defer t.Close()
	if t.pre.exists && bytes.Equal(t.pre.data, []byte(in.Content)) {
		return Reconciliation{State: ReconcileDone, Output: fmt.Sprintf("%s holds the intended content (%d bytes)", t.rel, len(in.Content)),
			FileStateOut: map[string]string{t.rel: sum(t.pre.data)}}, nil
	}
	return Reconciliation{State: ReconcileNotDone}, nil
}

// writeTarget is a file about to be written: its parent directory, opened
// without following symlinks (nil while it does not exist), and what the
// file held.
type writeTarget struct {
	rel, parent, base string
	dir               *os.File
	pre               preImage
}

// openWriteTarget checks p is writable and reads its pre-image.
func openWriteTarget(w *workspace, ws, p string) (*writeTarget, error) {
	rel, err := writableRel(ws, p)
	if err != nil {
		return nil, err
	}
	t := &writeTarget{rel: rel, parent: filepath.Dir(rel), base: filepath.Base(rel), pre: preImage{mode: 0o644}}
	t.dir, err = w.openDir(t.parent, false)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return t, nil
	case errors.Is(err, syscall.ELOOP):
		return nil, w.symlinkRefusal(p, rel)
	case err != nil:
		return nil, pathErr(p, err)
	}
	if t.pre, err = w.readTarget(t.dir, t.base, rel); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// write makes missing parents and writes data atomically.
func (t *writeTarget) write(w *workspace, data []byte) error {
	if t.dir == nil {
		dir, err := w.openDir(t.parent, true)
		if err != nil {
			return pathErr(t.rel, err)
		}
		t.dir = dir
	}
	return w.writeAtomic(t.dir, t.base, data, t.pre.mode)
}

// Close releases the parent directory.
func (t *writeTarget) Close() {
	if t.dir != nil {
		_ = t.dir.Close()
	}
}

// failErr turns a refusal the model should read into a failed Result and
// anything else into a system error.
func failErr(err error) (Result, error) {
	var pe *PathError
	var tl *tooLargeError
	if errors.As(err, &pe) || errors.As(err, &tl) {
		return fail("%v", err), nil
	}
	return Result{}, err
}

// writeFailed reports a failed write: a path the model can fix is a
// failed Result, anything else a system error.
func writeFailed(tool, rel string, err error) (Result, error) {
	var pe *PathError
	if errors.As(err, &pe) {
		return fail("%v", err), nil
	}
	return Result{}, fmt.Errorf("tool: %s %s: %w", tool, rel, err)
}
