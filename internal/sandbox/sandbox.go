package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Spec is one command to run in the sandbox.
type Spec struct {
	// Argv is the program and its arguments. Exactly one of Argv and
	// Command is set.
	Argv []string
	// Command is a shell command run with Shell().
	Command string
	// Workspace is the writable project directory and the working
	// directory. It must be an absolute real path (no symlinks).
	Workspace string
	// TmpDir and Home are the per-run writable TMPDIR and HOME. Empty
	// means a fresh directory for this call, removed afterwards.
	TmpDir, Home string
	// Network is NetworkNone (the default) or NetworkOpen.
	Network Network
	// Timeout bounds the command (default DefaultTimeout).
	Timeout time.Duration
	// Env sets PATH, LANG or TERM; other keys are refused.
	Env map[string]string
	// ReadOnly are paths inside the workspace kept read-only, such as
	// .git, so that host-side git never runs agent-written config.
	ReadOnly []string
	// ExtraDenyRead are more absolute paths hidden for this command.
	ExtraDenyRead []string
	// ExtraFiles are open files the command inherits, as descriptors 5,
	// 6 and 7 (3 and 4 are bwrap's, 8 and 9 the lifeline's): at most
	// three with network none, at most two with network open (whose block
	// pipe takes the next descriptor). For a channel the host opened on
	// purpose, such as the external-engine proxy's control socket. They
	// reach bwrap only: slirp4netns is started with its own descriptors.
	ExtraFiles []*os.File
	// Listen lets a NetworkOpen command listen on sockets of its own
	// network namespace, which seccomp otherwise refuses. No port is
	// forwarded inward (slirp4netns gets no port forwards and no API
	// socket), so only the sandbox's own processes can connect: the
	// external-engine forwarder serves the model proxy on the sandbox's
	// 127.0.0.1 this way. Under NetworkNone listening is always allowed.
	Listen bool

	// Expose are more absolute paths shown read-only inside the hidden
	// directories (the owner's HOME, /root, /home, the run-dir base), for
	// a program the command runs that lives there (an external engine's
	// binary) or the probe's root. Protected paths stay hidden.
	Expose []string
	// Hide are more directories shown empty and read-only, as the owner's
	// HOME is (other projects and missions' worktrees, for an external
	// engine); the writable roots and Expose paths inside them are
	// mounted back. Protected paths stay hidden.
	Hide []string
	// PrivateTmp gives the command an empty, writable tmpfs of its own on
	// /tmp (for a tool that hard-codes /tmp rather than TMPDIR); the
	// writable roots and Expose paths under /tmp are mounted back on it.
	PrivateTmp bool
	// MaxData, when positive, is each process's RLIMIT_DATA instead of
	// Limits.MaxMemory, for a runtime that reserves far more address
	// space than it uses (Node 24 reserves about 0.5 GiB per worker
	// thread). The cgroup's memory limit, where cgroups are usable,
	// still bounds the whole command at Limits.MaxMemory.
	MaxData int64
}

// Outcome is how a command ended.
type Outcome struct {
	// ExitCode is the command's exit code, or -1 when it was killed
	// before it could report one.
	ExitCode int
	// Signal is the signal name (e.g. "SIGKILL") when the command was
	// killed by a signal, as far as bwrap reports it (exit code 128+n).
	Signal string
	// TimedOut, OutputExceeded and Cancelled say why aos ended it.
	TimedOut, OutputExceeded, Cancelled bool
	// Output is the combined stdout and stderr, at most the output cap.
	Output []byte
	// Duration is the wall time of the call.
	Duration time.Duration
	// DiskQuota is set when, after the command, the workspace (without
	// its .git), TMPDIR and HOME use more than Limits.MaxDisk.
	DiskQuota *QuotaError
}

// Sandbox runs commands under bwrap. It is safe for concurrent use.
type Sandbox struct {
	cfg Config

	mu           sync.Mutex // guards admitted, openAdmitted, warmAdmitted and the probe runs
	admitted     bool
	openAdmitted bool // the network-open probe passed too
	warmAdmitted bool // the probe passed in a warm sandbox too
}

