package sandbox

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
)

// InitArg is the hidden first argument that makes the aos binary the
// warm sandbox's init (InitMain). internal/cli dispatches it before cobra.
const InitArg = "__sandbox-init"

// Warm runs one run's commands in one long-lived sandbox: bwrap starts
// once, with the aos binary as a small init inside it (InitMain), and
// each command is started by that init on request over a private
// channel. The confinement is the cold path's (Sandbox.Run): the same
// bwrap flags, mounts, seccomp filter, rlimits and empty network, set up
// from the same plan. A command whose spec cannot share it (network open,
// ExtraFiles, no per-run TMPDIR and HOME, a program that must be
// exposed from a hidden dir) runs on the cold path instead, and so does
// one that arrives while another runs. docs/SANDBOX.md, "The warm
// sandbox", says what differs.
//
// A Warm is safe for concurrent use. Close tears the sandbox down; the
// engine closes it when the run's logic returns (the run ended, paused on
// a durable wait, or its worker stopped).
type Warm struct {
	s *Sandbox

	mu     sync.Mutex // held while a command runs and while the box starts or stops
	box    *warmBox   // the running sandbox; nil until the first warm command. Guarded by mu
	closed bool       // guarded by mu
	starts int        // boxes started, for tests. Guarded by mu
}

// NewWarm returns a warm sandbox for one run. Nothing starts until its
// first command.
func (s *Sandbox) NewWarm() *Warm { return &Warm{s: s} }

// ReapOrphans is Sandbox.ReapOrphans.
func (w *Warm) ReapOrphans() { w.s.ReapOrphans() }

// Run runs spec in the warm sandbox, or on the cold path when it cannot
// share it; see Sandbox.Run for the errors and the Outcome. If the init
// has died (a command may kill it), the next command starts a new warm
// sandbox, confined the same way; nothing ever runs outside one.
func (w *Warm) Run(ctx context.Context, spec Spec) (Outcome, error) {
	cold := coldReason(spec) != ""
	if err := w.s.admit(ctx, spec.Network == NetworkOpen, !cold); err != nil {
		return Outcome{}, err
	}
	if cold || !w.mu.TryLock() {
		return w.s.run(ctx, spec)
	}
	defer w.mu.Unlock()
	if w.closed {
		return w.s.run(ctx, spec)
	}
	return w.runLocked(ctx, spec)
}

// Close stops the warm sandbox and everything in it, and waits until its
// processes are gone. Later commands run on the cold path.
func (w *Warm) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if w.box != nil {
		w.box.stop()
		w.box = nil
	}
}

// coldReason says why spec must run on the cold path, or "".
func coldReason(spec Spec) string {
	switch {
	case spec.Network == NetworkOpen:
		return "network open"
	case len(spec.ExtraFiles) > 0:
		return "extra files"
	case spec.TmpDir == "" || spec.Home == "":
		return "no per-run TMPDIR and HOME"
	}
	return ""
}

// keyArgv stands for the command when the mount key is computed: a
// relative name exposes nothing, so the key is the same for every
// command of a spec.
var keyArgv = []string{"true"}

// mountKey is everything bwrap is told before the command: namespaces,
// environment, mounts, covers, chdir, filter and status descriptors.
func (p plan) mountKey() string {
	a := p.args(3, 4)
	for i, s := range a {
		if s == "--" {
			a = a[:i]
			break
		}
	}
	return strings.Join(a, "\x00")
}

// commandArgv is what the init runs for spec: the argv, or the shell.
func commandArgv(spec Spec) []string {
	if len(spec.Argv) > 0 {
		return spec.Argv
	}
	return append(Shell(), spec.Command)
}

// exposedElsewhere reports whether argv0 is an absolute program the cold
// path would have to expose from a hidden dir (it exposes the program it
// runs): the warm sandbox's mounts do not, so it runs cold.
func (p plan) exposedElsewhere(argv0 string) bool {
	if !filepath.IsAbs(argv0) {
		return false
	}
	real, err := filepath.EvalSymlinks(argv0)
	if err != nil {
		return false // missing: it fails the same way warm or cold
	}
	return !p.visible(real)
}
