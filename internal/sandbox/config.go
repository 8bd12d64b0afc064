package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Network is the network mode of a sandboxed command.
type Network string

// Network modes. NetworkNone gives the command its own empty network
// namespace; NetworkOpen shares the host's network for outbound connections
// while unix sockets and listening stay refused by seccomp.
const (
	NetworkNone Network = "none"
	NetworkOpen Network = "open"
)

// Defaults for Config fields left zero.
const (
	DefaultOutputCap = 1 << 20
	DefaultKillGrace = 2 * time.Second
	DefaultTimeout   = 10 * time.Minute
	DefaultPath      = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	DefaultLang      = "C.UTF-8"
	DefaultTerm      = "dumb"
)

// SandboxUID is the uid and gid the command runs as inside its user
// namespace. It is non-zero so that nothing inside looks like root.
const SandboxUID = 1000

// Config configures a Sandbox. The zero value is usable: every field has a
// default resolved by New.
type Config struct {
	// BwrapPath is the bwrap binary; empty means look it up in PATH.
	BwrapPath string
	// HostHome is the real user's home, whose secrets (~/.ssh, ~/.aws,
	// ~/.config, ~/.gnupg, ~/.claude*, ~/.codex*) are hidden. Empty means
	// os.UserHomeDir.
	HostHome string
	// DataDir is aos's data dir; it is hidden from commands.
	DataDir string
	// EnvFiles are env files (KEY=VALUE secrets) hidden from commands.
	EnvFiles []string
	// ExtraDenyRead are more absolute paths hidden from every command.
	ExtraDenyRead []string
	// StateDir holds the private device nodes used when running as root.
	// Empty means DataDir/sandbox, or a per-uid dir under os.TempDir.
	StateDir string
	// ProbeCommand runs the probe's inside half (ProbeChildMain). Empty
	// means the current executable with "sandbox probe-child".
	ProbeCommand []string
	// OutputCap is the combined output cap in bytes (default 1 MiB).
	OutputCap int
	// KillGrace is the time between TERM and KILL (default 2 s).
	KillGrace time.Duration
	// Path, Lang and Term are the PATH, LANG and TERM given to commands.
	Path, Lang, Term string
}

// resolve fills in defaults. It fails only for an invalid configuration;
// a missing bwrap is reported later, by Probe and Run, as UnavailableError.
func (c Config) resolve() (Config, error) {
	if c.BwrapPath == "" {
		if p, err := exec.LookPath("bwrap"); err == nil {
			c.BwrapPath = p
		}
	}
	if c.HostHome == "" {
		if h, err := os.UserHomeDir(); err == nil {
			c.HostHome = h
		}
	}
	if c.StateDir == "" {
		if c.DataDir != "" {
			c.StateDir = filepath.Join(c.DataDir, "sandbox")
		} else {
			c.StateDir = filepath.Join(os.TempDir(), fmt.Sprintf("aos-sandbox-%d", os.Getuid()))
		}
	}
	if len(c.ProbeCommand) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return c, fmt.Errorf("sandbox: find own executable for the probe: %w", err)
		}
		c.ProbeCommand = []string{exe, "sandbox", "probe-child"}
	}
	if c.OutputCap <= 0 {
		c.OutputCap = DefaultOutputCap
	}
	if c.KillGrace <= 0 {
		c.KillGrace = DefaultKillGrace
	}
	if c.Path == "" {
		c.Path = DefaultPath
	}
	if c.Lang == "" {
		c.Lang = DefaultLang
	}
	if c.Term == "" {
		c.Term = DefaultTerm
	}
	for _, p := range append(append([]string{c.DataDir, c.StateDir}, c.EnvFiles...), c.ExtraDenyRead...) {
		if p != "" && !filepath.IsAbs(p) {
			return c, &SpecError{Field: "config", Reason: fmt.Sprintf("path %q is not absolute", p)}
		}
	}
	return c, nil
}

// ConfigFromEnv returns the Config the worker and the CLI share: dataDir
// hidden, AOS_SANDBOX_EXTRA_DENY_READ (comma-separated absolute paths) as
// ExtraDenyRead and AOS_ENV_FILE as an env file. Relative entries are made
// absolute against the current directory.
func ConfigFromEnv(dataDir string) Config {
	c := Config{DataDir: dataDir}
	for _, p := range strings.Split(os.Getenv("AOS_SANDBOX_EXTRA_DENY_READ"), ",") {
		if p = strings.TrimSpace(p); p != "" {
			if abs, err := filepath.Abs(p); err == nil {
				c.ExtraDenyRead = append(c.ExtraDenyRead, abs)
			}
		}
	}
	if p := os.Getenv("AOS_ENV_FILE"); p != "" {
		if abs, err := filepath.Abs(p); err == nil {
			c.EnvFiles = append(c.EnvFiles, abs)
		}
	}
	return c
}
