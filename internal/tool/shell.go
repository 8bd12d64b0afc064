package tool

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aos-run/aos/internal/sandbox"
)

// ShellMaxTimeoutSec is the longest timeout a shell call may ask for.
const (
	ShellMaxTimeoutSec     = 600
	ShellDefaultTimeoutSec = 120
)

// shellReadOnly are workspace paths the shell sees read-only (when they
// exist): the same protected paths the file tools refuse. Case variants
// that exist are added per command, and protected names a command creates
// are removed after it (protect.go). Keeping .git read-only also means
// host-side git (the git tools) never runs hooks or config that a
// sandboxed command wrote.
var shellReadOnly = []string{".git", ".aos", "AGENTS.md", "CLAUDE.md"}

type shellInput struct {
	Command    string `json:"command"`
	TimeoutSec *int   `json:"timeoutSec"`
}

func (in shellInput) validate() error {
	switch {
	case strings.TrimSpace(in.Command) == "":
		return errors.New("command is required")
	case strings.ContainsRune(in.Command, 0):
		return errors.New("command contains a NUL byte")
	case in.TimeoutSec != nil && (*in.TimeoutSec < 1 || *in.TimeoutSec > ShellMaxTimeoutSec):
		return fmt.Errorf("timeoutSec must be between 1 and %d", ShellMaxTimeoutSec)
	}
	return nil
}

// Shell returns the shell tool: a command run by bash (or sh) in the
// sandbox with the workspace as working directory. The output's first
// line is "[exit code N]", preceded by notes when the command timed out,
// exceeded the output cap, was cancelled or was killed by a signal.
func Shell() Tool {
	return &def[shellInput]{
		name: "shell",
		description: "Run a shell command (bash -c) in the sandbox, in the workspace directory. Writes are allowed only in the workspace and $TMPDIR; " +
			".git, .aos, AGENTS.md and CLAUDE.md are read-only (use the git tools). Combined output is capped at 1 MiB. " +
			fmt.Sprintf("timeoutSec defaults to %d, at most %d.", ShellDefaultTimeoutSec, ShellMaxTimeoutSec),
		schema: mustJSON(object(
			str("command", "The command line."),
			optInt("timeoutSec", fmt.Sprintf("Timeout in seconds (1-%d), or null for %d.", ShellMaxTimeoutSec, ShellDefaultTimeoutSec)),
		)),
		effect: always[shellInput](EffectNonIdempotent),
		risk: func(_ shellInput, n sandbox.Network) Risk {
			if n == sandbox.NetworkOpen {
				return RiskNetwork
			}
			return RiskWorkspaceWrite
		},
		run: runShell,
		approval: func(in shellInput) Approval {
			return Approval{Title: "Run a shell command", Detail: in.Command}
		},
	}
}

func runShell(ctx context.Context, tc *Context, in shellInput) (Result, error) {
	if tc.Sandbox == nil {
		return Result{}, &sandbox.UnavailableError{Reason: "no sandbox is configured for this run", Fix: "start the worker with the bubblewrap sandbox (see docs/SANDBOX.md)"}
	}
	timeout := time.Duration(deref(in.TimeoutSec, ShellDefaultTimeoutSec)) * time.Second
	before, err := protectedEntries(tc.Workspace)
	if err != nil {
		return Result{}, fmt.Errorf("tool: shell: %w", err)
	}
	readOnly := append([]string{}, shellReadOnly...)
	for n := range before {
		readOnly = append(readOnly, n) // case variants too
	}
	out, err := tc.Sandbox.Run(ctx, sandbox.Spec{
		Command:       in.Command,
		Workspace:     tc.Workspace,
		TmpDir:        tc.TmpDir,
		Home:          tc.Home,
		Network:       tc.Network,
		Timeout:       timeout,
		ReadOnly:      readOnly,
		ExtraDenyRead: tc.ExtraDenyRead,
	})
	// Whatever happened to the command, undo what it did to protected
	// paths (see protect.go).
	removed, uerr := undoProtected(tc.Workspace, before)
	if err != nil {
		var se *sandbox.SpecError
		if errors.As(err, &se) {
			return fail("%v", err), nil
		}
		return Result{}, fmt.Errorf("tool: shell: %w", errors.Join(err, uerr))
	}
	if uerr != nil {
		return Result{}, fmt.Errorf("tool: shell: %w", uerr)
	}
	res := Result{OK: out.ExitCode == 0 && !out.TimedOut && !out.Cancelled && !out.OutputExceeded && out.DiskQuota == nil,
		Output: diskQuotaNote(out) + FormatShellOutput(out, timeout), Trust: TrustUntrusted}
	if len(removed) > 0 {
		res.OK = false
		res.Output = protectedNote(removed) + res.Output
	}
	return res, nil
}

// diskQuotaNote tells the model, before the command's output, that the
// run is over its disk quota (measured by the sandbox after the command),
// which also fails the call.
func diskQuotaNote(out sandbox.Outcome) string {
	if out.DiskQuota == nil {
		return ""
	}
	return "[" + out.DiskQuota.Error() + "]\n"
}

// FormatShellOutput renders an Outcome for the model: notes, then
// "[exit code N]", then the combined output.
func FormatShellOutput(out sandbox.Outcome, timeout time.Duration) string {
	var b strings.Builder
	if out.TimedOut {
		fmt.Fprintf(&b, "[timed out after %s; the command and its children were killed]\n", timeout)
	}
	if out.OutputExceeded {
		fmt.Fprintf(&b, "[output exceeded %d bytes; the command was killed]\n", sandbox.DefaultOutputCap)
	}
	if out.Cancelled {
		b.WriteString("[cancelled]\n")
	}
	if out.Signal != "" {
		fmt.Fprintf(&b, "[killed by %s]\n", out.Signal)
	}
	fmt.Fprintf(&b, "[exit code %d]\n", out.ExitCode)
	b.Write(out.Output)
	return b.String()
}