// New returns a Sandbox for cfg. It fails only for an invalid Config; a
// missing bwrap or failed probe surfaces from Probe and Run.
func New(cfg Config) (*Sandbox, error) {
	c, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	sweepCgroups(c.CgroupRoot)
	return &Sandbox{cfg: c}, nil
}

// ReapOrphans kills the sandboxed processes that aos processes which died
// on this machine left behind, where commands run in cgroups (see
// sweepCgroups); without cgroups it does nothing. Call it before deciding
// whether an interrupted command ran: afterwards no survivor of a dead aos
// can still change the workspace.
func (s *Sandbox) ReapOrphans() { sweepCgroups(s.cfg.CgroupRoot) }

// Shell returns the shell argv prefix used for Spec.Command: bash without
// profile or rc files when /bin/bash exists, otherwise /bin/sh -c.
func Shell() []string {
	if fi, err := os.Stat("/bin/bash"); err == nil && !fi.IsDir() {
		return []string{"/bin/bash", "--noprofile", "--norc", "-c"}
	}
	return []string{"/bin/sh", "-c"}
}

// Run runs spec confined. The first call runs the canary probe; no command
// is admitted until it passes. Run returns an *UnavailableError when the
// sandbox cannot be set up, a *SpecError for an invalid spec and a
// *SetupError when bwrap failed before starting the command. A command that
// fails, times out or is cancelled is an Outcome, not an error.
func (s *Sandbox) Run(ctx context.Context, spec Spec) (Outcome, error) {
	if err := s.admit(ctx, spec.Network == NetworkOpen, false); err != nil {
		return Outcome{}, err
	}
	return s.run(ctx, spec)
}

// admit runs the probe once per Sandbox and caches only a success; the
// first network-open command also needs the network-open probe to pass,
// and the first warm command the probe in a warm sandbox.
func (s *Sandbox) admit(ctx context.Context, open, warm bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.admitted {
		if _, err := s.probeLocked(ctx); err != nil {
			return err
		}
		s.admitted = true
	}
	if warm && !s.warmAdmitted {
		if _, err := s.probeWarmLocked(ctx, Report{Checks: []Check{{Name: "cold_probe", OK: true}}}); err != nil {
			return err
		}
		s.warmAdmitted = true
	}
	if open && !s.openAdmitted {
		var r Report
		if err := s.probeOpenLocked(ctx, &r); err != nil {
			return err
		}
		if _, err := s.finish(r, time.Now()); err != nil {
			return err
		}
		s.openAdmitted = true
	}
	return nil
}

func (s *Sandbox) run(ctx context.Context, spec Spec) (Outcome, error) {
	if s.cfg.BwrapPath == "" {
		return Outcome{}, errNoBwrap()
	}
	p, cleanup, err := s.plan(spec)
	if err != nil {
		return Outcome{}, err
	}
	defer cleanup()
	out, err := s.exec(ctx, p)
	if err == nil {
		out.DiskQuota = s.checkDisk(ctx, p)
	}
	return out, err
}

func errNoBwrap() error {
	return &UnavailableError{
		Reason: "bubblewrap (bwrap) is not installed or not in PATH",
		Fix:    "install bubblewrap, e.g. `apt-get install -y bubblewrap` or `dnf install bubblewrap`",
	}
}

// tempDir makes a per-call directory, returning it and its cleanup.
func tempDir(prefix string) (string, func(), error) {
	d, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, fmt.Errorf("sandbox: make %s dir: %w", prefix, err)
	}
	real, err := filepath.EvalSymlinks(d)
	if err != nil {
		_ = os.RemoveAll(d)
		return "", nil, fmt.Errorf("sandbox: resolve %s: %w", d, err)
	}
	return real, func() { _ = os.RemoveAll(real) }, nil
}

// lastLines returns the final n lines of b, trimmed.
func lastLines(b []byte, n int) string {
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
